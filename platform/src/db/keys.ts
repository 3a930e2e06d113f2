// An account's API keys and their usage. Keys are the API's ordinary keys (api_keys),
// with the owning account in account_id; every query is bound to the account, so an id
// of another account's key finds nothing, exactly like an id that does not exist.
import { type KeyAudience, OUTCOMES, type Outcome, outcomeOf } from "../../../src/db/api-keys.ts";
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import type { ListedKey as BaseListedKey } from "../../../src/db/listed-keys.ts";
import { KEY_COLUMNS, ROTATION_ROOT, toListedKey } from "../../../src/db/listed-keys.ts";
import type { Scope } from "../../../src/scopes.ts";
import { formatScopes } from "../../../src/scopes.ts";
import { MAX_ACTIVE_KEYS, MAX_KEY_CHANGES_PER_HOUR, USAGE_DAYS, USAGE_HOURS } from "../config.ts";

export type { Outcome };

/**
 * A key of an account as the platform lists it: with the key a rotation replaced it by, and
 * where the API takes it ("/mcp" for a key granted to an MCP client; null: everywhere).
 */
export type ListedKey = BaseListedKey & { replacedBy: number | null; audience: KeyAudience };

/** The columns of a listed key (KEY_COLUMNS), its successor and its audience. */
const COLUMNS = `${KEY_COLUMNS}, replaced_by, audience`;

function toAccountKey(row: Record<string, unknown>): ListedKey {
  const replacedBy = row.replaced_by;
  return {
    ...toListedKey(row),
    replacedBy: replacedBy == null ? null : Number(replacedBy),
    audience: row.audience === "/mcp" ? "/mcp" : null,
  };
}

/** The outcome classes the API counts (src/db/api-keys.ts), in the order pages show them. */
export { OUTCOMES };

/** The SQL condition "the key is active at ?2": neither revoked nor expired. */
const LIVE = "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)";
/** The SQL condition "the account's (?1) key is active at ?2". */
const ACTIVE = `account_id = ?1 AND ${LIVE}`;
/** The account's keys made (created or rotated) in the hour before ?2: the index's range. */
const MADE_IN_HOUR = "FROM api_keys WHERE account_id = ?1 AND created_at > ?2 - 3600";
/** The SQL condition "the account (?1) may make another key at ?2 this hour". */
const HOURLY_ROOM = `(SELECT count(*) ${MADE_IN_HOUR}) < ${MAX_KEY_CHANGES_PER_HOUR}`;

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
  return results.map(toAccountKey);
}

/**
 * Stores a new key of the account, unless it already has MAX_ACTIVE_KEYS active ones or
 * made MAX_KEY_CHANGES_PER_HOUR in the last hour: the counts and the insert are one
 * statement, so concurrent creates cannot pass them. Null when the account is at a limit.
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
         WHERE (SELECT count(*) FROM api_keys WHERE ${ACTIVE}) < ${MAX_ACTIVE_KEYS} AND ${HOURLY_ROOM}
         RETURNING ${COLUMNS}`,
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

/** Which of an account's keys a list shows: active ones, ended ones (revoked or expired), all. */
type KeyFilter = "active" | "ended" | "all";
const FILTERS: Record<KeyFilter, string> = { active: LIVE, ended: `NOT (${LIVE})`, all: "1" };

/** Where a page of keys starts: below a key id (older keys), above one (newer), or the newest. */
export type KeysCursor = { before: number } | { after: number } | undefined;

interface KeysPageQuery {
  cursor: KeysCursor;
  limit: number;
  /** Default "all". */
  filter?: KeyFilter;
  /** Unix seconds: what "active" means. */
  now: number;
}

/**
 * The one statement of a page of the account's keys, newest first, for `GET /api/keys` and
 * the keys page: at most `limit + 1` of the filter's keys on the cursor's side, each with its
 * successor's prefix. Keyset on the indexes (account_id, id), and for active keys the one of
 * unrevoked keys (migration 0015): a page reads no more rows at any depth.
 */
function keysPageStatement(db: Queryable, accountId: string, query: KeysPageQuery) {
  const newer = query.cursor !== undefined && "after" in query.cursor;
  const from = query.cursor === undefined ? undefined : Object.values(query.cursor)[0];
  return db
    .prepare(
      `SELECT ${COLUMNS}, (SELECT s.prefix FROM api_keys AS s WHERE s.id = api_keys.replaced_by AND s.account_id = ?1) AS successor_prefix
       FROM api_keys WHERE account_id = ?1 AND ${FILTERS[query.filter ?? "all"]} AND id ${newer ? ">" : "<"} ?3
       ORDER BY id ${newer ? "ASC" : "DESC"} LIMIT ?4`,
    )
    .bind(accountId, query.now, from ?? Number.MAX_SAFE_INTEGER, query.limit + 1);
}

/** A listed key and, when a rotation replaced it, its successor's prefix. */
type PagedKey = ListedKey & { successorPrefix: string | null };

