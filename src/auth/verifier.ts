// Verifies API keys against D1, with a small in-isolate cache so steady-state
// requests cost no D1 query for auth. Revocation is honoured within the TTL; expiry
// is exact: a cache entry never outlives the expiry instant its key had when cached.
import { AUTH_CACHE_MAX_ENTRIES, AUTH_CACHE_TTL_MS } from "../config.ts";
import { findActiveApiKeyByHash } from "../db/api-keys.ts";
import type { Clock } from "../http/clock.ts";
import { hashApiKey, LOCAL_DEV_KEY } from "./keys.ts";
import type { Scope } from "./scopes.ts";

/** What the rest of the request knows about the caller's key. */
export interface VerifiedKey {
  id: number;
  scopes: readonly Scope[];
}

export type Verification =
  | { ok: true; key: VerifiedKey }
  /** `unknown`: no such key, or revoked. `expired`: past its expiry instant. */
  | { ok: false; reason: "unknown" | "expired" };

interface CacheEntry {
  key: VerifiedKey;
  /** Milliseconds: the earlier of the TTL's end and the key's expiry instant. */
  until: number;
}

const encoder = new TextEncoder();

function sameHash(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  return x.byteLength === y.byteLength && crypto.subtle.timingSafeEqual(x, y);
}

export interface ApiKeyVerifier {
  verify(key: string, env: Env): Promise<Verification>;
}

const UNKNOWN: Verification = { ok: false, reason: "unknown" };

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
      if (key === LOCAL_DEV_KEY && env.ENVIRONMENT !== "local") return UNKNOWN;
      const keyHash = await hashApiKey(key);
      const now = clock();
      const cached = cache.get(keyHash);
      if (cached && cached.until > now) return { ok: true, key: cached.key };
      cache.delete(keyHash);

      const row = await findActiveApiKeyByHash(env.DB, keyHash);
      if (!row || !sameHash(row.keyHash, keyHash)) return UNKNOWN;
      const expiresAtMs = row.expiresAt === null ? Number.POSITIVE_INFINITY : row.expiresAt * 1000;
      if (now >= expiresAtMs) return { ok: false, reason: "expired" };
      if (cache.size >= maxEntries) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
      const verified: VerifiedKey = { id: row.id, scopes: row.scopes };
      cache.set(keyHash, { key: verified, until: Math.min(now + ttlMs, expiresAtMs) });
      return { ok: true, key: verified };
    },
  };
}
