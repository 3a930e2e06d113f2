// An account's API keys. Keys are the API's ordinary keys (api_keys), with the owning account
// in account_id; every query is bound to the account, so an id of another account's key finds
// nothing, exactly like an id that does not exist.
import type { KeyAudience } from "../../../src/db/api-keys.ts";
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import type { ListedKey as BaseListedKey } from "../../../src/db/listed-keys.ts";
import { KEY_COLUMNS, ROTATION_ROOT, toListedKey } from "../../../src/db/listed-keys.ts";
import type { Scope } from "../../../src/scopes.ts";
import { formatScopes } from "../../../src/scopes.ts";
import { MAX_ACTIVE_KEYS, MAX_KEY_CHANGES_PER_HOUR } from "../config.ts";

/**
 * A key of an account as the platform lists it: with the key a rotation replaced it by, and
 * where the API takes it ("/mcp" for a key granted to an MCP client; null: everywhere).
 */
export type ListedKey = BaseListedKey & { replacedBy: number | null; audience: KeyAudience };

/** The columns of a listed key (KEY_COLUMNS), its successor and its audience. */
export const COLUMNS = `${KEY_COLUMNS}, replaced_by, audience`;

/** A row of COLUMNS as a listed key (key-pages.ts reads its pages with it). */
export function toAccountKey(row: Record<string, unknown>): ListedKey {
  const replacedBy = row.replaced_by;
  return {
    ...toListedKey(row),
    replacedBy: replacedBy == null ? null : Number(replacedBy),
    audience: row.audience === "/mcp" ? "/mcp" : null,
  };
}

/** The SQL condition "the key is active at ?2": neither revoked nor expired. */
export const LIVE = "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)";
/** The SQL condition "the account's (?1) key is active at ?2". */
export const ACTIVE = `account_id = ?1 AND ${LIVE}`;
/**
 * Keys made (created or rotated) in the hour before ?2 by the account ?1, or from the client
 * address ?3 by any account (a deleted one too): each on its index's range.
 */
const madeInHour = (by: "account" | "address") =>
  `FROM api_keys WHERE ${by === "account" ? "account_id = ?1" : "created_from = ?3"} AND created_at > ?2 - 3600`;
/** The SQL condition "the account ?1 may make another key at ?2 this hour, and so may address ?3". */
const HOURLY_ROOM = `(SELECT count(*) ${madeInHour("account")}) < ${MAX_KEY_CHANGES_PER_HOUR}
   AND (SELECT count(*) ${madeInHour("address")}) < ${MAX_KEY_CHANGES_PER_HOUR}`;

/** What is stored of a new key (new-key.ts): its hash, never the key, and its display prefix. */
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
 * Stores a new key of the account, unless it already has MAX_ACTIVE_KEYS active ones, or it or
 * the client address `createdFrom` made MAX_KEY_CHANGES_PER_HOUR in the last hour: the counts
 * and the insert are one statement, so concurrent creates cannot pass them. Null when the account
 * is at a limit.
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
    /** The client address of the person making it (request.ts), kept an hour for the cap. */
    createdFrom: string | null;
  },
): Promise<ListedKey | null> {
  const [created] = await rows(
    db
      .prepare(
        `INSERT INTO api_keys (account_id, created_from, key_hash, prefix, label, scopes, created_at, expires_at, audience)
         SELECT ?1, ?3, ?4, ?5, ?6, ?7, ?2, ?8, ?9
         WHERE (SELECT count(*) FROM api_keys WHERE ${ACTIVE}) < ${MAX_ACTIVE_KEYS} AND ${HOURLY_ROOM}
         RETURNING ${COLUMNS}`,
      )
      .bind(
        key.accountId,
        key.now,
        key.createdFrom,
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

/** The account's key of `id`; null for another account's key exactly as for a missing one. */
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
 * When the account may make its next key from the client address `createdFrom`, if the hourly
 * limit of either holds it now (unix seconds): an hour after the oldest of the last
 * MAX_KEY_CHANGES_PER_HOUR keys each made, the later of the two; `by`: which one holds it then.
 * Null when both may.
 */
export async function nextKeyChangeAt(
  db: Queryable,
  accountId: string,
  createdFrom: string | null,
  now: number,
): Promise<{ at: number; by: "account" | "address" } | null> {
  const count = (by: "account" | "address") =>
    db
      .prepare(`SELECT count(*) AS n, min(created_at) AS oldest ${madeInHour(by)}`)
      .bind(...(by === "account" ? [accountId, now] : [null, now, createdFrom]));
  const results = await d1(() =>
    db.batch<{ n: number; oldest: number | null }>([count("account"), count("address")]),
  );
  const [account, address] = results.map(({ results: [row] }) =>
    row && row.n >= MAX_KEY_CHANGES_PER_HOUR && row.oldest !== null ? row.oldest + 3600 : 0,
  );
  const at = Math.max(account ?? 0, address ?? 0);
  return at === 0 ? null : { at, by: at === account ? "account" : "address" };
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
 *    at once), and it and the client address within MAX_KEY_CHANGES_PER_HOUR keys made in the
 *    last hour;
 * 2. the old key then expires `graceSeconds` after now, or keeps an earlier expiry, and
 *    names the new key as its successor.
 * Returns the new and the old key, or null when step 1 stored nothing.
 */
export async function rotateAccountKey(
  db: Queryable,
  rotation: IssuedKey & {
    accountId: string;
    oldId: number;
    now: number;
    graceSeconds: number;
    createdFrom: string | null;
  },
): Promise<{ created: ListedKey; previous: ListedKey } | null> {
  const { accountId, oldId, now, graceSeconds } = rotation;
  const results = await d1(() =>
    db.batch<Record<string, unknown>>([
      db
        .prepare(
          `INSERT INTO api_keys (account_id, created_from, key_hash, prefix, label, scopes, audience, created_at, rotation_root_id)
           SELECT account_id, ?3, ?4, ?5, label, scopes, audience, ?2, ${ROTATION_ROOT} FROM api_keys
           WHERE id = ?6 AND ${ACTIVE} AND replaced_by IS NULL
             AND (SELECT count(*) FROM api_keys WHERE ${ACTIVE} AND (id <> ?6 OR ?7 > 0)) < ${MAX_ACTIVE_KEYS}
             AND ${HOURLY_ROOM}
           RETURNING ${COLUMNS}`,
        )
        .bind(
          accountId,
          now,
          rotation.createdFrom,
          rotation.keyHash,
          rotation.prefix,
          oldId,
          graceSeconds,
        ),
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
