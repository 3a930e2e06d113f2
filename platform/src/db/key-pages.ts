// A page of an account's keys, for `GET /api/keys` and the keys page: keyset on the indexes
// (account_id, id) and, for active keys, the one of unrevoked keys (migration 0015).
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import { ACTIVE, COLUMNS, LIVE, type ListedKey, toAccountKey } from "./keys.ts";

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

/** A page of the keys page: its keys, whether more follow each way, and the filters' counts. */
export interface KeysPage {
  /** Newest first, each with its successor's prefix when a rotation replaced it. */
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
