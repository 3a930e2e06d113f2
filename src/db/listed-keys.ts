// A key as every program lists it (the CLI, the platform, the tests): its columns, its row
// mapped, and the key id a person types. No SQL is run here.
import { isoTime } from "../clock.ts";
import type { Scope } from "../scopes.ts";
import { parseScopes } from "../scopes.ts";

/** A key id as typed by a person: digits only, so it can be written into SQL. */
export function parseKeyId(text: string | undefined): number | undefined {
  return text !== undefined && /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : undefined;
}

/** The columns every statement that responds to keys returns, for `toListedKey`. */
export const KEY_COLUMNS =
  "id, prefix, label, scopes, created_at, expires_at, last_used_at, revoked_at";

/** In a rotation's INSERT ... SELECT from the old key: the first key of the new key's chain. */
export const ROTATION_ROOT = "coalesce(rotation_root_id, id)";

export interface ListedKey {
  id: number;
  prefix: string;
  label: string;
  scopes: Scope[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Maps a row of KEY_COLUMNS to its listed form. */
export function toListedKey(row: Record<string, unknown>): ListedKey {
  return {
    id: Number(row.id),
    prefix: String(row.prefix),
    label: String(row.label),
    scopes: parseScopes(String(row.scopes ?? "")),
    createdAt: isoTime(row.created_at as number),
    expiresAt: isoTime(row.expires_at as number | null),
    lastUsedAt: isoTime(row.last_used_at as number | null),
    revokedAt: isoTime(row.revoked_at as number | null),
  };
}
