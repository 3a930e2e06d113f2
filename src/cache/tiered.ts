// A tiered cache of what an origin says about a key: isolate memory, then the location's Cache
// API, then the origin; every tier counts an entry's age from the origin's response.
import * as z from "zod/mini";
import type { Clock } from "../clock.ts";
import { sha256Hex } from "../encoding.ts";
import { errorText, type Logger } from "../log.ts";
import { boundedMap } from "./bounded-map.ts";
import { type EdgeCache, withTimeout } from "./edge-cache.ts";

export interface TieredCacheOptions<V> {
  /**
   * The location's cache (`caches.open(name)`, apart from `caches.default`) and the path
   * of its entries. Give a new name when the meaning of a value changes.
   */
  name: string;
  /** What a value read back from the location's cache must be; anything else is a miss. */
  schema: z.ZodMiniType<V>;
  clock: Clock;
  /** How long a value is used, counted from the origin's response (milliseconds). */
  ttlMs: number;
  /** How long the origin's "none" (null) is used, counted the same way. */
  missTtlMs: number;
  /** Entries in isolate memory, for values and for misses each: misses never evict values. */
  maxEntries: number;
  /** A location cache call slower than this is given up (it costs only what it would save). */
  timeoutMs: number;
  /** The location's cache; `caches.open(name)` by default. */
  cache?: (() => EdgeCache | Promise<EdgeCache>) | undefined;
  log: Logger;
}

/** Where a request gets a response: its origin names the location's entries. */
export interface CacheContext {
  origin: string;
  /** Runs work once the response is built, so it never competes with the response's own trips. */
  afterResponse(work: () => Promise<unknown>): void;
}

interface Entry<V> {
  /** When the origin responded (milliseconds). */
  readAt: number;
  value: V | null;
}

/** Each tier returns a value, null when the origin has none, undefined when it does not know. */
export function createTieredCache<V>(options: TieredCacheOptions<V>) {
  const { name, clock, timeoutMs, log } = options;
  const entrySchema = z.object({ readAt: z.number(), value: z.nullable(options.schema) });
  const values = boundedMap<string, Entry<V>>(options.maxEntries);
  const misses = boundedMap<string, Entry<V>>(options.maxEntries);
  const loading = new Map<string, Promise<V | null>>();
  let opened: Promise<EdgeCache> | undefined;
  const location = () => {
    // A cache that cannot be opened only costs the lookups it would have saved.
    opened ??= Promise.resolve().then(() => options.cache?.() ?? caches.open(name));
    return opened;
  };

  const expiry = (entry: Entry<V>) =>
    entry.readAt + (entry.value === null ? options.missTtlMs : options.ttlMs);
  const fresh = (entry: Entry<V> | undefined) =>
    entry !== undefined && clock() < expiry(entry) ? entry : undefined;
  const inMemory = (key: string) => fresh(values.get(key) ?? misses.get(key));
  const remember = (key: string, entry: Entry<V>) => {
    (entry.value === null ? values : misses).delete(key);
    (entry.value === null ? misses : values).set(key, entry);
  };
  const entryUrl = async (origin: string, key: string) =>
    `${origin}/_internal/${name}/${await sha256Hex(`${name}:${key}`)}`;
  const warn = (msg: string, err: unknown) => log({ level: "warn", msg, error: errorText(err) });

  const fromLocation = async (url: string): Promise<Entry<V> | undefined> => {
    try {
      const hit = await withTimeout(
        location().then((c) => c.match(url)),
        timeoutMs,
      );
      if (!hit?.ok) return undefined;
      const parsed = entrySchema.safeParse(await hit.json());
      return parsed.success ? (parsed.data as Entry<V>) : undefined;
    } catch (err) {
      warn(`${name} cache match failed`, err);
      return undefined;
    }
  };

  const keepInLocation = async (url: string, entry: Entry<V>, context: CacheContext) => {
    const seconds = Math.ceil((expiry(entry) - clock()) / 1000);
    if (seconds <= 0) return;
    const response = new Response(JSON.stringify(entry), {
      headers: { "Content-Type": "application/json", "Cache-Control": `max-age=${seconds}` },
    });
    const put = () =>
      withTimeout(
        location().then((c) => c.put(url, response)),
        timeoutMs,
      ).catch((err: unknown) => warn(`${name} cache put failed`, err));
    if (entry.value === null) await put();
    else context.afterResponse(put);
  };

  return {
    /** What isolate memory holds for `key`, with no I/O at all. */
    peek: (key: string): V | null | undefined => inMemory(key)?.value,

    /** Isolate memory, then the location's cache (a hit is copied into memory). */
    async read(key: string, context: CacheContext): Promise<V | null | undefined> {
      const known = inMemory(key);
      if (known) return known.value;
      const cached = fresh(await fromLocation(await entryUrl(context.origin, key)));
      if (cached) remember(key, cached);
      return cached?.value;
    },

    /**
     * The origin's response, cached in both tiers: a value put into the location's cache after
     * the response, a miss before it (so the location knows it by the time a client can
     * repeat the key). One call per key at a time in an isolate; callers meanwhile share
     * it, and a load that finished is in memory before it stops being shared, so a
     * latecomer never starts a second one.
     */
    load(key: string, context: CacheContext, origin: () => Promise<V | null>): Promise<V | null> {
      const known = inMemory(key);
      if (known) return Promise.resolve(known.value);
      let shared = loading.get(key);
      if (!shared) {
        shared = (async () => {
          const entry: Entry<V> = { readAt: clock(), value: await origin() };
          remember(key, entry);
          await keepInLocation(await entryUrl(context.origin, key), entry, context);
          return entry.value;
        })().finally(() => loading.delete(key));
        loading.set(key, shared);
      }
      return shared;
    },
  };
}
