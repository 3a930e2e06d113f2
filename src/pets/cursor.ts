// Keyset cursors for GET /v1/pets: opaque to clients, tamper-evident.
// A cursor carries the last id of the previous page and the status filter it was
// issued for, plus a SHA-256 checksum over both. It holds nothing secret (every
// key sees every pet); the checksum makes an altered, hand-made or re-filtered
// cursor detectable, so it is refused instead of silently paging elsewhere.
import { MAX_ID } from "../config.ts";
import { base64url, fromBase64url, sha256 } from "../encoding.ts";
import { ApiError } from "../errors.ts";
import type { PetStatus } from "./schemas.ts";
import { PET_STATUSES } from "./schemas.ts";

const VERSION = "c1";
const CHECKSUM_BYTES = 12;
const encoder = new TextEncoder();

async function checksum(payload: string): Promise<string> {
  return base64url((await sha256(`petstore-cursor|${payload}`)).slice(0, CHECKSUM_BYTES));
}

export async function encodeCursor(
  afterId: number,
  status: PetStatus | undefined,
): Promise<string> {
  const payload = `${VERSION}.${afterId}.${status ?? ""}`;
  return base64url(encoder.encode(`${payload}.${await checksum(payload)}`));
}

/** Returns the id after which the page starts; throws `invalid_cursor` otherwise. */
export async function decodeCursor(cursor: string, status: PetStatus | undefined): Promise<number> {
  const invalid = (why: string) =>
    new ApiError("invalid_cursor", `Query parameter "cursor" ${why}.`);
  const text = cursor.length <= 200 ? fromBase64url(cursor) : undefined;
  const parts = text?.split(".");
  if (parts?.length !== 4) throw invalid("is not a cursor issued by this service");
  const [version, after, cursorStatus, sum] = parts as [string, string, string, string];
  const payload = `${version}.${after}.${cursorStatus}`;
  if (version !== VERSION || sum !== (await checksum(payload))) {
    throw invalid("is not a cursor issued by this service");
  }
  if (cursorStatus !== (status ?? "")) {
    throw invalid(
      `was issued for ${cursorStatus ? `status=${cursorStatus}` : "no status filter"}, not for ${status ? `status=${status}` : "no status filter"}`,
    );
  }
  const afterId = Number(after);
  // Defence in depth: only cursors we minted pass the checksum, but never trust shape.
  if (!/^(0|[1-9][0-9]*)$/.test(after) || afterId > MAX_ID) throw invalid("is malformed");
  if (cursorStatus && !(PET_STATUSES as readonly string[]).includes(cursorStatus)) {
    throw invalid("is malformed");
  }
  return afterId;
}
