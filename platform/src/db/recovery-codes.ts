// The recovery_codes table: an account's codes, each stored as the SHA-256 of its normal form
// (platform/src/recovery.ts) and taken out as it signs in.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";

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

/** How many of the account's recovery codes are left (the pages say so). */
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
