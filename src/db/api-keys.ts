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
