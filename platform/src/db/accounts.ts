// The accounts table: sign-up (the account, its first passkey and session in one batch), a
// lookup by id, and deletion, which ends everything the account holds. Bound parameters only.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import { endSessionChallenges } from "./challenges.ts";
import { insertPasskey, type NewPasskey } from "./passkeys.ts";
import { type NewSession, sessionStatements } from "./sessions.ts";

/** An account as the session middleware and the pages see it (times in unix seconds). */
export interface Account {
  id: string;
  displayName: string;
  createdAt: number;
  /**
   * Set by the operator (`npm run accounts -- disable`): no sign-in, and the API refuses its keys.
   */
  disabledAt: number | null;
}

/** The display name a deleted account keeps (the column needs one): none of the person's. */
const DELETED_NAME = "(deleted)";

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
      insertPasskey(db, passkey),
      ...sessionStatements(db, session, replacedTokenHash),
    ]),
  );
}

/**
 * The account of `id`, disabled or not (sign-in refuses a disabled one after its passkey is
 * checked).
 */
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

/**
 * Deletes an account, in one transaction: its keys revoked (the API refuses them within
 * the revocation bound) and their labels erased, its passkeys, sessions, open challenges and
 * recovery codes deleted, its display name replaced. The row stays, marked, for the keys' usage
 * rows.
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
      endSessionChallenges(db, accountId),
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

/**
 * Secures the account after a recovery, in one transaction: the passkeys `removePasskeys` names
 * go (never the last one: then none does), the other sessions end with their open challenges if
 * `endOtherSessions`, and the session `sessionId` stops asking. Returns the passkeys removed and
 * how many sessions ended.
 */
export async function secureAccount(
  db: Queryable,
  change: {
    accountId: string;
    sessionId: string;
    removePasskeys: readonly string[];
    endOtherSessions: boolean;
  },
): Promise<{ removedPasskeys: string[]; endedSessions: number }> {
  const { accountId, sessionId } = change;
  const listed = "(SELECT value FROM json_each(?2))";
  const results = await d1(() =>
    db.batch<{ id: string }>([
      db
        .prepare(
          `DELETE FROM passkeys WHERE account_id = ?1 AND credential_id IN ${listed}
             AND EXISTS (SELECT 1 FROM passkeys WHERE account_id = ?1 AND credential_id NOT IN ${listed})
           RETURNING credential_id AS id`,
        )
        .bind(accountId, JSON.stringify(change.removePasskeys)),
      ...(change.endOtherSessions
        ? [
            endSessionChallenges(db, accountId, sessionId),
            db
              .prepare("DELETE FROM sessions WHERE account_id = ?1 AND id <> ?2 RETURNING id")
              .bind(accountId, sessionId),
          ]
        : []),
      db
        .prepare("UPDATE sessions SET recovery = 0 WHERE account_id = ?1 AND id = ?2")
        .bind(accountId, sessionId),
    ]),
  );
  return {
    removedPasskeys: (results[0]?.results ?? []).map((r) => r.id),
    endedSessions: change.endOtherSessions ? (results[2]?.results.length ?? 0) : 0,
  };
}
