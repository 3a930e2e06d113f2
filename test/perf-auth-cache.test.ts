// Issue 4, "cheap auth", for the first tier of key verification, the isolate's memory
// (bounded; a valid key kept at most AUTH_CACHE_TTL_MS, a refusal AUTH_UNKNOWN_TTL_MS):
// a key's second request costs no D1 query for auth; a revoked key is refused once the
// TTL has passed. The location's Cache API tier is switched off here (it has its own
// tests in test/edge-trips.test.ts). Real D1 throughout, instrumented (every statement is
// counted), with the app's injectable clock standing in for the passage of time.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { untaggedApiKey } from "../src/auth/keys.ts";
import { createApiKeyVerifier } from "../src/auth/verifier.ts";
import { AUTH_CACHE_MAX_ENTRIES, AUTH_CACHE_TTL_MS, AUTH_UNKNOWN_TTL_MS } from "../src/config.ts";
import type { Pet } from "../src/pets/schemas.ts";
import {
  createCheckedApp,
  createKey,
  expectError,
  makeRequest,
  revokeKey,
  unknownKey,
} from "./helpers.ts";
import { Recorder } from "./support/instrumentation.ts";
import { NO_EDGE_CACHE } from "./support/instrumented-app.ts";

/** The real app with a hand-driven clock, over an instrumented D1. */
function harness(options: { maxEntries?: number } = {}) {
  let now = Date.now();
  const clock = () => now;
  const recorder = new Recorder();
  const app = createCheckedApp({
    clock,
    log: () => {},
    // The isolate's memory is under test, not the edge cache (which would answer the
    // page) nor the location's key cache (which would answer for an evicted key).
    edgeCache: () => NO_EDGE_CACHE,
    verifier: createApiKeyVerifier(clock, {
      cache: () => NO_EDGE_CACHE,
      ...(options.maxEntries ? { maxEntries: options.maxEntries } : {}),
    }),
  });
  const appEnv: Env = { ...env, DB: recorder.d1(env.DB) };
  return {
    advance(ms: number) {
      now += ms;
    },
    /** GET /v1/pets with `key`; returns the response and the statements it ran. */
    async list(key: string) {
      recorder.reset();
      const response = await app.fetch(makeRequest("/v1/pets?limit=2", { key }), appEnv);
      const ran = recorder.sql();
      return {
        response,
        authQueries: ran.filter((s) => /\bFROM api_keys\b/.test(s)).length,
        statements: ran,
      };
    },
  };
}

async function expectPage(response: Response): Promise<void> {
  const text = await response.text();
  expect(response.status, text).toBe(200);
  const pets = JSON.parse(text) as Pet[];
  expect(pets.map((p) => p.name)).toEqual(["cache-0", "cache-1"]);
}

beforeAll(async () => {
  await env.DB.prepare(
    "INSERT INTO pets (name, category_id, status, created_at) VALUES ('cache-0', 1, 'available', 0), ('cache-1', 1, 'sold', 0), ('cache-2', 2, 'pending', 0)",
  ).run();
});

