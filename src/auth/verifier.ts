// Verifies API keys at the edge in tiers: format and tag, isolate memory, the location's Cache
// API, a D1 replica, the primary; refused tokens and lookups count against the invalid-key
// limiter (docs/keys.md, "Verification in tiers").
import * as z from "zod/mini";
import type { EdgeCache } from "../cache/edge-cache.ts";
import { type CacheContext, createTieredCache } from "../cache/tiered.ts";
import type { Clock } from "../clock.ts";
import { AUTH_CACHE_MAX_ENTRIES, AUTH_CACHE_TTL_MS, AUTH_UNKNOWN_TTL_MS } from "../config.ts";
import { findApiKeyByHash, type KeyAudience } from "../db/api-keys.ts";
import { openSession } from "../db/database.ts";
import { addressBucket } from "../http/client-address.ts";
import { errorText, type Logger } from "../log.ts";
import { SCOPES, type Scope } from "../scopes.ts";
import { hashApiKey, keyFormat, tagSecrets } from "./keys.ts";

/** What the rest of the request knows about the caller's key. */
export interface VerifiedKey {
  id: number;
  /** Its account, or its rotation chain for an operator key (StoredApiKey's `owner`). */
  owner: string;
  scopes: readonly Scope[];
  audience: KeyAudience;
}

export type Verification =
  | { ok: true; key: VerifiedKey }
  /**
   * `unknown`: not a key (wrong format or tag, no such key, or revoked). `expired`: past
   * its expiry instant. `rate_limited`: the client address sent too many invalid keys.
   */
  | { ok: false; reason: "unknown" | "expired" | "rate_limited" };

/** What verification needs of the request; its origin says where cache entries live. */
export interface VerifyContext extends CacheContext {
  env: Env;
  /** CF-Connecting-IP: whose invalid keys are counted, an IPv6 one by its /64 ("" when absent). */
  clientAddress: string;
  /**
   * Called when the key must be looked up (isolate memory does not know it), right before
   * the lookup starts: work that may run side by side with it (a cached response's lookup).
   */
  lookingUp?: (() => void) | undefined;
}

export interface ApiKeyVerifier {
  verify(token: string, context: VerifyContext): Promise<Verification>;
}

/** An active key as D1 last said it; `expiresAt` in milliseconds. */
const ActiveKeySchema = z.object({
  id: z.number(),
  owner: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  expiresAt: z.nullable(z.number()),
  audience: z.nullable(z.enum(["/mcp"])),
});
type ActiveKey = z.infer<typeof ActiveKeySchema>;

/** A named cache: apart from `caches.default`, which fetch() and public URLs share. */
export const KEY_CACHE_NAME = "api-key-verification";
/** A key cache call slower than this is given up (it only costs the lookup it would save). */
const KEY_CACHE_TIMEOUT_MS = 50;

const UNKNOWN: Verification = { ok: false, reason: "unknown" };
const RATE_LIMITED: Verification = { ok: false, reason: "rate_limited" };

/**
 * The active key with this hash, from a replica; from the primary too when the replica
 * has no such row and the key may be new (only a key whose tag our secret made can be).
 * Null: no such key, or revoked.
 */
async function lookUp(env: Env, keyHash: string, mayBeNew: boolean): Promise<ActiveKey | null> {
  const row =
    (await findApiKeyByHash(openSession(env.DB, "first-unconstrained"), keyHash)) ??
    (mayBeNew ? await findApiKeyByHash(openSession(env.DB, "first-primary"), keyHash) : null);
  if (!row || row.revoked) return null;
  const expiresAt = row.expiresAt === null ? null : row.expiresAt * 1000;
  return { id: row.id, owner: row.owner, scopes: row.scopes, expiresAt, audience: row.audience };
}

/** What D1's word on a key (null: no active key) means at `now`. */
function verificationOf(key: ActiveKey | null, now: number): Verification {
  if (key === null) return UNKNOWN;
  if (key.expiresAt !== null && now >= key.expiresAt) return { ok: false, reason: "expired" };
  return {
    ok: true,
    key: { id: key.id, owner: key.owner, scopes: key.scopes, audience: key.audience },
  };
}

export function createApiKeyVerifier(
  clock: Clock,
  options: {
    /** The location's Cache API for key records; `caches.open(KEY_CACHE_NAME)` by default. */
    cache?: () => EdgeCache | Promise<EdgeCache>;
    log?: Logger;
    ttlMs?: number;
    unknownTtlMs?: number;
    maxEntries?: number;
  } = {},
): ApiKeyVerifier {
  const log = options.log ?? (() => {});
  // Keyed by the key's hash, never the key.
  const keys = createTieredCache({
    name: KEY_CACHE_NAME,
    schema: ActiveKeySchema,
    clock,
    ttlMs: options.ttlMs ?? AUTH_CACHE_TTL_MS,
    missTtlMs: options.unknownTtlMs ?? AUTH_UNKNOWN_TTL_MS,
    maxEntries: options.maxEntries ?? AUTH_CACHE_MAX_ENTRIES,
    timeoutMs: KEY_CACHE_TIMEOUT_MS,
    cache: options.cache,
    log,
  });

  /** True when the client address may go on; counts one invalid key (or lookup) against it. */
  const withinLimit = async (ctx: VerifyContext): Promise<boolean> => {
    try {
      const { success } = await ctx.env.INVALID_KEY_LIMITER.limit({
        key: `ip:${addressBucket(ctx.clientAddress)}`,
      });
      return success;
    } catch (err) {
      // A protective limiter that fails must not lock valid clients out.
      log({ level: "warn", msg: "invalid-key limiter failed", error: errorText(err) });
      return true;
    }
  };

  /** A refusal, counted against the address: 429 instead once it is over its limit. */
  const refuse = async (verification: Verification, ctx: VerifyContext) =>
    (await withinLimit(ctx)) ? verification : RATE_LIMITED;

  return {
    async verify(token, ctx) {
      const keyHash = await hashApiKey(token);
      // Memory first: it only holds tokens that passed the format check below, so a key
      // this isolate knows skips the tag's HMAC on every request of the steady state.
      let key = keys.peek(keyHash);
      let counted = false;
      if (key === undefined) {
        const format = await keyFormat(token, tagSecrets(ctx.env), ctx.env.ENVIRONMENT);
        if (format === "invalid") return refuse(UNKNOWN, ctx);
        ctx.lookingUp?.();
        key = await keys.read(keyHash, ctx);
        if (key === undefined) {
          // A lookup counts against the address, before it is made.
          if (!(await withinLimit(ctx))) return RATE_LIMITED;
          counted = true;
          key = await keys.load(keyHash, ctx, () => lookUp(ctx.env, keyHash, format === "tagged"));
        }
      }
      const verification = verificationOf(key, clock());
      return verification.ok || counted ? verification : refuse(verification, ctx);
    },
  };
}
