import type { Queryable } from "./database.ts";
import { d1 } from "./database.ts";

export interface ActiveApiKey {
  id: number;
  keyHash: string;
}

export async function findActiveApiKeyByHash(
  db: Queryable,
  keyHash: string,
): Promise<ActiveApiKey | null> {
  const row = await d1(() =>
    db
      .prepare("SELECT id, key_hash FROM api_keys WHERE key_hash = ?1 AND revoked_at IS NULL")
      .bind(keyHash)
      .first<{ id: number; key_hash: string }>(),
  );
  return row ? { id: row.id, keyHash: row.key_hash } : null;
}

export async function insertApiKey(
  db: Queryable,
  key: { keyHash: string; prefix: string; label: string; createdAt: number },
): Promise<number> {
  const row = await d1(() =>
    db
      .prepare(
        "INSERT INTO api_keys (key_hash, prefix, label, created_at) VALUES (?1, ?2, ?3, ?4) RETURNING id",
      )
      .bind(key.keyHash, key.prefix, key.label, key.createdAt)
      .first<{ id: number }>(),
  );
  if (!row) throw new Error("INSERT ... RETURNING returned no row");
  return row.id;
}

export async function revokeApiKey(db: Queryable, id: number, revokedAt: number): Promise<boolean> {
  const result = await d1(() =>
    db
      .prepare("UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL")
      .bind(id, revokedAt)
      .run(),
  );
  return result.meta.changes === 1;
}
