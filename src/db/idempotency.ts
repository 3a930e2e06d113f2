// Idempotency records of POST /v1/pets, per owner of the API key, kept with the pet in one D1
// batch, one trip to the primary (docs/design.md, "Idempotency in one batch").
import { IDEMPOTENCY_TTL_SECONDS } from "../config.ts";
import { sha256 } from "../encoding.ts";
import type { Pet } from "../pets/schemas.ts";
import type { Queryable } from "./database.ts";
import { d1 } from "./database.ts";
import type { IdempotentCreate, IdempotentCreateRequest } from "./pet-store.ts";
import {
  insertPetSql,
  petTagSql,
  type TaggedPet,
  toPet,
  WRITTEN_COLUMNS,
  writtenPetColumns,
  writtenValues,
} from "./pets.ts";

/** True while no record holds the key. Parameters: ?1 the API key's owner, ?2 key hash. */
const KEY_IS_FREE =
  "NOT EXISTS (SELECT 1 FROM idempotency_records WHERE scope = ?1 AND key_hash = ?2)";

/** The pet as created, kept in the record (its id as `pet_id`), so a replay returns it. */
const KEPT = WRITTEN_COLUMNS.join(", ");

interface HolderRow extends Pet {
  /** 1 when the record was made for an equal JSON body. */
  same_body: number;
  etag: string;
}

/**
 * Creates the pet for `request` unless its key is already held; returns the pet the key
 * now stands for, as it was created (read back by the same mapping as every pet), or why
 * it cannot. The record keeps the created pet, so a replay does not depend on the pet
 * still being as it was, or being at all.
 */
export async function createPetIdempotently(
  db: Queryable,
  request: IdempotentCreateRequest,
): Promise<IdempotentCreate> {
  const { owner, key, pet, now } = request;
  // Both digests fixed-size, bound as BLOBs.
  const keyHash = (await sha256(key)).buffer;
  const fingerprint = request.fingerprint.slice().buffer;
  const expiredBefore = now - IDEMPOTENCY_TTL_SECONDS;
  const written = await writtenValues(pet);
  const [, inserted, , readBack] = await d1(() =>
    db.batch([
      // A record older than 24 h no longer holds its key.
      db
        .prepare(
          "DELETE FROM idempotency_records WHERE scope = ?1 AND key_hash = ?2 AND created_at < ?3",
        )
        .bind(owner, keyHash, expiredBefore),
      db
        .prepare(`${insertPetSql(3, true)} WHERE ${KEY_IS_FREE}`)
        .bind(owner, keyHash, ...written, now),
      // The pet just inserted has the largest id (AUTOINCREMENT, inside this transaction).
      db
        .prepare(
          `INSERT INTO idempotency_records (scope, key_hash, fingerprint, created_at, pet_id, ${KEPT})
           SELECT ?1, ?2, ?3, ?4, id, ${KEPT} FROM pets
           WHERE id = (SELECT max(id) FROM pets) AND ${KEY_IS_FREE}`,
        )
        .bind(owner, keyHash, fingerprint, now),
      db
        .prepare(
          `SELECT r.fingerprint = ?3 AS same_body, r.pet_id AS id,
             ${writtenPetColumns("r")}, ${petTagSql("r")} AS etag
           FROM idempotency_records r WHERE r.scope = ?1 AND r.key_hash = ?2`,
        )
        .bind(owner, keyHash, fingerprint),
    ]),
  );
  const row = (readBack as D1Result<HolderRow> | undefined)?.results[0];
  if (!row) throw new Error("idempotent create: the batch read back no record");
  const held: TaggedPet = { pet: toPet(row), etag: row.etag };
  if ((inserted as D1Result).meta.changes === 1) return { kind: "created", pet: held };
  if (!row.same_body) return { kind: "reused" };
  return { kind: "replayed", pet: held };
}

/** Deletes records older than the TTL; returns how many. `now` in unix seconds. */
export async function purgeExpiredIdempotencyKeys(db: Queryable, now: number): Promise<number> {
  const result = await d1(() =>
    db
      .prepare("DELETE FROM idempotency_records WHERE created_at < ?1")
      .bind(now - IDEMPOTENCY_TTL_SECONDS)
      .run(),
  );
  return result.meta.changes;
}
