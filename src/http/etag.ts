// Entity tags and If-None-Match (RFC 9110 sections 8.8.3 and 13.1.2).
import { base64url } from "../encoding.ts";

/** What entityTag makes: 128 bits of SHA-256, base64url, quoted (22 characters). */
export const ETAG_FORMAT = /^"[A-Za-z0-9_-]{22}"$/;

/** The header of every answer that has one (entityTag's, or the asset store's), documented. */
export const ETAG = {
  description:
    "A strong entity tag computed from the body: equal bodies have equal tags. Send it back in `If-None-Match` to get 304 while the answer is unchanged.",
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
