// Accounts, their passkeys and sessions, and WebAuthn challenges: every query the
// platform makes about who is signed in. Bound parameters only; unix seconds.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import { MAX_PASSKEYS, SESSION_IDLE_SECONDS } from "../config.ts";

export interface Account {
  id: string;
  displayName: string;
  createdAt: number;
  disabledAt: number | null;
}

/** The display name a deleted account keeps (the column needs one): none of the person's. */
const DELETED_NAME = "(deleted)";

export interface Passkey {
  credentialId: string;
  accountId: string;
  publicKey: Uint8Array<ArrayBuffer>;
  counter: number;
  transports: string[];
  /** Its name: its authenticator's (from the AAGUID), "Passkey N", or its holder's. */
  name: string;
  /** The authenticator model's id as registered (all zeros when it keeps it to itself). */
  aaguid: string | null;
  createdAt: number;
  lastUsedAt: number | null;
}

interface PasskeyRow {
  credential_id: string;
  account_id: string;
  public_key: ArrayBuffer | number[];
  counter: number;
  transports: string;
  name: string | null;
  aaguid: string | null;
  created_at: number;
  last_used_at: number | null;
}

const PASSKEY_COLUMNS =
  "credential_id, account_id, public_key, counter, transports, name, aaguid, created_at, last_used_at";

