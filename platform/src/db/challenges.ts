// The challenges table: each WebAuthn challenge (hashed) with what its ceremony's end needs,
// counted against its holder, taken out once.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";

/**
 * What a challenge was issued for: a response is accepted only for its own purpose, so a sign-in's
 * challenge cannot add a passkey, nor a deletion's sign in.
 */
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
 * returns what it carried, or null when no challenge of this purpose has this hash.
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

/**
 * Ends the open challenges that end with the account's sessions: those its sessions (all but
 * `keep`) hold; with no `keep` (the account's deletion), also every one made for the account.
 */
export function endSessionChallenges(
  db: Queryable,
  accountId: string,
  keep?: string,
): D1PreparedStatement {
  const held = "holder IN (SELECT 'session:' || id FROM sessions WHERE account_id = ?1";
  return keep === undefined
    ? db
        .prepare(
          `DELETE FROM challenges WHERE ${held}) OR json_extract(pending, '$.accountId') = ?1`,
        )
        .bind(accountId)
    : db.prepare(`DELETE FROM challenges WHERE ${held} AND id <> ?2)`).bind(accountId, keep);
}
