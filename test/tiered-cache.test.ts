// The tiered cache (src/cache/tiered.ts) on its own: what the location's cache hands back
// is used only if it has the value's shape and only for its time from the origin's response;
// a location cache that fails or hangs costs only what it would have saved; concurrent
// loads share one call to the origin, and a failed one is not cached. The API key verifier
// built on it is tested through HTTP in edge-trips.test.ts and perf-auth-cache.test.ts.
import { describe, expect, it, vi } from "vitest";
import * as z from "zod/mini";
import type { EdgeCache } from "../src/cache/edge-cache.ts";
import { type CacheContext, createTieredCache } from "../src/cache/tiered.ts";
import { sha256Hex } from "../src/encoding.ts";
import type { LogLine } from "../src/log.ts";

const place: CacheContext = { origin: "https://tiers.test", afterResponse: (work) => void work() };

/** A cache over `location` with a clock the test moves, and what it logged. */
function tiered(location: () => EdgeCache | Promise<EdgeCache>, start = 1_000_000) {
  const logs: LogLine[] = [];
  const clock = { now: start };
  const cache = createTieredCache({
    name: "tiered-test",
    schema: z.object({ n: z.number() }),
    clock: () => clock.now,
    ttlMs: 30_000,
    missTtlMs: 10_000,
    maxEntries: 10,
    timeoutMs: 50,
    cache: location,
    log: (line) => logs.push(line),
  });
  return { cache, clock, logs };
}

it("another isolate of the location reads a cached value for its time from the origin's response; a miss for its shorter time", async () => {
  const location = await caches.open(`tiered-${crypto.randomUUID()}`);
  const first = tiered(() => location);
  expect(await first.cache.load("a", place, async () => ({ n: 1 }))).toEqual({ n: 1 });
  expect(await first.cache.load("b", place, async () => null)).toBeNull();
  first.clock.now += 9_999;
  const second = tiered(() => location, first.clock.now);
  expect(second.cache.peek("a")).toBeUndefined(); // memory is the isolate's own
  expect(await second.cache.read("a", place)).toEqual({ n: 1 });
  expect(await second.cache.read("b", place)).toBeNull();
  // The copies keep the origin's instant: neither tier extends the other.
  second.clock.now += 1;
  expect(await second.cache.read("b", place)).toBeUndefined();
  second.clock.now += 20_000;
  expect(second.cache.peek("a")).toBeUndefined();
  expect(await second.cache.read("a", place)).toBeUndefined();
});

it("an entry of another shape in the location's cache is a miss", async () => {
  for (const value of [{ n: "1" }, { m: 1 }, "1"]) {
    const cached = JSON.stringify({ readAt: 1_000_000, value });
    const { cache } = tiered(() => ({
      match: async () => new Response(cached),
      put: async () => {},
    }));
    expect(await cache.read("a", place), cached).toBeUndefined();
  }
});

it("a location cache that throws or hangs costs only what it would have saved", async () => {
  const failing = tiered(() => ({
    match: async () => {
      throw new Error("cache down");
    },
    put: async () => {
      throw new Error("cache down");
    },
  }));
  expect(await failing.cache.read("a", place)).toBeUndefined();
  expect(await failing.cache.load("a", place, async () => ({ n: 2 }))).toEqual({ n: 2 });
  expect(await failing.cache.load("m", place, async () => null)).toBeNull();
  expect(failing.logs.map((l) => [l.level, l.msg, l.error])).toEqual([
    ["warn", "tiered-test cache match failed", "Error: cache down"],
    ["warn", "tiered-test cache put failed", "Error: cache down"],
    ["warn", "tiered-test cache put failed", "Error: cache down"],
  ]);
  const never = new Promise<never>(() => {});
  const hanging = tiered(() => ({ match: () => never, put: () => never }));
  expect(await hanging.cache.read("a", place)).toBeUndefined();
  expect(await hanging.cache.load("m", place, async () => null)).toBeNull();
});