function toPasskey(row: PasskeyRow): Passkey {
  return {
    credentialId: row.credential_id,
    accountId: row.account_id,
    publicKey: new Uint8Array(row.public_key),
    counter: row.counter,
    transports: row.transports.split(" ").filter(Boolean),
    name: row.name ?? "Passkey",
    aaguid: row.aaguid,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** A new passkey's row. */
export type NewPasskey = Omit<Passkey, "lastUsedAt">;

/** A new passkey's values, in the order of the INSERTs below. */
function passkeyValues(passkey: NewPasskey) {
  return [
    passkey.credentialId,
    passkey.accountId,
    passkey.publicKey,
    passkey.counter,
    passkey.transports.join(" "),
    passkey.createdAt,
    passkey.name,
    passkey.aaguid,
  ];
}

/** The INSERT of a passkey's values (passkeyValues), as ?1..?8. */
const INSERT_PASSKEY =
  "INSERT INTO passkeys (credential_id, account_id, public_key, counter, transports, created_at, name, aaguid)";

/** A new session's row: the token's hash, its public id, its account, its start and absolute end. */
export interface NewSession {
  tokenHash: string;
  id: string;
  accountId: string;
  createdAt: number;
  expiresAt: number;
  /** The browser it signed in from, as people name it ("Chrome on Linux"), if known. */
  browser: string | null;
  /** Signed in with a recovery code: the pages ask for a new passkey. */
  recovery: boolean;
}

/** A new session, and the end of the one the browser presented (if any). */
function sessionStatements(
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

/** Whether D1 refused a write for a duplicate primary key or unique column. */
export function isUniqueViolation(err: unknown): boolean {
  return String(err instanceof Error ? err.message : err).includes("UNIQUE constraint failed");
}

/**
 * Sign-up: the account, its first passkey and its first session (the presented one
 * ends), in one transaction.
 */
export async function createAccount(
  db: Queryable,
  account: Omit<Account, "disabledAt">,
  passkey: NewPasskey,
  session: NewSession,
  replacedTokenHash: string | undefined,
): Promise<void> {
  await d1(() =>
    db.batch([
      db
        .prepare("INSERT INTO accounts (id, display_name, created_at) VALUES (?1, ?2, ?3)")
        .bind(account.id, account.displayName, account.createdAt),
      db
        .prepare(`${INSERT_PASSKEY} VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`)
        .bind(...passkeyValues(passkey)),
      ...sessionStatements(db, session, replacedTokenHash),
    ]),
  );
}

export async function findAccount(db: Queryable, id: string): Promise<Account | null> {
  const row = await d1(() =>
    db
      .prepare("SELECT id, display_name, created_at, disabled_at FROM accounts WHERE id = ?1")
      .bind(id)
      .first<{
        id: string;
        display_name: string;
        created_at: number;
        disabled_at: number | null;
      }>(),
  );
  return row
    ? {
        id: row.id,
        displayName: row.display_name,
        createdAt: row.created_at,
        disabledAt: row.disabled_at,
      }
    : null;
}

export async function findPasskey(db: Queryable, credentialId: string): Promise<Passkey | null> {
  const row = await d1(() =>
    db
      .prepare(`SELECT ${PASSKEY_COLUMNS} FROM passkeys WHERE credential_id = ?1`)
      .bind(credentialId)
      .first<PasskeyRow>(),
  );
  return row ? toPasskey(row) : null;
}

export async function listPasskeys(db: Queryable, accountId: string): Promise<Passkey[]> {
  const { results } = await d1(() =>
    db
      .prepare(
        `SELECT ${PASSKEY_COLUMNS} FROM passkeys WHERE account_id = ?1 ORDER BY created_at, rowid`,
      )
      .bind(accountId)
      .all<PasskeyRow>(),
  );
  return results.map(toPasskey);
}

/** Adds a passkey to an account unless it holds MAX_PASSKEYS already (false then). */
export async function addPasskey(db: Queryable, passkey: NewPasskey): Promise<boolean> {
  const result = await d1(() =>
    db
      .prepare(
        `${INSERT_PASSKEY}
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
         WHERE (SELECT count(*) FROM passkeys WHERE account_id = ?2) < ${MAX_PASSKEYS}`,
      )
      .bind(...passkeyValues(passkey))
      .run(),
  );
  return result.meta.changes === 1;
}

/** Renames one of the account's passkeys; null when the account has no such passkey. */
export async function renamePasskey(
  db: Queryable,
  accountId: string,
  credentialId: string,
  name: string,
): Promise<Passkey | null> {
  const row = await d1(() =>
    db
      .prepare(
        `UPDATE passkeys SET name = ?3 WHERE credential_id = ?2 AND account_id = ?1 RETURNING ${PASSKEY_COLUMNS}`,
      )
      .bind(accountId, credentialId, name)
      .first<PasskeyRow>(),
  );
  return row ? toPasskey(row) : null;
}

/**
 * Records a sign-in with a passkey: its new counter and the time. Only if the stored
 * counter is still the one the signature was checked against, so of two sign-ins
 * racing with one counter value only one succeeds. False when another got there first.
 */
export async function recordPasskeyUse(
  db: Queryable,
  passkey: Pick<Passkey, "credentialId" | "counter">,
  newCounter: number,
  now: number,
): Promise<boolean> {
  const result = await d1(() =>
    db
      .prepare(
        "UPDATE passkeys SET counter = ?2, last_used_at = ?3 WHERE credential_id = ?1 AND counter = ?4",
      )
      .bind(passkey.credentialId, newCounter, now, passkey.counter)
      .run(),
  );
  return result.meta.changes === 1;
}

/**
 * Removes one of the account's passkeys unless it is the account's last one.
 * "removed", "last" (the account keeps it), or "none" (no such passkey of this account).
 */
export async function removePasskey(
  db: Queryable,
  accountId: string,
  credentialId: string,
): Promise<"removed" | "last" | "none"> {
  const [removed, owned] = await d1(() =>
    db.batch<{ n: number }>([
      db
        .prepare(
          `DELETE FROM passkeys WHERE credential_id = ?1 AND account_id = ?2
             AND (SELECT count(*) FROM passkeys WHERE account_id = ?2) > 1
           RETURNING 1 AS n`,
        )
        .bind(credentialId, accountId),
      db
        .prepare("SELECT count(*) AS n FROM passkeys WHERE credential_id = ?1 AND account_id = ?2")
        .bind(credentialId, accountId),
    ]),
  );
  if (removed?.results.length === 1) return "removed";
  return owned?.results[0]?.n === 1 ? "last" : "none";
}

/** A session as the session middleware sees it, with its account. */
export interface SessionRecord {
  tokenHash: string;
  id: string;
  account: Account;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  recovery: boolean;
}

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

export async function touchSession(db: Queryable, tokenHash: string, now: number): Promise<void> {
  await d1(() =>
    db
      .prepare("UPDATE sessions SET last_seen_at = ?2 WHERE token_hash = ?1 AND last_seen_at < ?2")
      .bind(tokenHash, now)
      .run(),
  );
}

export async function endSession(db: Queryable, tokenHash: string): Promise<void> {
  await d1(() => db.prepare("DELETE FROM sessions WHERE token_hash = ?1").bind(tokenHash).run());
}

export async function endAccountSessions(db: Queryable, accountId: string): Promise<void> {
  await d1(() => db.prepare("DELETE FROM sessions WHERE account_id = ?1").bind(accountId).run());
}

/** Replaces the account's recovery codes by these (hashes), in one transaction. */
export async function replaceRecoveryCodes(
  db: Queryable,
  accountId: string,
  hashes: readonly string[],
  now: number,
): Promise<void> {
  await d1(() =>
    db.batch([
      db.prepare("DELETE FROM recovery_codes WHERE account_id = ?1").bind(accountId),
      ...hashes.map((hash) =>
        db
          .prepare(
            "INSERT INTO recovery_codes (code_hash, account_id, created_at) VALUES (?1, ?2, ?3)",
          )
          .bind(hash, accountId, now),
      ),
    ]),
  );
}

export async function countRecoveryCodes(db: Queryable, accountId: string): Promise<number> {
  const row = await d1(() =>
    db
      .prepare("SELECT count(*) AS n FROM recovery_codes WHERE account_id = ?1")
      .bind(accountId)
      .first<{ n: number }>(),
  );
  return row?.n ?? 0;
}

/** Takes a recovery code out (each signs in once): its account's id, or null if none has it. */
export async function takeRecoveryCode(db: Queryable, hash: string): Promise<string | null> {
  const row = await d1(() =>
    db
      .prepare("DELETE FROM recovery_codes WHERE code_hash = ?1 RETURNING account_id")
      .bind(hash)
      .first<{ account_id: string }>(),
  );
  return row?.account_id ?? null;
}

/** The account's sessions stop asking for a new passkey (one was just added). */
export async function endRecovery(db: Queryable, accountId: string): Promise<void> {
  await d1(() =>
    db
      .prepare("UPDATE sessions SET recovery = 0 WHERE account_id = ?1 AND recovery = 1")
      .bind(accountId)
      .run(),
  );
}

/**
 * Deletes an account, in one transaction: its keys revoked (the API refuses them within
 * the revocation bound) and their labels erased, its passkeys, sessions and recovery codes
 * deleted, its display name replaced. The row stays, marked, for the keys' usage rows.
 */
export async function deleteAccount(db: Queryable, accountId: string, now: number): Promise<void> {
  await d1(() =>
    db.batch([
      db
        .prepare(
          "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?2), label = '' WHERE account_id = ?1",
        )
        .bind(accountId, now),
      db.prepare("DELETE FROM passkeys WHERE account_id = ?1").bind(accountId),
      db.prepare("DELETE FROM sessions WHERE account_id = ?1").bind(accountId),
      db.prepare("DELETE FROM recovery_codes WHERE account_id = ?1").bind(accountId),
      db
        .prepare(
          "UPDATE accounts SET display_name = ?2, deleted_at = ?3, disabled_at = coalesce(disabled_at, ?3) WHERE id = ?1",
        )
        .bind(accountId, DELETED_NAME, now),
    ]),
  );
}

export type ChallengePurpose = "sign-up" | "sign-in" | "add-passkey";

/**
 * Stores a challenge counted against `holder` (a session or a client address), which then
 * holds at most `keepOpen` open ones: in the same transaction the older ones beyond that
 * end, and its expired ones go.
 */
export async function storeChallenge(
  db: Queryable,
  challenge: { hash: string; purpose: ChallengePurpose; pending: object; expiresAt: number },
  holder: { id: string; keepOpen: number; now: number },
): Promise<void> {
  await d1(() =>
    db.batch([
      db
        .prepare(
          `DELETE FROM challenges WHERE holder = ?1 AND challenge_hash NOT IN (
             SELECT challenge_hash FROM challenges WHERE holder = ?1 AND expires_at > ?2
             ORDER BY expires_at DESC LIMIT ?3)`,
        )
        .bind(holder.id, holder.now, holder.keepOpen - 1),
      db
        .prepare(
          "INSERT INTO challenges (challenge_hash, purpose, pending, expires_at, holder) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(
          challenge.hash,
          challenge.purpose,
          JSON.stringify(challenge.pending),
          challenge.expiresAt,
          holder.id,
        ),
    ]),
  );
}

/**
 * Takes a challenge out of the table (so it can be used once, whatever comes next) and
 * answers what it carried, or null when no challenge of this purpose has this hash.
 * Expiry is the caller's to compare.
 */
export async function consumeChallenge(
  db: Queryable,
  hash: string,
  purpose: ChallengePurpose,
): Promise<{ pending: unknown; expiresAt: number } | null> {
  const row = await d1(() =>
    db
      .prepare(
        "DELETE FROM challenges WHERE challenge_hash = ?1 AND purpose = ?2 RETURNING pending, expires_at",
      )
      .bind(hash, purpose)
      .first<{ pending: string; expires_at: number }>(),
  );
  return row ? { pending: JSON.parse(row.pending), expiresAt: row.expires_at } : null;
}

/** The hourly purge: challenges past their expiry, sessions past either of theirs. */
export async function purgeExpired(db: Queryable, now: number): Promise<void> {
  await d1(() =>
    db.batch([
      db.prepare("DELETE FROM challenges WHERE expires_at <= ?1").bind(now),
      db
        .prepare("DELETE FROM sessions WHERE expires_at <= ?1 OR last_seen_at <= ?1 - ?2")
        .bind(now, SESSION_IDLE_SECONDS),
    ]),
  );
}
