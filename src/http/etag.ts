// Entity tags, If-None-Match and If-Match (RFC 9110 sections 8.8.3, 13.1.1 and 13.1.2).
import { createMiddleware } from "hono/factory";
import { IF_MATCH_MAX_LENGTH } from "../config.ts";
import { base64url } from "../encoding.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./types.ts";

export const IF_MATCH = "If-Match";

/** A strong entity tag (RFC 9110 8.8.3): an opaque string in double quotes. */
const STRONG_TAG = /^"[\x21\x23-\x7E\x80-\xFF]*"$/;

export const isEntityTag = (value: string) => STRONG_TAG.test(value);

/** The header of every response that has one (entityTag's, or the asset store's), documented. */
export const ETAG = {
  description:
    "A strong entity tag computed from the body: equal bodies have equal tags. Send it back in `If-None-Match` to get 304 while the response is unchanged.",
  schema: { type: "string", maxLength: 256, pattern: '^"[!#-~]*"$' },
  required: true,
};

/** A strong entity tag computed from the body: equal bodies, equal tags. */
export async function entityTag(body: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
  return `"${base64url(digest.slice(0, 16))}"`;
}

/** `"x"` or `W/"x"`, as listed in an If-None-Match field. */
const ENTITY_TAG = /^(?:W\/)?("[\x21\x23-\x7E\x80-\xFF]*")$/;

/**
 * Whether an If-None-Match field value matches the current tag, by the weak
 * comparison that RFC 9110 prescribes for it: `W/"x"` matches `"x"`; `*` matches any
 * current representation; a comma-separated list matches when one member does.
 * Members that are not entity tags are ignored.
 */
export function ifNoneMatchMatches(fieldValue: string | undefined, currentTag: string): boolean {
  if (fieldValue === undefined) return false;
  const current = ENTITY_TAG.exec(currentTag)?.[1];
  for (const member of fieldValue.split(",")) {
    const trimmed = member.trim();
    if (trimmed === "*") return true;
    const opaque = ENTITY_TAG.exec(trimmed)?.[1];
    if (opaque !== undefined && opaque === current) return true;
  }
  return false;
}

/**
 * The tags of an If-Match field: undefined for none or `*` (any current pet), else the
 * listed tags, compared strongly (RFC 9110 13.1.1: a weak tag never matches). A field that
 * is not `*` or a list of entity tags, or is too long, is 400.
 */
function ifMatchTags(field: string | undefined): string[] | undefined {
  if (field === undefined || field.trim() === "*") return undefined;
  const members = field.split(",").map((m) => m.trim());
  const refuse = (problem: string) =>
    new ApiError("invalid_parameter", `Header "${IF_MATCH}" ${problem}.`, {
      details: [{ field: IF_MATCH, message: problem }],
    });
  if (field.length > IF_MATCH_MAX_LENGTH) {
    throw refuse(`must be at most ${IF_MATCH_MAX_LENGTH} characters`);
  }
  if (!members.every((m) => ENTITY_TAG.test(m))) {
    throw refuse('must be "*" or a comma-separated list of entity tags (an ETag of the pet)');
  }
  return members.filter((m) => !m.startsWith("W/"));
}

/** A pet's ETag on the responses that show one pet (its row's tag: src/db/pets.ts). */
export const PET_ETAG = {
  description:
    "The animal's strong entity tag: equal animals, equal tags; any change changes it. For `If-Match`.",
  schema: { type: "string", maxLength: 256, pattern: '^"[!#-~]*"$' },
  required: true,
};

/** Middleware of an operation that takes If-Match: its tags in `c.get("ifMatch")`. */
export const ifMatch = createMiddleware<AppEnv>(async (c, next) => {
  c.set("ifMatch", ifMatchTags(c.req.header(IF_MATCH)));
  await next();
});
