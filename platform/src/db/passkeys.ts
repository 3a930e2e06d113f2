// The passkeys table: each account's WebAuthn credentials (public key, signature counter,
// name), at most MAX_PASSKEYS an account and never none. Bound parameters only; unix seconds.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import { MAX_PASSKEYS } from "../config.ts";

/** A stored WebAuthn credential (WebAuthn Level 2 §6.5.1, attested credential data). */
export interface Passkey {
  /**
   * The credential id, base64url: the primary key, so one authenticator's passkey has one account.
   */
  credentialId: string;
  accountId: string;
  /** The credential public key (COSE_Key) every assertion's signature is checked against. */
  publicKey: Uint8Array<ArrayBuffer>;
  /**
   * The signature counter last seen (WebAuthn Level 2 §6.1.1): 0 stays 0 for synced passkeys; a
   * non-zero one must grow, else the passkey looks copied.
   */
  counter: number;
  /** The authenticator's transports as registered, handed back in allowCredentials as hints. */
  transports: string[];
  /** Its name: its authenticator's (from the AAGUID), "Passkey N", or its holder's. */
  name: string;
  /** The authenticator model's id as registered (all zeros when it keeps it to itself). */
  aaguid: string | null;
  createdAt: number;
  /** Its last sign-in or confirmation (null: none yet), shown on the account page. */
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

/** The INSERT of a new passkey, for a batch (sign-up's: the account and its first passkey). */
export function insertPasskey(db: Queryable, passkey: NewPasskey): D1PreparedStatement {
  return db
    .prepare(`${INSERT_PASSKEY} VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`)
    .bind(...passkeyValues(passkey));
}

/** Whether D1 refused a write for a duplicate primary key or unique column. */
export function isUniqueViolation(err: unknown): boolean {
  return String(err instanceof Error ? err.message : err).includes("UNIQUE constraint failed");
}

/**
 * The passkey of a credential id, whatever its account (a discoverable sign-in names no account).
 */
export async function findPasskey(db: Queryable, credentialId: string): Promise<Passkey | null> {
  const row = await d1(() =>
    db
      .prepare(`SELECT ${PASSKEY_COLUMNS} FROM passkeys WHERE credential_id = ?1`)
      .bind(credentialId)
      .first<PasskeyRow>(),
  );
  return row ? toPasskey(row) : null;
}

/** The account's passkeys, oldest first (the order the account page and excludeCredentials use). */
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
