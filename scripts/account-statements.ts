// The SQL that `npm run accounts` sends (scripts/d1.ts), values as SQL literals (sqlString of
// key-statements.ts); Node-free: the tests run these very statements in workerd.
import { isoTime } from "../src/clock.ts";
import { sqlString } from "./key-statements.ts";

/** An account id as typed: `acct_` and 22 base64url characters (platform/src/webauthn.ts). */
export function parseAccountId(text: string | undefined): string | undefined {
  return text !== undefined && /^acct_[A-Za-z0-9_-]{22}$/.test(text) ? text : undefined;
}

/** The columns every statement that responds to accounts returns, for `toListedAccount`. */
const ACCOUNT_COLUMNS = `id, display_name, created_at, disabled_at,
  (SELECT count(*) FROM api_keys AS k WHERE k.account_id = accounts.id AND k.revoked_at IS NULL
     AND (k.expires_at IS NULL OR k.expires_at > unixepoch())) AS active_keys`;

export const LIST_ACCOUNTS_STATEMENT = `SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY created_at, id`;

/**
 * Disabling, one batch: the account (returning its row, none for no such account), then its
 * sessions end (a row each). Its keys are refused, not revoked: enabling gives them back.
 */
export function disableAccountStatements(
  id: string,
  now: number,
): [disable: string, endSessions: string] {
  const account = sqlString(id);
  return [
    `UPDATE accounts SET disabled_at = coalesce(disabled_at, ${Math.trunc(now)}) WHERE id = ${account}
     RETURNING ${ACCOUNT_COLUMNS}`,
    `DELETE FROM sessions WHERE account_id = ${account} RETURNING account_id`,
  ];
}

/** Enables the account again (it signs in anew: its sessions ended); returns its row, or none. */
export function enableAccountStatement(id: string): string {
  return `UPDATE accounts SET disabled_at = NULL WHERE id = ${sqlString(id)} RETURNING ${ACCOUNT_COLUMNS}`;
}

/** An account as `npm run accounts -- list --json` prints it. */
export interface ListedAccount {
  id: string;
  displayName: string;
  createdAt: string;
  disabledAt: string | null;
  /** Its keys that are neither revoked nor expired (refused all the same while it is disabled). */
  activeKeys: number;
}

/** Maps a row returned by the statements above to its listed form. */
export function toListedAccount(row: Record<string, unknown>): ListedAccount {
  return {
    id: String(row.id),
    displayName: String(row.display_name),
    createdAt: isoTime(row.created_at as number),
    disabledAt: isoTime(row.disabled_at as number | null),
    activeKeys: Number(row.active_keys ?? 0),
  };
}