describe("the API key cache", () => {
  it("is bounded, with a TTL of at most 60 s, and at most 10 s for a refusal", () => {
    expect(AUTH_CACHE_TTL_MS).toBeGreaterThan(0);
    expect(AUTH_CACHE_TTL_MS).toBeLessThanOrEqual(60_000);
    expect(AUTH_UNKNOWN_TTL_MS).toBeGreaterThan(0);
    expect(AUTH_UNKNOWN_TTL_MS).toBeLessThanOrEqual(10_000);
    expect(AUTH_CACHE_MAX_ENTRIES).toBeGreaterThan(0);
    expect(AUTH_CACHE_MAX_ENTRIES).toBeLessThanOrEqual(100_000);
  });

  it("verifies a key against D1 once; the next request runs only the operation's query", async () => {
    const { key } = await createKey("cache");
    const h = harness();
    const first = await h.list(key);
    await expectPage(first.response);
    expect(first.authQueries).toBe(1);

    h.advance(1_000);
    const second = await h.list(key);
    await expectPage(second.response);
    expect(second.authQueries).toBe(0);
    // Steady state: the listing query is the only statement of the request.
    expect(second.statements).toHaveLength(1);
    expect(second.statements[0]).toMatch(/^SELECT .* FROM pets WHERE id > \?1 ORDER BY id/);
  });

  it("refuses a revoked key once the TTL has passed (and serves it from cache until then)", async () => {
    const { key, id } = await createKey("to-revoke");
    const h = harness();
    await expectPage((await h.list(key)).response);

    expect(await revokeKey(id)).toBe(true);
    // Within the TTL the cached verification stands: that is the revocation bound.
    h.advance(AUTH_CACHE_TTL_MS - 1_000);
    const cached = await h.list(key);
    await expectPage(cached.response);
    expect(cached.authQueries).toBe(0);

    h.advance(1_001); // now past the TTL: verified against D1 again, and refused
    const refused = await h.list(key);
    expect(refused.authQueries).toBe(1);
    await expectError(refused.response, 401, "unauthorized", /invalid or revoked/);
    expect(refused.response.headers.get("WWW-Authenticate")).toBe(
      'Bearer realm="petstore", error="invalid_token"',
    );
    // The refusal is remembered (never as valid): still refused, not looked up again...
    const again = await h.list(key);
    await expectError(again.response, 401, "unauthorized");
    expect(again.authQueries).toBe(0);
    // ...until AUTH_UNKNOWN_TTL_MS after the lookup that refused it.
    h.advance(AUTH_UNKNOWN_TTL_MS);
    const later = await h.list(key);
    await expectError(later.response, 401, "unauthorized");
    expect(later.authQueries).toBe(1);
  });

  it("re-verifies a still-valid key after the TTL and caches it again", async () => {
    const { key } = await createKey("refresh");
    const h = harness();
    expect((await h.list(key)).authQueries).toBe(1);
    h.advance(AUTH_CACHE_TTL_MS + 1);
    const refreshed = await h.list(key);
    await expectPage(refreshed.response);
    expect(refreshed.authQueries).toBe(1);
    h.advance(1);
    expect((await h.list(key)).authQueries).toBe(0);
  });

  it("remembers an unknown key as unknown for at most 10 s", async () => {
    const h = harness();
    // A key of the format before tags: looked up on a replica only (one query).
    const untagged = untaggedApiKey();
    // A key with a valid tag: it may be seconds old, so the primary is asked too (two).
    const tagged = await unknownKey();
    for (const [unknown, lookups] of [
      [untagged, 1],
      [tagged, 2],
    ] as const) {
      const first = await h.list(unknown);
      await expectError(first.response, 401, "unauthorized");
      expect(first.authQueries).toBe(lookups);
      h.advance(AUTH_UNKNOWN_TTL_MS - 1);
      const remembered = await h.list(unknown);
      await expectError(remembered.response, 401, "unauthorized");
      expect(remembered.authQueries).toBe(0);
      h.advance(1);
      expect((await h.list(unknown)).authQueries).toBe(lookups);
    }
  });

  it("evicts the oldest entry when full (bounded size)", async () => {
    const keys = await Promise.all([createKey("a"), createKey("b"), createKey("c")]);
    const h = harness({ maxEntries: 2 });
    for (const { key } of keys) expect((await h.list(key)).authQueries).toBe(1);
    // b and c are cached; a was evicted when c came in.
    expect((await h.list(keys[2].key)).authQueries).toBe(0);
    expect((await h.list(keys[1].key)).authQueries).toBe(0);
    const evicted = await h.list(keys[0].key);
    await expectPage(evicted.response);
    expect(evicted.authQueries).toBe(1);
  });
});
