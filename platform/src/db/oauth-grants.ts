// The oauth_grants table (migration 0014): each grant from the consent page to its key. Every
// statement that reads or decides a grant as a person is bound to the signed-in account, so
// another account's grant id finds nothing.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import type { Scope } from "../../../src/scopes.ts";
import { formatScopes, parseScopes } from "../../../src/scopes.ts";

/** What a valid authorization request asks, kept while its holder decides. */
export interface AskedGrant {
  clientId: string;
  /** The client's name when asked: the label of the key the grant makes. */
  clientName: string;
  /** Verified against the client's; the token request must name it again (RFC 6749 4.1.3). */
  redirectUri: string;
  /** The client's `state`, handed back unchanged with the code or the refusal (RFC 6749 4.1.2). */
  state: string | null;
  /** The S256 challenge (RFC 7636 4.2) the token request's verifier must hash to. */
  codeChallenge: string;
  /** The resource granted (RFC 8707): always the API's MCP server. */
  resource: string;
  /** The scopes the client asked: the holder may allow only among them. */
  requestedScopes: Scope[];
}

/** A grant: asked, then allowed (a code) or denied (deleted), then redeemed once for its key. */
export interface Grant extends AskedGrant {
  /** `grt_` and 128 random bits: the consent page's Allow and Deny name it. */
  id: string;
  accountId: string;
  /** The scopes the holder allowed; null while undecided. */
  scopes: Scope[] | null;
  /** Seconds the key lives from its making (null: until revoked). */
  keyLifetime: number | null;
  /** The key its redemption made: revoked if the code is redeemed again (RFC 6749 4.1.2). */
  keyId: number | null;
  /** The consent's end while undecided, then the code's (CODE_SECONDS after the Allow). */
  expiresAt: number;
  /** When its code was redeemed: a second redemption is a replay. */
  usedAt: number | null;
  /**
   * The client address of the holder's Allow: its key counts there against the hourly cap of
   * keys made (db/keys.ts); erased by the hourly purge.
   */
  allowedFrom: string | null;
}

const GRANT_COLUMNS =
  "id, account_id, client_id, client_name, redirect_uri, state, code_challenge, resource, requested_scopes, scopes, key_lifetime, key_id, expires_at, used_at, allowed_from";

function toGrant(row: Record<string, unknown>): Grant {
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    clientId: String(row.client_id),
    clientName: String(row.client_name),
    redirectUri: String(row.redirect_uri),
    state: row.state === null ? null : String(row.state),
    codeChallenge: String(row.code_challenge),
    resource: String(row.resource),
    requestedScopes: parseScopes(String(row.requested_scopes)),
    scopes: row.scopes === null ? null : parseScopes(String(row.scopes)),
    keyLifetime: row.key_lifetime === null ? null : Number(row.key_lifetime),
    keyId: row.key_id === null ? null : Number(row.key_id),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
    allowedFrom: row.allowed_from == null ? null : String(row.allowed_from),
  };
}

async function oneGrant(statement: D1PreparedStatement): Promise<Grant | null> {
  const row = await d1(() => statement.first<Record<string, unknown>>());
  return row ? toGrant(row) : null;
}

/** Keeps an asked grant for the account until `expiresAt`. */
export async function openGrant(
  db: Queryable,
  grant: AskedGrant & { id: string; accountId: string; now: number; expiresAt: number },
): Promise<void> {
  await d1(() =>
    db
      .prepare(
        `INSERT INTO oauth_grants (id, account_id, client_id, client_name, redirect_uri, state, code_challenge, resource, requested_scopes, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)`,
      )
      .bind(
        grant.id,
        grant.accountId,
        grant.clientId,
        grant.clientName,
        grant.redirectUri,
        grant.state,
        grant.codeChallenge,
        grant.resource,
        formatScopes(grant.requestedScopes),
        grant.now,
        grant.expiresAt,
      )
      .run(),
  );
}

/** The account's grant that still waits for its holder's decision at `now`. */
export function undecidedGrant(db: Queryable, accountId: string, id: string, now: number) {
  return oneGrant(
    db
      .prepare(
        `SELECT ${GRANT_COLUMNS} FROM oauth_grants
         WHERE id = ?1 AND account_id = ?2 AND scopes IS NULL AND expires_at > ?3`,
      )
      .bind(id, accountId, now),
  );
}

/**
 * Allows an undecided grant: its code's hash, what was allowed, the code's expiry, and the client
 * address of the Allow.
 */
export function allowGrant(
  db: Queryable,
  decision: {
    id: string;
    accountId: string;
    now: number;
    codeHash: string;
    scopes: readonly Scope[];
    keyLifetime: number | null;
    codeExpiresAt: number;
    allowedFrom: string;
  },
) {
  return oneGrant(
    db
      .prepare(
        `UPDATE oauth_grants SET code_hash = ?4, scopes = ?5, key_lifetime = ?6, expires_at = ?7, allowed_from = ?8
         WHERE id = ?1 AND account_id = ?2 AND scopes IS NULL AND expires_at > ?3
         RETURNING ${GRANT_COLUMNS}`,
      )
      .bind(
        decision.id,
        decision.accountId,
        decision.now,
        decision.codeHash,
        formatScopes(decision.scopes),
        decision.keyLifetime,
        decision.codeExpiresAt,
        decision.allowedFrom,
      ),
  );
}

/** Denies (deletes) an undecided grant; returns it, for the redirect that says so. */
export function denyGrant(db: Queryable, accountId: string, id: string, now: number) {
  return oneGrant(
    db
      .prepare(
        `DELETE FROM oauth_grants WHERE id = ?1 AND account_id = ?2 AND scopes IS NULL AND expires_at > ?3
         RETURNING ${GRANT_COLUMNS}`,
      )
      .bind(id, accountId, now),
  );
}

/** Marks the code of `codeHash` used, once: the grant, or null when it was unknown or used. */
export function redeemCode(db: Queryable, codeHash: string, now: number) {
  return oneGrant(
    db
      .prepare(
        `UPDATE oauth_grants SET used_at = ?2 WHERE code_hash = ?1 AND used_at IS NULL
         RETURNING ${GRANT_COLUMNS}`,
      )
      .bind(codeHash, now),
  );
}

/** The grant of the code of `codeHash`, used or not, if any. */
export function grantOfCode(db: Queryable, codeHash: string) {
  return oneGrant(
    db.prepare(`SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE code_hash = ?1`).bind(codeHash),
  );
}

/** Records the key a redeemed grant made, and that its client (if registered) got a grant. */
export async function recordGrantKey(
  db: Queryable,
  grant: { id: string; clientId: string },
  keyId: number,
  now: number,
): Promise<void> {
  await d1(() =>
    db.batch([
      db.prepare("UPDATE oauth_grants SET key_id = ?2 WHERE id = ?1").bind(grant.id, keyId),
      db
        .prepare(
          "UPDATE oauth_clients SET granted_at = ?2 WHERE client_id = ?1 AND granted_at IS NULL",
        )
        .bind(grant.clientId, now),
    ]),
  );
}
