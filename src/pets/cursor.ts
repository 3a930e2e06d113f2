// Keyset cursors for GET /v1/pets: `c1.<last id>.<status>.<MAC>` in base64url, one spelling
// each, tamper-evident under CURSOR_SECRET (docs/design.md "Pages and cursors").

import { type BoundedMap, boundedMap } from "../cache/bounded-map.ts";
import { CURSOR_MAX_LENGTH, MAX_ID } from "../config.ts";
import { base64url, fromBase64url, hmacBase64url, sameMac } from "../encoding.ts";
import { ApiError } from "../errors.ts";
import type { PetStatus } from "./schemas.ts";

/**
 * The cursor secret of local development and the tests (ENVIRONMENT "local") when no
 * CURSOR_SECRET is set. Public on purpose: locally, cursors protect nothing. Staging and
 * production have their own (`wrangler secret put CURSOR_SECRET --env ...`); wrangler
 * refuses to deploy without it.
 */
export const LOCAL_CURSOR_SECRET = "local-only cursor secret; not a credential";

/** The secret cursors are made with: CURSOR_SECRET, locally the public one. */
export function cursorSecret(env: { ENVIRONMENT?: string; CURSOR_SECRET?: string }): string {
  if (env.CURSOR_SECRET) return env.CURSOR_SECRET;
  if (env.ENVIRONMENT === "local") return LOCAL_CURSOR_SECRET;
  // A deployment wrangler refuses to make: a 500 (and its log line), never a forgeable cursor.
  throw new Error("CURSOR_SECRET is not set: npx wrangler secret put CURSOR_SECRET --env <name>");
}

const VERSION = "c1";
const MAC_BYTES = 16;
const encoder = new TextEncoder();

/** What this isolate made last for a payload, with the secret it made it with. */
interface Made {
  secret: string;
  made: Promise<string>;
}

/**
 * Cached by payload (a short key, nothing to join for each lookup) and checked against the
 * secret: what another secret made is made again.
 */
function cachedOr(
  cache: BoundedMap<string, Made>,
  secret: string,
  payload: string,
  make: () => Promise<string>,
): Promise<string> {
  const found = cache.get(payload);
  if (found?.secret === secret) return found.made;
  const made = make();
  cache.set(payload, { secret, made });
  return made;
}

/**
 * The MACs of the payloads this isolate signed or checked last: the same few cursors (the
 * next page of each first page) are made on most requests.
 */
const macs = boundedMap<string, Made>(1_000);

const macOf = (secret: string, payload: string) =>
  cachedOr(macs, secret, payload, () => hmacBase64url(secret, payload, MAC_BYTES));

/**
 * The cursors this isolate made last, whole: the next page of a first page is the same cursor
 * on most requests, so its text is not encoded again each time.
 */
const cursors = boundedMap<string, Made>(1_000);

export function encodeCursor(
  afterId: number,
  status: PetStatus | undefined,
  secret: string,
): Promise<string> {
  const payload = `${VERSION}.${afterId}.${status ?? ""}`;
  return cachedOr(cursors, secret, payload, () =>
    macOf(secret, payload).then((mac) => base64url(encoder.encode(`${payload}.${mac}`))),
  );
}

/** Returns the id after which the page starts; throws `invalid_cursor` otherwise. */
export async function decodeCursor(
  cursor: string,
  status: PetStatus | undefined,
  secret: string,
): Promise<number> {
  const invalid = (why: string) =>
    new ApiError("invalid_cursor", `Query parameter "cursor" ${why}.`);
  const text = cursor.length <= CURSOR_MAX_LENGTH ? fromBase64url(cursor) : undefined;
  // One spelling: base64url whose unused trailing bits are not zero decodes too.
  const canonical = text !== undefined && base64url(encoder.encode(text)) === cursor;
  const parts = canonical ? text.split(".") : [];
  if (parts.length !== 4) throw invalid("is not a cursor issued by this service");
  const [version, after, cursorStatus, mac] = parts as [string, string, string, string];
  const payload = `${version}.${after}.${cursorStatus}`;
  if (!sameMac(mac, await macOf(secret, payload))) {
    throw invalid("is not a cursor issued by this service");
  }
  // Defence in depth: only cursors this service made get here, but never trust shape.
  if (version !== VERSION || !/^(0|[1-9][0-9]*)$/.test(after) || Number(after) > MAX_ID) {
    throw invalid("is malformed");
  }
  if (cursorStatus !== (status ?? "")) {
    throw invalid(
      `was issued for ${cursorStatus ? `status=${cursorStatus}` : "no status filter"}, not for ${status ? `status=${status}` : "no status filter"}`,
    );
  }
  return Number(after);
}
