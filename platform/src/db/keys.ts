// An account's API keys and their usage. Keys are the API's ordinary keys (api_keys),
// with the owning account in account_id; every query is bound to the account, so an id
// of another account's key finds nothing, exactly like an id that does not exist.
import type { ListedKey } from "../../../scripts/key-statements.ts";
import { KEY_COLUMNS, toListedKey } from "../../../scripts/key-statements.ts";
import { type KeyAudience, OUTCOMES, type Outcome } from "../../../src/db/api-keys.ts";
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import type { Scope } from "../../../src/scopes.ts";
import { formatScopes } from "../../../src/scopes.ts";
import { MAX_ACTIVE_KEYS, USAGE_DAYS } from "../config.ts";

export type { ListedKey, Outcome };
/** The outcome classes the API counts (src/db/api-keys.ts), in the order pages show them. */
export { OUTCOMES };

/** The SQL condition "the account's key is active at ?now": neither revoked nor expired. */
const ACTIVE = "account_id = ?1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)";

export interface IssuedKey {
  keyHash: string;
  prefix: string;
}

/** Whether a listed key is active at `nowMs`: neither revoked nor expired (as ACTIVE says). */
export function isActiveKey(key: ListedKey, nowMs: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > nowMs);
}

async function rows(statement: D1PreparedStatement): Promise<ListedKey[]> {
  const { results } = await d1(() => statement.all<Record<string, unknown>>());
  return results.map(toListedKey);
}

/**
 * Stores a new key of the account, unless it already has MAX_ACTIVE_KEYS active ones:
 * the count and the insert are one statement, so concurrent creates cannot pass it.
 * Null when the account is at the limit.
 */
export async function createAccountKey(
  db: Queryable,
  key: IssuedKey & {
    accountId: string;
    label: string;
    scopes: readonly Scope[];
    now: number;
    expiresAt: number | null;
    /** "/mcp" for a key granted to an MCP client (docs/keys.md, "Audience"). */
    audience?: KeyAudience;
  },
): Promise<ListedKey | null> {
  const [created] = await rows(
    db
      .prepare(
        `INSERT INTO api_keys (account_id, key_hash, prefix, label, scopes, created_at, expires_at, audience)
         SELECT ?1, ?3, ?4, ?5, ?6, ?2, ?7, ?8
         WHERE (SELECT count(*) FROM api_keys WHERE ${ACTIVE}) < ${MAX_ACTIVE_KEYS}
         RETURNING ${KEY_COLUMNS}`,
      )
      .bind(
        key.accountId,
        key.now,
        key.keyHash,
        key.prefix,
        key.label,
        formatScopes(key.scopes),
        key.expiresAt,
        key.audience ?? null,
      ),
  );
  return created ?? null;
}

export function listAccountKeys(db: Queryable, accountId: string): Promise<ListedKey[]> {
  return rows(
    db
      .prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ?1 ORDER BY id DESC`)
      .bind(accountId),
  );
}

export async function findAccountKey(
  db: Queryable,
  accountId: string,
  id: number,
): Promise<ListedKey | null> {
  const [key] = await rows(
    db
      .prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?2 AND account_id = ?1`)
      .bind(accountId, id),
  );
  return key ?? null;
}

export async function countActiveKeys(db: Queryable, accountId: string, now: number) {
  const row = await d1(() =>
    db
      .prepare(`SELECT count(*) AS n FROM api_keys WHERE ${ACTIVE}`)
      .bind(accountId, now)
      .first<{ n: number }>(),
  );
  return row?.n ?? 0;
}

/**
 * Rotation, as `npm run keys -- rotate` does it (docs/keys.md), in one transaction:
 * 1. a new key with the old key's label, scopes and audience (no expiry), only if the old key is
 *    the account's and active, and the account stays within MAX_ACTIVE_KEYS active keys
 *    (the old key does not count when its grace is 0: it ends at once);
 * 2. the old key then expires `graceSeconds` after now, or keeps an earlier expiry.
 * Answers the new and the old key, or null when step 1 stored nothing.
 */