/** The page's keys newest first, and whether more follow on the cursor's side. */
function keysOfPage(rows: Array<Record<string, unknown>>, query: KeysPageQuery) {
  const keys: PagedKey[] = rows.slice(0, query.limit).map((row) => ({
    ...toAccountKey(row),
    successorPrefix: row.successor_prefix == null ? null : String(row.successor_prefix),
  }));
  const newer = query.cursor !== undefined && "after" in query.cursor;
  return { keys: newer ? keys.reverse() : keys, more: rows.length > query.limit };
}

/** A page of the account's keys (`GET /api/keys`), and whether older ones follow. */
export async function pageAccountKeys(
  db: Queryable,
  accountId: string,
  query: KeysPageQuery & { cursor: { before: number } | undefined },
): Promise<{ keys: ListedKey[]; more: boolean }> {
  const { results } = await d1(() =>
    keysPageStatement(db, accountId, query).all<Record<string, unknown>>(),
  );
  const { keys, more } = keysOfPage(results, query);
  return { keys: keys.map(({ successorPrefix: _, ...key }) => key), more };
}

interface KeysPage {
  keys: PagedKey[];
  /** Whether the filter has keys older than the last shown, and newer than the first. */
  older: boolean;
  newer: boolean;
  /** The account's active and ended keys. */
  active: number;
  ended: number;
}

/**
 * A page of the account's keys for the keys page, in one batch (one round trip): the page's
 * statement, and the account's counts with whether the filter has keys past the cursor
 * (each from an index: the counts without reading the ended keys' rows).
 */
export async function keysPage(
  db: Queryable,
  accountId: string,
  query: KeysPageQuery,
): Promise<KeysPage> {
  const after = query.cursor !== undefined && "after" in query.cursor;
  const from = query.cursor === undefined ? undefined : Object.values(query.cursor)[0];
  const [page, summary] = await d1(() =>
    db.batch<Record<string, unknown>>([
      keysPageStatement(db, accountId, query),
      db
        .prepare(
          `SELECT (SELECT count(*) FROM api_keys WHERE account_id = ?1) AS total,
             (SELECT count(*) FROM api_keys WHERE ${ACTIVE}) AS active,
             EXISTS (SELECT 1 FROM api_keys WHERE account_id = ?1 AND ${FILTERS[query.filter ?? "all"]}
               AND id ${after ? "<=" : ">="} ?3) AS beyond`,
        )
        .bind(accountId, query.now, from ?? Number.MAX_SAFE_INTEGER),
    ]),
  );
  const { keys, more } = keysOfPage(page?.results ?? [], query);
  const counts = summary?.results[0] ?? {};
  const [total, active, beyond] = [counts.total, counts.active, counts.beyond].map(Number);
  return {
    keys,
    older: after ? beyond === 1 : more,
    newer: after ? more : beyond === 1,
    active: active ?? 0,
    ended: (total ?? 0) - (active ?? 0),
  };
}

export async function findAccountKey(
  db: Queryable,
  accountId: string,
  id: number,
): Promise<ListedKey | null> {
  const [key] = await rows(
    db
      .prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?2 AND account_id = ?1`)
      .bind(accountId, id),
  );
  return key ?? null;
}

/**
 * When the account may make its next key, if the hourly limit holds it now (unix seconds):
 * an hour after the oldest of the last MAX_KEY_CHANGES_PER_HOUR keys it made; null when it may.
 */
export async function nextKeyChangeAt(db: Queryable, accountId: string, now: number) {
  const row = await d1(() =>
    db
      .prepare(`SELECT count(*) AS n, min(created_at) AS oldest ${MADE_IN_HOUR}`)
      .bind(accountId, now)
      .first<{ n: number; oldest: number | null }>(),
  );
  return row && row.n >= MAX_KEY_CHANGES_PER_HOUR && row.oldest !== null ? row.oldest + 3600 : null;
}

/** How many active keys the account holds at `now`. */
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
 * 1. a new key with the old key's label, scopes and audience (no expiry), only if the old key
 *    is the account's, active and not replaced already, and the account stays within
 *    MAX_ACTIVE_KEYS active keys (the old key does not count when its grace is 0: it ends
 *    at once) and within MAX_KEY_CHANGES_PER_HOUR keys made in the last hour;
 * 2. the old key then expires `graceSeconds` after now, or keeps an earlier expiry, and
 *    names the new key as its successor.
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
          `INSERT INTO api_keys (account_id, key_hash, prefix, label, scopes, audience, created_at, rotation_root_id)
           SELECT account_id, ?3, ?4, label, scopes, audience, ?2, ${ROTATION_ROOT} FROM api_keys
           WHERE id = ?5 AND ${ACTIVE} AND replaced_by IS NULL
             AND (SELECT count(*) FROM api_keys WHERE ${ACTIVE} AND (id <> ?5 OR ?6 > 0)) < ${MAX_ACTIVE_KEYS}
             AND ${HOURLY_ROOM}
           RETURNING ${COLUMNS}`,
        )
        .bind(accountId, now, rotation.keyHash, rotation.prefix, oldId, graceSeconds),
      db
        .prepare(
          `UPDATE api_keys SET expires_at = min(coalesce(expires_at, ?2 + ?3), ?2 + ?3),
             replaced_by = (SELECT id FROM api_keys WHERE key_hash = ?5)
           WHERE id = ?4 AND account_id = ?1 AND EXISTS (SELECT 1 FROM api_keys WHERE key_hash = ?5)
           RETURNING ${COLUMNS}`,
        )
        .bind(accountId, now, graceSeconds, oldId, rotation.keyHash),
    ]),
  );
  const created = results[0]?.results[0];
  const previous = results[1]?.results[0];
  return created && previous
    ? { created: toAccountKey(created), previous: toAccountKey(previous) }
    : null;
}

/** Gives the account's key a new label; null when the account has no such key. */
export async function relabelAccountKey(
  db: Queryable,
  accountId: string,
  id: number,
  label: string,
): Promise<ListedKey | null> {
  const [key] = await rows(
    db
      .prepare(
        `UPDATE api_keys SET label = ?3 WHERE id = ?2 AND account_id = ?1 RETURNING ${COLUMNS}`,
      )
      .bind(accountId, id, label),
  );
  return key ?? null;
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
         RETURNING ${COLUMNS}`,
      )
      .bind(accountId, id, now),
  );
  return key ?? null;
}

