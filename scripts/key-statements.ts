// The SQL that `npm run keys` and `npm run dev` send through `wrangler d1 execute
// --command`, which cannot bind parameters: values are written as SQL literals here,
// and only here. Free of Node APIs, so the tests run these very statements in workerd
// (test/keys.test.ts) against the D1 built from migrations/.

/** A SQL string literal. */
export function sqlString(value: string): string {
  if (value.includes("\u0000")) throw new Error("NUL is not allowed in SQL text");
  return `'${value.replaceAll("'", "''")}'`;
}

/** A key id as typed by a person: digits only, so it can be written into SQL. */
export function parseKeyId(text: string | undefined): number | undefined {
  return text !== undefined && /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : undefined;
}

/** Stores a new key's hash; answers its id. `now` in unix seconds. */
export function createKeyStatement(key: {
  keyHash: string;
  prefix: string;
  label: string;
  now: number;
}): string {
  return `INSERT INTO api_keys (key_hash, prefix, label, created_at)
     VALUES (${sqlString(key.keyHash)}, ${sqlString(key.prefix)}, ${sqlString(key.label)}, ${Math.trunc(key.now)})
     RETURNING id`;
}

export const LIST_KEYS_STATEMENT =
  "SELECT id, prefix, label, created_at, revoked_at FROM api_keys ORDER BY id";

/** Revokes an active key; answers its id, or no row when there was no active key with that id. */
export function revokeKeyStatement(id: number, now: number): string {
  return `UPDATE api_keys SET revoked_at = ${Math.trunc(now)} WHERE id = ${Math.trunc(id)} AND revoked_at IS NULL RETURNING id`;
}

/** Seeds (or un-revokes) the local development key. Local database only: see scripts/dev.ts. */
export function seedLocalDevKeyStatement(keyHash: string): string {
  return `INSERT INTO api_keys (key_hash, prefix, label, created_at)
     VALUES (${sqlString(keyHash)}, 'local-dev', 'local development key (local only)', unixepoch())
     ON CONFLICT (key_hash) DO UPDATE SET revoked_at = NULL`;
}
