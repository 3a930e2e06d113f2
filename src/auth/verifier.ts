// Verifies API keys at the edge, in tiers, so that no answer waits for the D1 primary
// (docs/keys.md, "Verification in tiers"):
//   1. isolate memory (asked first: it holds only tokens that passed tier 0 before);
//   0. the token's format (and the tag of a new key): anything else is refused with no
//      lookup at all;
//   2. the location's Cache API, shared by every isolate of the location (a named cache,
//      apart from the cache that fetch() and public URLs use; keyed by a digest of the
//      key's hash);
//   3. a D1 read replica (Sessions API, "first-unconstrained"); only a key with a valid
//      tag that the replica does not have (created seconds ago) is then looked up on the
//      primary, once.
// Every tier keeps what D1 said with the instant D1 said it: a valid key's record is
// used for AUTH_CACHE_TTL_MS from that instant, a refusal's for AUTH_UNKNOWN_TTL_MS,
// whichever tier it is found in (no tier restarts the count), and never past the expiry
// it knew. Refused tokens and D1 lookups count against the client address's
// invalid-key limiter, which answers 429 before any lookup once it is exceeded.

import { type EdgeCache, withTimeout } from "../cache/edge-cache.ts";
import type { Clock } from "../clock.ts";
import { AUTH_CACHE_MAX_ENTRIES, AUTH_CACHE_TTL_MS, AUTH_UNKNOWN_TTL_MS } from "../config.ts";
import { findApiKeyByHash } from "../db/api-keys.ts";
import { openSession } from "../db/database.ts";
import { sha256Hex } from "../encoding.ts";
import { errorText, type Logger } from "../log.ts";
import { hashApiKey, keyFormat, tagSecrets } from "./keys.ts";
import { isScope, type Scope } from "./scopes.ts";

/** What the rest of the request knows about the caller's key. */
export interface VerifiedKey {
  id: number;
  scopes: readonly Scope[];
}

export type Verification =
  | { ok: true; key: VerifiedKey }
  /**
   * `unknown`: not a key (wrong format or tag, no such key, or revoked). `expired`: past
   * its expiry instant. `rate_limited`: the client address sent too many invalid keys.
   */
  | { ok: false; reason: "unknown" | "expired" | "rate_limited" };

/** What verification needs of the request. */
export interface VerifyContext {
  env: Env;
  /** CF-Connecting-IP: whose invalid keys are counted ("" when absent). */
  clientAddress: string;
  /** The request's origin: the Cache API entries of the location live under it. */
  origin: string;
  /**
   * Work to start once the answer is built (cache puts): started after it, it never
   * competes with the answer's own trips.
   */
  afterAnswer(work: () => Promise<unknown>): void;
}

export interface ApiKeyVerifier {
  verify(token: string, context: VerifyContext): Promise<Verification>;
}

/** What D1 said about one key hash, and when (milliseconds). */
interface KeyRecord {
  readAt: number;
  /** Null: no active key (none, or revoked). */
  key: { id: number; scopes: Scope[]; expiresAt: number | null } | null;
}

/** A named cache: apart from `caches.default`, which fetch() and public URLs share. */
export const KEY_CACHE_NAME = "api-key-verification";
/** Versioned: a change of KeyRecord's shape starts a new set of entries. */
const KEY_CACHE_PATH = "/_internal/api-key-verification/v1/";
/** A cache call slower than this is given up (it only costs the lookup it would save). */
const KEY_CACHE_TIMEOUT_MS = 50;

const encoder = new TextEncoder();

function sameHash(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  return x.byteLength === y.byteLength && crypto.subtle.timingSafeEqual(x, y);
}

/** A record read back from the Cache API, or undefined when it is not one of ours. */
function parseRecord(value: unknown): KeyRecord | undefined {
  const r = value as KeyRecord;
  if (typeof r?.readAt !== "number") return undefined;
  if (r.key === null) return { readAt: r.readAt, key: null };
  const k = r.key;
  if (
    typeof k?.id !== "number" ||
    !Array.isArray(k.scopes) ||
    !k.scopes.every((s) => typeof s === "string" && isScope(s)) ||
    !(k.expiresAt === null || typeof k.expiresAt === "number")
  ) {
    return undefined;
  }
  return { readAt: r.readAt, key: { id: k.id, scopes: k.scopes, expiresAt: k.expiresAt } };
}

/** A bounded map: the oldest entry goes when it is full. */
function boundedMap<V>(maxEntries: number) {
  const map = new Map<string, V>();
  return {
    get: (k: string) => map.get(k),
    delete: (k: string) => map.delete(k),
    set(k: string, v: V) {
      map.delete(k);
      if (map.size >= maxEntries) {
        const oldest = map.keys().next().value;
        if (oldest !== undefined) map.delete(oldest);
      }
      map.set(k, v);
    },
  };
}

