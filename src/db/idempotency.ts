// Idempotency records for POST /v1/pets (see migrations/0003).
import { IDEMPOTENCY_LOCK_SECONDS, IDEMPOTENCY_TTL_SECONDS } from "../config.ts";
import type { Queryable } from "./database.ts";
import { d1 } from "./database.ts";

export interface StoredResponse {
  status: number;
  body: string;
  location: string;
}

export type Reservation =
  | { kind: "reserved" }
  | { kind: "in_flight" }
  | { kind: "completed"; fingerprint: string; response: StoredResponse };

interface IdempotencyRow {
  fingerprint: string;
  state: "in_flight" | "completed";
  response_status: number | null;
  response_body: string | null;
  response_location: string | null;
}

/**
 * Claims `key` for this request, or reports who holds it. A record older than
 * the TTL, or a reservation whose create never finished within the lock time,
 * is taken over. `now` is in seconds.
 */
export async function reserveIdempotencyKey(
  db: Queryable,
  r: { apiKeyId: number; key: string; fingerprint: string; now: number },
): Promise<Reservation> {
  const expiredBefore = r.now - IDEMPOTENCY_TTL_SECONDS;
  const lockedUntil = r.now + IDEMPOTENCY_LOCK_SECONDS;
  // One statement: insert, or take over a stale record; RETURNING says whether we won.
  const won = await d1(() =>
    db
      .prepare(
        `INSERT INTO idempotency_keys (api_key_id, idempotency_key, fingerprint, state, created_at, locked_until)
         VALUES (?1, ?2, ?3, 'in_flight', ?4, ?5)
         ON CONFLICT (api_key_id, idempotency_key) DO UPDATE SET
           fingerprint = excluded.fingerprint, state = 'in_flight', response_status = NULL,
           response_body = NULL, response_location = NULL, created_at = excluded.created_at,
           locked_until = excluded.locked_until
         WHERE idempotency_keys.created_at < ?6
            OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.locked_until < ?4)
         RETURNING 1 AS won`,
      )
      .bind(r.apiKeyId, r.key, r.fingerprint, r.now, lockedUntil, expiredBefore)
      .first<{ won: number }>(),
  );
  if (won) return { kind: "reserved" };

  const row = await d1(() =>
    db
      .prepare(
        `SELECT fingerprint, state, response_status, response_body, response_location
         FROM idempotency_keys WHERE api_key_id = ?1 AND idempotency_key = ?2`,
      )
      .bind(r.apiKeyId, r.key)
      .first<IdempotencyRow>(),
  );
  // Gone between the two statements (a failed create released it): report in flight, retry later.
  if (!row || row.state === "in_flight") return { kind: "in_flight" };
  return {
    kind: "completed",
    fingerprint: row.fingerprint,
    response: {
      status: row.response_status ?? 201,
      body: row.response_body ?? "",
      location: row.response_location ?? "",
    },
  };
}

/**
 * Completes a reservation with the pet that the preceding statement of the same
 * batch inserted (`last_insert_rowid()`), so record and pet commit together.
 */
export function completeWithInsertedPetStatement(
  db: Queryable,
  r: { apiKeyId: number; key: string },
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE idempotency_keys SET
         state = 'completed',
         response_status = 201,
         response_body = (SELECT json_object('id', id, 'name', name, 'categoryId', category_id, 'status', status)
                          FROM pets WHERE id = last_insert_rowid()),
         response_location = '/v1/pets/' || last_insert_rowid()
       WHERE api_key_id = ?1 AND idempotency_key = ?2 AND state = 'in_flight'`,
    )
    .bind(r.apiKeyId, r.key);
}

/** Drops a reservation whose create failed, so nothing of the request remains. */
export async function releaseIdempotencyKey(
  db: Queryable,
  r: { apiKeyId: number; key: string },
): Promise<void> {
  await d1(() =>
    db
      .prepare(
        "DELETE FROM idempotency_keys WHERE api_key_id = ?1 AND idempotency_key = ?2 AND state = 'in_flight'",
      )
      .bind(r.apiKeyId, r.key)
      .run(),
  );
}

/** Deletes records older than the TTL; returns how many. `now` is in seconds. */
export async function purgeExpiredIdempotencyKeys(db: Queryable, now: number): Promise<number> {
  const result = await d1(() =>
    db
      .prepare("DELETE FROM idempotency_keys WHERE created_at < ?1")
      .bind(now - IDEMPOTENCY_TTL_SECONDS)
      .run(),
  );
  return result.meta.changes;
}
