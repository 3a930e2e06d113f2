// The benchmark's local D1, prepared the same way for npm run bench (bench/server.ts)
// and npm run bench:capacity (bench/capacity.ts): the project's migrations, pets from
// one recursive-CTE INSERT, and an API key (by its hash).
import { wrangler } from "../scripts/wrangler.ts";

/** What the preparation needs of a D1 database (miniflare's, seen from Node). */
export type BenchDatabase = Pick<D1Database, "prepare" | "batch">;

/**
 * Applies migrations/ to the local D1 persisted under `state` (miniflare's
 * resourcePersistencePath is `state/v3`) with the tool every other database uses:
 * `wrangler d1 migrations apply`. Run it before miniflare opens the database.
 */
export function migrate(state: string): void {
  wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], {
    capture: true,
    ci: true,
  });
}

/**
 * Inserts pets until ids 1..`upTo` exist (one statement): `pet-<id>` names, category
 * 1 + id % 7, statuses in turn. `nameOf` replaces the name expression (SQL over `i`).
 */
export async function seedPets(
  db: BenchDatabase,
  upTo: number,
  nameOf = "'pet-' || i",
): Promise<D1Result | undefined> {
  const count = (await db.prepare("SELECT count(*) AS n FROM pets").first<{ n: number }>())?.n ?? 0;
  if (count >= upTo) return undefined;
  return db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT CAST(?1 AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO pets (name, category_id, status, created_at)
       SELECT ${nameOf}, 1 + i % 7,
              CASE i % 3 WHEN 0 THEN 'sold' WHEN 1 THEN 'available' ELSE 'pending' END,
              1700000000 + i
       FROM n`,
    )
    .bind(count + 1, upTo)
    .run();
}

/** Makes the key with this SHA-256 hash (hex) a valid key with every scope; returns its id. */
export async function addKey(db: BenchDatabase, keyHash: string): Promise<number> {
  const row = await db
    .prepare(
      `INSERT INTO api_keys (key_hash, prefix, label, created_at) VALUES (?1, 'psk_bench', 'bench', unixepoch())
       ON CONFLICT (key_hash) DO UPDATE SET revoked_at = NULL
       RETURNING id`,
    )
    .bind(keyHash)
    .first<{ id: number }>();
  if (!row) throw new Error("the key was not stored");
  return row.id;
}