const UNKNOWN: Verification = { ok: false, reason: "unknown" };

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
  const ttlMs = options.ttlMs ?? AUTH_CACHE_TTL_MS;
  const unknownTtlMs = options.unknownTtlMs ?? AUTH_UNKNOWN_TTL_MS;
  const maxEntries = options.maxEntries ?? AUTH_CACHE_MAX_ENTRIES;
  const log = options.log ?? (() => {});
  let opened: Promise<EdgeCache> | undefined;
  const cache = () => {
    // A cache that cannot be opened only costs the lookups it would have saved.
    opened ??= Promise.resolve().then(() =>
      options.cache ? options.cache() : caches.open(KEY_CACHE_NAME),
    );
    return opened;
  };
  // Keyed by the key's hash, never the key. Refusals have their own map, so a flood of
  // unknown tokens cannot evict the valid keys.
  const valid = boundedMap<KeyRecord>(maxEntries);
  const refused = boundedMap<KeyRecord>(maxEntries);

  /** When `record` stops being usable (ms): its tier lifetime, and a valid key's expiry. */
  const usableUntil = (record: KeyRecord) =>
    record.key === null
      ? record.readAt + unknownTtlMs
      : Math.min(record.readAt + ttlMs, record.key.expiresAt ?? Number.POSITIVE_INFINITY);
  /** Whether `record` may still answer at `now` (an expired key's record answers "expired"). */
  const fresh = (record: KeyRecord, now: number) =>
    now < record.readAt + (record.key === null ? unknownTtlMs : ttlMs);

  const remember = (keyHash: string, record: KeyRecord) => {
    if (record.key === null) {
      valid.delete(keyHash);
      refused.set(keyHash, record);
    } else {
      refused.delete(keyHash);
      valid.set(keyHash, record);
    }
  };

  const warn = (msg: string, err: unknown) =>
    log({
      level: "warn",
      msg,
      error: errorText(err),
    });

  const cacheUrl = async (origin: string, keyHash: string) =>
    `${origin}${KEY_CACHE_PATH}${await sha256Hex(`api-key-verification/v1:${keyHash}`)}`;

  const fromCache = async (url: string): Promise<KeyRecord | undefined> => {
    try {
      const hit = await withTimeout(
        cache().then((c) => c.match(url)),
        KEY_CACHE_TIMEOUT_MS,
      );
      return hit?.ok ? parseRecord(await hit.json()) : undefined;
    } catch (err) {
      warn("key cache match failed", err);
      return undefined;
    }
  };

  /**
   * Puts `record` into the location's cache. A valid key's after the answer (it must not
   * slow the answer); a refusal's before it, so a client repeating an unknown key after
   * its answer finds the refusal kept in every isolate of the location.
   */
  const keep = async (url: string, record: KeyRecord, now: number, ctx: VerifyContext) => {
    const seconds = Math.ceil((usableUntil(record) - now) / 1000);
    if (seconds <= 0) return;
    const response = new Response(JSON.stringify(record), {
      headers: { "Content-Type": "application/json", "Cache-Control": `max-age=${seconds}` },
    });
    const put = () =>
      withTimeout(
        cache().then((c) => c.put(url, response)),
        KEY_CACHE_TIMEOUT_MS,
      ).catch((err: unknown) => warn("key cache put failed", err));
    if (record.key === null) await put();
    else ctx.afterAnswer(put);
  };

  /** True when the client address may go on; counts one invalid key (or lookup) against it. */
  const withinLimit = async (ctx: VerifyContext): Promise<boolean> => {
    try {
      const { success } = await ctx.env.INVALID_KEY_LIMITER.limit({
        key: `ip:${ctx.clientAddress}`,
      });
      return success;
    } catch (err) {
      // A protective limiter that fails must not lock valid clients out.
      warn("invalid-key limiter failed", err);
      return true;
    }
  };

  /** A refusal, or 429 once the address is over its limit of invalid keys. */
  const refuse = async (verification: Verification, ctx: VerifyContext) =>
    (await withinLimit(ctx)) ? verification : ({ ok: false, reason: "rate_limited" } as const);

  const answer = (record: KeyRecord, now: number): Verification => {
    if (record.key === null) return UNKNOWN;
    if (record.key.expiresAt !== null && now >= record.key.expiresAt) {
      return { ok: false, reason: "expired" };
    }
    return { ok: true, key: { id: record.key.id, scopes: record.key.scopes } };
  };

  const fromD1 = async (
    env: Env,
    keyHash: string,
    mayBeNew: boolean,
    now: number,
  ): Promise<KeyRecord> => {
    let row = await findApiKeyByHash(openSession(env.DB, "first-unconstrained"), keyHash);
    // Only a key whose tag our secret made can be this new: nobody else can make one.
    if (!row && mayBeNew) {
      row = await findApiKeyByHash(openSession(env.DB, "first-primary"), keyHash);
    }
    if (!row || row.revoked || !sameHash(row.keyHash, keyHash)) return { readAt: now, key: null };
    return {
      readAt: now,
      key: {
        id: row.id,
        scopes: row.scopes,
        expiresAt: row.expiresAt === null ? null : row.expiresAt * 1000,
      },
    };
  };

  return {
    async verify(token, ctx) {
      const keyHash = await hashApiKey(token);
      const now = clock();
      const settle = (record: KeyRecord) => {
        const verification = answer(record, now);
        return verification.ok ? verification : refuse(verification, ctx);
      };

      // Memory first: it only holds tokens that passed the format check below, so a key
      // this isolate knows skips the tag's HMAC on every request of the steady state.
      const known = valid.get(keyHash) ?? refused.get(keyHash);
      if (known && fresh(known, now)) return settle(known);

      const format = await keyFormat(token, tagSecrets(ctx.env), ctx.env.ENVIRONMENT);
      if (format === "invalid") return refuse(UNKNOWN, ctx);

      const url = await cacheUrl(ctx.origin, keyHash);
      const cached = await fromCache(url);
      if (cached && fresh(cached, now)) {
        remember(keyHash, cached);
        return settle(cached);
      }

      if (!(await withinLimit(ctx))) return { ok: false, reason: "rate_limited" };
      const record = await fromD1(ctx.env, keyHash, format === "tagged", now);
      remember(keyHash, record);
      await keep(url, record, now, ctx);
      return answer(record, now);
    },
  };
}
