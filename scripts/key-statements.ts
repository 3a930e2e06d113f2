// The SQL that `npm run keys` and `npm run dev` send through `wrangler d1 execute --command`,
// which binds no parameters: values become SQL literals here, and only here. Node-free, so the
// tests run these very statements in workerd (test/keys.test.ts, test/dev-seed.test.ts).
import { KEY_COLUMNS, type ListedKey, ROTATION_ROOT, toListedKey } from "../src/db/listed-keys.ts";
import type { Scope } from "../src/scopes.ts";
import { formatScopes, SCOPES } from "../src/scopes.ts";

/** A SQL string literal. */
export function sqlString(value: string): string {
  if (value.includes("\u0000")) throw new Error("NUL is not allowed in SQL text");
  return `'${value.replaceAll("'", "''")}'`;
}

/** An integer (unix seconds, ids) as a SQL literal, or NULL. */
const sqlInteger = (value: number | null) => (value === null ? "NULL" : String(Math.trunc(value)));

/** "Now": the given unix seconds, or the database's clock, so a lifetime counts from storing. */
const sqlNow = (now: number | undefined) => (now === undefined ? "unixepoch()" : sqlInteger(now));

/** An expiry: absolute unix seconds, or `expiresInSeconds` after `now`; NULL for none. */
function sqlExpiry(
  now: string,
  expiry: { expiresAt?: number | null; expiresInSeconds?: number | null },
) {
  if (expiry.expiresInSeconds != null) return `${now} + ${sqlInteger(expiry.expiresInSeconds)}`;
  return sqlInteger(expiry.expiresAt ?? null);
}

/** Stores a new key's hash; returns its row. Unix seconds; no scopes means every scope. */
export function createKeyStatement(key: {
  keyHash: string;
  prefix: string;
  label: string;
  now?: number;
  scopes?: readonly Scope[];
  expiresAt?: number | null;
  expiresInSeconds?: number | null;
}): string {
  const scopes = formatScopes(key.scopes?.length ? key.scopes : SCOPES);
  const now = sqlNow(key.now);
  return `INSERT INTO api_keys (key_hash, prefix, label, scopes, created_at, expires_at)
     VALUES (${sqlString(key.keyHash)}, ${sqlString(key.prefix)}, ${sqlString(key.label)}, ${sqlString(scopes)}, ${now}, ${sqlExpiry(now, key)})
     RETURNING ${KEY_COLUMNS}`;
}

/** Every key with the account that made it on the developer platform (NULL: the operator). */
export const LIST_KEYS_STATEMENT = `SELECT ${KEY_COLUMNS}, account_id FROM api_keys ORDER BY id`;

/** Revokes an active key; returns its id, or no row when there was no active key with that id. */
export function revokeKeyStatement(id: number, now: number): string {
  return `UPDATE api_keys SET revoked_at = ${sqlInteger(now)} WHERE id = ${sqlInteger(id)} AND revoked_at IS NULL RETURNING id`;
}

/**
 * Rotation, one batch: a new key like the old one (label, scopes, audience, owner: docs/keys.md)
 * if the old is active, responding to it; then the old one expires `graceSeconds` after `now` and
 * names the new one as its successor (`replaced_by`).
 */
export function rotateKeyStatements(rotation: {
  oldId: number;
  keyHash: string;
  prefix: string;
  now?: number;
  graceSeconds: number;
  expiresAt?: number | null;
  expiresInSeconds?: number | null;
}): [insertNew: string, expireOld: string] {
  const now = sqlNow(rotation.now);
  const oldId = sqlInteger(rotation.oldId);
  const until = `(${now} + ${sqlInteger(rotation.graceSeconds)})`;
  return [
    `INSERT INTO api_keys (key_hash, prefix, label, scopes, audience, created_at, expires_at, account_id, rotation_root_id)
     SELECT ${sqlString(rotation.keyHash)}, ${sqlString(rotation.prefix)}, label, scopes, audience, ${now}, ${sqlExpiry(now, rotation)}, account_id, ${ROTATION_ROOT}
     FROM api_keys
     WHERE id = ${oldId} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})
     RETURNING ${KEY_COLUMNS}`,
    `UPDATE api_keys SET expires_at = min(coalesce(expires_at, ${until}), ${until}),
       replaced_by = (SELECT id FROM api_keys WHERE key_hash = ${sqlString(rotation.keyHash)})
     WHERE id = ${oldId} AND EXISTS (SELECT 1 FROM api_keys WHERE key_hash = ${sqlString(rotation.keyHash)})
     RETURNING ${KEY_COLUMNS}`,
  ];
}

/** Seeds (or restores) the local development key with every scope and no expiry (scripts/dev.ts). */
export function seedLocalDevKeyStatement(keyHash: string): string {
  const scopes = sqlString(formatScopes(SCOPES));
  return `INSERT INTO api_keys (key_hash, prefix, label, scopes, created_at)
     VALUES (${sqlString(keyHash)}, 'local-dev', 'local development key (local only)', ${scopes}, unixepoch())
     ON CONFLICT (key_hash) DO UPDATE SET revoked_at = NULL, expires_at = NULL, scopes = ${scopes}`;
}

/**
 * A few demo pets, only into a database that has no pet yet (so a second `npm run dev` adds
 * none): enough available ones for `GET /v1/pets?limit=2&status=available` to have a next
 * page. Responses the pets it added. Local database only: see scripts/dev.ts.
 */
export const SEED_DEMO_PETS_STATEMENT = `INSERT INTO pets (name, category_id, status, created_at)
     SELECT column1, column2, column3, unixepoch()
     FROM (VALUES ('Rex', 1, 'available'), ('Mittens', 2, 'available'), ('Bubbles', 3, 'available'),
                  ('Polly', 4, 'pending'), ('Nibbles', 5, 'available'), ('Shadow', 2, 'sold'))
     WHERE NOT EXISTS (SELECT 1 FROM pets)
     RETURNING id`;

/** A key as `npm run keys -- list` shows it: with its account, or `operator` for the operator's. */
export interface OwnedKey extends ListedKey {
  account: string;
}

/** Maps a row of LIST_KEYS_STATEMENT to its listed form. */
export function toOwnedKey(row: Record<string, unknown>): OwnedKey {
  const account = typeof row.account_id === "string" ? row.account_id : "operator";
  return { ...toListedKey(row), account };
}