/** Answers by outcome class. */
export type ClassCounts = Record<Outcome, number>;
/** Answers of one UTC day (`date`: YYYY-MM-DD) by outcome class. */
export type DailyUsage = { date: string } & ClassCounts;
/** Answers of one UTC hour (`hour`: its first instant, ISO 8601) by outcome class. */
export type HourlyUsage = { hour: string } & ClassCounts;
/** Answers with one operation (its operationId; "" for no operation), status and Error code. */
export interface OperationUsage {
  operation: string;
  status: number;
  code: string;
  count: number;
}

export interface KeyUsage {
  /** When these figures were read (ISO 8601). */
  updatedAt: string;
  /** One row per UTC day of the last USAGE_DAYS days, today last, zeros included. */
  days: DailyUsage[];
  /** One row per hour of the last USAGE_HOURS hours, the current one last, zeros included. */
  hours: HourlyUsage[];
  /** The days' answers by class. */
  totals: ClassCounts;
  /** The days' answers by operation, status and code, the most first. */
  operations: OperationUsage[];
}

const zeros = (): ClassCounts => ({
  success: 0,
  client_error: 0,
  rate_limited: 0,
  server_error: 0,
});

/** `length` periods of `seconds` from `from`, each with the answers `rows` give it (`i`: its index). */
function periods<T>(
  rows: Array<{ i: number; status: number; n: number }>,
  length: number,
  name: (i: number) => T,
): Array<T & ClassCounts> {
  const table = Array.from({ length }, (_, i) => ({ ...name(i), ...zeros() }));
  for (const { i, status, n } of rows) {
    const row = table[i];
    if (row) row[outcomeOf(status)] += n;
  }
  return table;
}

/**
 * The key's answers in the USAGE_DAYS UTC days that end with today, and in the USAGE_HOURS
 * hours that end with this one (`now`: unix seconds): three grouped reads in one batch.
 */
export async function keyUsage(db: Queryable, keyId: number, now: number): Promise<KeyUsage> {
  const fromDay = (Math.floor(now / 86400) - (USAGE_DAYS - 1)) * 86400;
  const fromHour = (Math.floor(now / 3600) - (USAGE_HOURS - 1)) * 3600;
  const end = (Math.floor(now / 86400) + 1) * 86400;
  const per = (seconds: number, from: number) =>
    db
      .prepare(
        `SELECT CAST((hour_start - ?2) / ${seconds} AS INTEGER) AS i, status, sum(count) AS n FROM api_key_usage
         WHERE api_key_id = ?1 AND hour_start >= ?2 AND hour_start < ?3 GROUP BY i, status`,
      )
      .bind(keyId, from, end);
  type Row = { i: number; status: number; n: number } & Pick<OperationUsage, "operation" | "code">;
  const [byDay, byHour, byOperation] = await d1(() =>
    db.batch<Row>([
      per(86400, fromDay),
      per(3600, fromHour),
      db
        .prepare(
          `SELECT operation, status, code, sum(count) AS n FROM api_key_usage
           WHERE api_key_id = ?1 AND hour_start >= ?2 AND hour_start < ?3
           GROUP BY operation, status, code ORDER BY n DESC, operation, status, code`,
        )
        .bind(keyId, fromDay, end),
    ]),
  );
  const days = periods(byDay?.results ?? [], USAGE_DAYS, (i) => ({
    date: new Date((fromDay + i * 86400) * 1000).toISOString().slice(0, 10),
  }));
  const totals = zeros();
  for (const day of days) for (const o of OUTCOMES) totals[o] += day[o];
  return {
    updatedAt: new Date(now * 1000).toISOString(),
    days,
    hours: periods(byHour?.results ?? [], USAGE_HOURS, (i) => ({
      hour: new Date((fromHour + i * 3600) * 1000).toISOString(),
    })),
    totals,
    operations: (byOperation?.results ?? []).map(({ operation, status, code, n }) => ({
      operation,
      status,
      code,
      count: n,
    })),
  };
}