export async function rotateAccountKey(
  db: Queryable,
  rotation: IssuedKey & { accountId: string; oldId: number; now: number; graceSeconds: number },
): Promise<{ created: ListedKey; previous: ListedKey } | null> {
  const { accountId, oldId, now, graceSeconds } = rotation;
  const results = await d1(() =>
    db.batch<Record<string, unknown>>([
      db
        .prepare(
          `INSERT INTO api_keys (account_id, key_hash, prefix, label, scopes, audience, created_at)
           SELECT account_id, ?3, ?4, label, scopes, audience, ?2 FROM api_keys
           WHERE id = ?5 AND ${ACTIVE}
             AND (SELECT count(*) FROM api_keys WHERE ${ACTIVE} AND (id <> ?5 OR ?6 > 0)) < ${MAX_ACTIVE_KEYS}
           RETURNING ${KEY_COLUMNS}`,
        )
        .bind(accountId, now, rotation.keyHash, rotation.prefix, oldId, graceSeconds),
      db
        .prepare(
          `UPDATE api_keys SET expires_at = min(coalesce(expires_at, ?2 + ?3), ?2 + ?3)
           WHERE id = ?4 AND account_id = ?1 AND EXISTS (SELECT 1 FROM api_keys WHERE key_hash = ?5)
           RETURNING ${KEY_COLUMNS}`,
        )
        .bind(accountId, now, graceSeconds, oldId, rotation.keyHash),
    ]),
  );
  const created = results[0]?.results[0];
  const previous = results[1]?.results[0];
  return created && previous
    ? { created: toListedKey(created), previous: toListedKey(previous) }
    : null;
}

/** Revokes the account's key (a revoked key stays revoked at its first instant). */
export async function revokeAccountKey(
  db: Queryable,
  accountId: string,
  id: number,
  now: number,
): Promise<ListedKey | null> {
  const [key] = await rows(
    db
      .prepare(
        `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?3) WHERE id = ?2 AND account_id = ?1
         RETURNING ${KEY_COLUMNS}`,
      )
      .bind(accountId, id, now),
  );
  return key ?? null;
}

/** Answers of one UTC day (`date`: YYYY-MM-DD) by outcome. */
export type DailyUsage = { date: string } & Record<Outcome, number>;

export interface KeyUsage {
  /** One row per UTC day of the last USAGE_DAYS days, today last, zeros included. */
  days: DailyUsage[];
  totals: Record<Outcome, number>;
}

/** The key's answers in the USAGE_DAYS UTC days that end with today (`now`: unix seconds). */
export async function keyUsage(db: Queryable, keyId: number, now: number): Promise<KeyUsage> {
  const days = await dailyUsage(
    db,
    keyId,
    (Math.floor(now / 86400) - (USAGE_DAYS - 1)) * 86400,
    USAGE_DAYS,
  );
  const totals = Object.fromEntries(
    OUTCOMES.map((o) => [o, days.reduce((sum, day) => sum + day[o], 0)]),
  ) as Record<Outcome, number>;
  return { days, totals };
}

/** The key's answers per UTC day from `fromDay` (a UTC midnight) for `days` days. */
async function dailyUsage(
  db: Queryable,
  keyId: number,
  fromDay: number,
  days: number,
): Promise<DailyUsage[]> {
  const { results } = await d1(() =>
    db
      .prepare(
        `SELECT CAST((hour_start - ?2) / 86400 AS INTEGER) AS day, outcome, sum(count) AS n FROM api_key_usage
         WHERE api_key_id = ?1 AND hour_start >= ?2 AND hour_start < ?2 + ?3 * 86400
         GROUP BY day, outcome`,
      )
      .bind(keyId, fromDay, days)
      .all<{ day: number; outcome: Outcome; n: number }>(),
  );
  const table: DailyUsage[] = Array.from({ length: days }, (_, day) => ({
    date: new Date((fromDay + day * 86400) * 1000).toISOString().slice(0, 10),
    success: 0,
    client_error: 0,
    rate_limited: 0,
    server_error: 0,
  }));
  for (const { day, outcome, n } of results) {
    const row = table[day];
    if (row && OUTCOMES.includes(outcome)) row[outcome] += n;
  }
  return table;
}
