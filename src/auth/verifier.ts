// Verifies API keys against D1, with a small in-isolate cache so steady-state
// requests cost no D1 query for auth. Revocation is honoured within the TTL.
import { AUTH_CACHE_MAX_ENTRIES, AUTH_CACHE_TTL_MS } from "../config.ts";
import { findActiveApiKeyByHash } from "../db/api-keys.ts";
import type { Clock } from "../http/clock.ts";
import { hashApiKey, LOCAL_DEV_KEY } from "./keys.ts";

interface CacheEntry {
  keyId: number;
  expiresAt: number;
}

const encoder = new TextEncoder();

function sameHash(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  return x.byteLength === y.byteLength && crypto.subtle.timingSafeEqual(x, y);
}

export interface ApiKeyVerifier {
  /** The key's id, or null when the key is unknown or revoked. */
  verify(key: string, env: Env): Promise<number | null>;
}

export function createApiKeyVerifier(
  clock: Clock,
  options: { ttlMs?: number; maxEntries?: number } = {},
): ApiKeyVerifier {
  const ttlMs = options.ttlMs ?? AUTH_CACHE_TTL_MS;
  const maxEntries = options.maxEntries ?? AUTH_CACHE_MAX_ENTRIES;
  // Keyed by the key's hash, never the key; Map order = insertion order = eviction order.
  const cache = new Map<string, CacheEntry>();

  return {
    async verify(key, env) {
      if (key === LOCAL_DEV_KEY && env.ENVIRONMENT !== "local") return null;
      const keyHash = await hashApiKey(key);
      const now = clock();
      const cached = cache.get(keyHash);
      if (cached && cached.expiresAt > now) return cached.keyId;
      cache.delete(keyHash);

      const row = await findActiveApiKeyByHash(env.DB, keyHash);
      if (!row || !sameHash(row.keyHash, keyHash)) return null;
      if (cache.size >= maxEntries) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
      cache.set(keyHash, { keyId: row.id, expiresAt: now + ttlMs });
      return row.id;
    },
  };
}
