// The sessions table: a row per signed-in browser, keyed by its token's SHA-256, with a public
// id, the browser's name, its last use and whether a recovery code made it.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import { SESSION_IDLE_SECONDS } from "../config.ts";
import type { Account } from "./accounts.ts";

/**
 * A new session's row: the token's hash, its public id, its account, its start and absolute end.
 */
export interface NewSession {
  /** The SHA-256 of the cookie's token: a copy of the table holds no token. */
  tokenHash: string;
  /** A random public id: the account page ends a session by it, never by its token's hash. */
  id: string;
  accountId: string;
  createdAt: number;
  /** The absolute end (SESSION_MAX_SECONDS after sign-in), whatever its use. */
  expiresAt: number;
  /** The browser it signed in from, as people name it ("Chrome on Linux"), if known. */
  browser: string | null;
  /** Signed in with a recovery code: the pages ask to secure the account (routes/account.ts). */
  recovery: boolean;
}

/** A new session, and the end of the one the browser presented (if any). */
export function sessionStatements(
  db: Queryable,
  session: NewSession,
  replacedTokenHash: string | undefined,
): D1PreparedStatement[] {
  return [
    ...(replacedTokenHash
      ? [db.prepare("DELETE FROM sessions WHERE token_hash = ?1").bind(replacedTokenHash)]
      : []),
    db
      .prepare(
        "INSERT INTO sessions (token_hash, id, account_id, created_at, last_seen_at, expires_at, browser, recovery) VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7)",
      )
      .bind(
        session.tokenHash,
        session.id,
        session.accountId,
        session.createdAt,
        session.expiresAt,
        session.browser,
        session.recovery ? 1 : 0,
      ),
  ];
}

/** A session as the session middleware sees it, with its account. */
export interface SessionRecord {
  tokenHash: string;
  id: string;
  account: Account;
  createdAt: number;
  /** Its last use, written at most every SESSION_TOUCH_SECONDS: idle expiry counts from it. */
  lastSeenAt: number;
  expiresAt: number;
  /**
   * Made by a recovery code: every page asks to secure the account (a passkey on this device, then
   * the lost ones removed and the other sessions ended) until it is done or declined.
   */
  recovery: boolean;
}

/**
 * The session of a token's hash, with its account; whether it is still valid is the middleware's to
 * judge.
 */
export async function findSession(db: Queryable, tokenHash: string): Promise<SessionRecord | null> {
  const row = await d1(() =>
    db
      .prepare(
        `SELECT s.token_hash, s.id AS session_id, s.created_at, s.last_seen_at, s.expires_at, s.recovery,
                a.id, a.display_name, a.created_at AS account_created_at, a.disabled_at
         FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ?1`,
      )
      .bind(tokenHash)
      .first<{
        token_hash: string;
        session_id: string;
        created_at: number;
        last_seen_at: number;
        expires_at: number;
        recovery: number;
        id: string;
        display_name: string;
        account_created_at: number;
        disabled_at: number | null;
      }>(),
  );
  return row
    ? {
        tokenHash: row.token_hash,
        id: row.session_id,
        createdAt: row.created_at,
        lastSeenAt: row.last_seen_at,
        expiresAt: row.expires_at,
        recovery: row.recovery === 1,
        account: {
          id: row.id,
          displayName: row.display_name,
          createdAt: row.account_created_at,
          disabledAt: row.disabled_at,
        },
      }
    : null;
}

/** A signed-in session as its account's page lists it. */
export interface ListedSession {
  id: string;
  browser: string | null;
  createdAt: number;
  lastSeenAt: number;
}

/** The account's sessions that have not ended at `now`, the latest seen first. */
export async function listSessions(
  db: Queryable,
  accountId: string,
  now: number,
): Promise<ListedSession[]> {
  const { results } = await d1(() =>
    db
      .prepare(
        `SELECT id, browser, created_at, last_seen_at FROM sessions
         WHERE account_id = ?1 AND expires_at > ?2 AND last_seen_at > ?2 - ?3
         ORDER BY last_seen_at DESC, id`,
      )
      .bind(accountId, now, SESSION_IDLE_SECONDS)
      .all<{ id: string; browser: string | null; created_at: number; last_seen_at: number }>(),
  );
  return results.map((r) => ({
    id: r.id,
    browser: r.browser,
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
  }));
}

/** Ends one of the account's sessions by its public id; false when it has no such session. */
export async function endSessionById(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<boolean> {
  const result = await d1(() =>
    db.prepare("DELETE FROM sessions WHERE id = ?2 AND account_id = ?1").bind(accountId, id).run(),
  );
  return result.meta.changes === 1;
}

/**
 * Sign-in: a new session, and the session the browser presented (if any) ends, so a
 * token that existed before the sign-in never becomes a signed-in one.
 */
export async function startSession(
  db: Queryable,
  session: NewSession,
  replacedTokenHash: string | undefined,
): Promise<void> {
  await d1(() => db.batch(sessionStatements(db, session, replacedTokenHash)));
}

/** Records a session's use at `now`; never moves it back (a slower concurrent request). */
export async function touchSession(db: Queryable, tokenHash: string, now: number): Promise<void> {
  await d1(() =>
    db
      .prepare("UPDATE sessions SET last_seen_at = ?2 WHERE token_hash = ?1 AND last_seen_at < ?2")
      .bind(tokenHash, now)
      .run(),
  );
}

/** Ends the session of a token's hash (sign-out, or a session found invalid). */
export async function endSession(db: Queryable, tokenHash: string): Promise<void> {
  await d1(() => db.prepare("DELETE FROM sessions WHERE token_hash = ?1").bind(tokenHash).run());
}

/** Ends every session of the account (sign-out everywhere). */
export async function endAccountSessions(db: Queryable, accountId: string): Promise<void> {
  await d1(() => db.prepare("DELETE FROM sessions WHERE account_id = ?1").bind(accountId).run());
}