it("concurrent loads of one key share one call to the origin; a failed one is not cached", async () => {
  const { cache } = tiered(() => ({ match: async () => undefined, put: async () => {} }));
  let calls = 0;
  const origin = async () => {
    calls += 1;
    if (calls === 1) throw new Error("D1 down");
    return { n: calls };
  };
  const failed = await Promise.allSettled([1, 2, 3].map(() => cache.load("a", place, origin)));
  expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
  const loaded = await Promise.all([1, 2, 3].map(() => cache.load("a", place, origin)));
  expect(loaded).toEqual([{ n: 2 }, { n: 2 }, { n: 2 }]);
  expect(calls).toBe(2);
  expect(cache.peek("a")).toEqual({ n: 2 });
});

/** A location cache that keeps nothing. */
const none = () => ({ match: async () => undefined, put: async () => {} });

describe("isolate memory and the default location", () => {
  it("misses never evict values: a flood of unknown keys leaves the known ones in memory", async () => {
    const { cache } = tiered(none);
    for (const key of ["a", "b"]) await cache.load(key, place, async () => ({ n: 1 }));
    for (let i = 0; i < 25; i++) await cache.load(`unknown-${i}`, place, async () => null);
    expect([cache.peek("a"), cache.peek("b")]).toEqual([{ n: 1 }, { n: 1 }]);
    // Each kind keeps its own newest maxEntries (10).
    expect(cache.peek("unknown-24")).toBeNull();
    expect(cache.peek("unknown-15")).toBeNull();
    expect(cache.peek("unknown-14")).toBeUndefined();
    for (let i = 0; i < 10; i++) await cache.load(`known-${i}`, place, async () => ({ n: i }));
    expect(cache.peek("a")).toBeUndefined();
    expect(cache.peek("known-0")).toEqual({ n: 0 });
  });

  it("a key the origin stops knowing is a miss in memory, and one it comes to know a value", async () => {
    const { cache, clock } = tiered(none);
    await cache.load("a", place, async () => ({ n: 1 }));
    clock.now += 30_000;
    expect(cache.peek("a")).toBeUndefined();
    expect(await cache.load("a", place, async () => null)).toBeNull();
    expect(cache.peek("a")).toBeNull();
    clock.now += 10_000;
    expect(await cache.load("a", place, async () => ({ n: 2 }))).toEqual({ n: 2 });
    expect(cache.peek("a")).toEqual({ n: 2 });
  });

  it("a value that replaces a miss frees the miss's place in memory: the other misses stay", async () => {
    // The location knows "k" as a miss read 9 s ago: fresh for 1 s more.
    const cached = JSON.stringify({ readAt: 1_000_000 - 9_000, value: null });
    const { cache, clock } = tiered(() => ({
      match: async () => new Response(cached),
      put: async () => {},
    }));
    for (let i = 0; i < 9; i++) await cache.load(`m${i}`, place, async () => null);
    expect(await cache.read("k", place)).toBeNull();
    clock.now += 1_000;
    expect(await cache.load("k", place, async () => ({ n: 1 }))).toEqual({ n: 1 });
    await cache.load("n", place, async () => null);
    expect([cache.peek("m0"), cache.peek("n"), cache.peek("k")]).toEqual([null, null, { n: 1 }]);
  });

  it("without a cache given, the location's entries live in caches.open(name), not caches.default", async () => {
    const name = `tiered-default-${crypto.randomUUID()}`;
    const options = {
      name,
      schema: z.object({ n: z.number() }),
      clock: () => 1_000_000,
      ttlMs: 30_000,
      missTtlMs: 10_000,
      maxEntries: 10,
      timeoutMs: 1_000,
      log: () => {},
    };
    const pending: Promise<unknown>[] = [];
    const context: CacheContext = { ...place, afterResponse: (work) => void pending.push(work()) };
    await createTieredCache(options).load("a", context, async () => ({ n: 7 }));
    await Promise.all(pending);
    const url = `${place.origin}/_internal/${name}/${await sha256Hex(`${name}:a`)}`;
    const cached = await (await caches.open(name)).match(url);
    expect(await cached?.json()).toEqual({ readAt: 1_000_000, value: { n: 7 } });
    expect(cached?.headers.get("Cache-Control")).toBe("max-age=30");
    expect(cached?.headers.get("Content-Type")).toBe("application/json");
    expect(await caches.default.match(url)).toBeUndefined();
    // Another isolate of the location finds it there.
    expect(await createTieredCache(options).read("a", place)).toEqual({ n: 7 });
  });
});

describe("what each tier calls", () => {
  /** A location over a real named cache that records each call's kind and key. */
  async function recorded() {
    const cache = await caches.open(`tiered-calls-${crypto.randomUUID()}`);
    const calls: string[] = [];
    const location: EdgeCache = {
      match: (url) => {
        calls.push("match");
        return cache.match(url);
      },
      put: (url, response) => {
        calls.push(`put ${response.headers.get("Cache-Control")}`);
        return cache.put(url, response);
      },
    };
    return { location, calls };
  }

  it("a value is used for ttlMs and a miss for missTtlMs from the origin's response, to the millisecond", async () => {
    const { cache, clock } = tiered(none);
    await cache.load("value", place, async () => ({ n: 1 }));
    await cache.load("miss", place, async () => null);
    clock.now += 9_999;
    expect([cache.peek("value"), cache.peek("miss")]).toEqual([{ n: 1 }, null]);
    clock.now += 1;
    expect([cache.peek("value"), cache.peek("miss")]).toEqual([{ n: 1 }, undefined]);
    clock.now += 19_999;
    expect(cache.peek("value")).toEqual({ n: 1 });
    clock.now += 1;
    expect(cache.peek("value")).toBeUndefined();
  });

  it("memory responds without a call; a value read from the location is cached in memory; a plain miss logs nothing", async () => {
    const { location, calls } = await recorded();
    const first = tiered(() => location);
    const puts: Promise<unknown>[] = [];
    const context: CacheContext = { ...place, afterResponse: (work) => void puts.push(work()) };
    expect(await first.cache.read("a", place)).toBeUndefined();
    expect(await first.cache.load("a", context, async () => ({ n: 1 }))).toEqual({ n: 1 });
    await Promise.all(puts);
    const origin = vi.fn(async () => ({ n: 2 }));
    expect(await first.cache.load("a", place, origin)).toEqual({ n: 1 });
    expect(await first.cache.read("a", place)).toEqual({ n: 1 });
    expect(origin).not.toHaveBeenCalled();
    expect(calls).toEqual(["match", "put max-age=30"]);

    const second = tiered(() => location);
    expect(await second.cache.read("a", place)).toEqual({ n: 1 });
    expect(second.cache.peek("a")).toEqual({ n: 1 });
    expect(await second.cache.read("a", place)).toEqual({ n: 1 });
    expect(calls).toEqual(["match", "put max-age=30", "match"]);
    expect([...first.logs, ...second.logs]).toEqual([]);
  });

  it("a value is put after the response, a miss before it; nothing is put once its time is over", async () => {
    const { location, calls } = await recorded();
    const { cache, clock } = tiered(() => location);
    const later: Array<() => Promise<unknown>> = [];
    const context: CacheContext = { ...place, afterResponse: (work) => void later.push(work) };
    await cache.load("value", context, async () => ({ n: 1 }));
    await cache.load("miss", context, async () => null);
    expect(calls).toEqual(["put max-age=10"]);
    await Promise.all(later.map((work) => work()));
    expect(calls).toEqual(["put max-age=10", "put max-age=30"]);
    // An origin that responds only when the time its response is used for is over.
    const slow = (value: { n: number } | null, ms: number) => async () => {
      clock.now += ms;
      return value;
    };
    await cache.load("slow-value", place, slow({ n: 2 }, 30_000));
    await cache.load("slow-miss", place, slow(null, 10_000));
    expect(calls).toHaveLength(2);
  });
});
