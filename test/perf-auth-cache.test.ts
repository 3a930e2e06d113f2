// Issue 4, "cheap auth": a verified key is cached in the isolate (bounded, TTL <= 60 s),
// so a key's second request costs no D1 query for auth; a revoked key is refused once
// the TTL has passed. Real D1 throughout, instrumented (every prepared statement is
// counted), with the app's injectable clock standing in for the passage of time.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { generateApiKey } from "../src/auth/keys.ts";
import { createApiKeyVerifier } from "../src/auth/verifier.ts";
import { AUTH_CACHE_MAX_ENTRIES, AUTH_CACHE_TTL_MS } from "../src/config.ts";
import type { Pet } from "../src/pets/schemas.ts";
import { createCheckedApp, createKey, expectError, makeRequest, revokeKey } from "./helpers.ts";
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
    // The auth cache is under test, not the edge cache (which would answer the page).
    edgeCache: () => NO_EDGE_CACHE,
    ...(options.maxEntries
      ? { verifier: createApiKeyVerifier(clock, { maxEntries: options.maxEntries }) }
      : {}),
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
  it("is bounded, with a TTL of at most 60 s", () => {
    expect(AUTH_CACHE_TTL_MS).toBeGreaterThan(0);
    expect(AUTH_CACHE_TTL_MS).toBeLessThanOrEqual(60_000);
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
    // Refused keys are not cached as valid: still refused, still checked.
    const again = await h.list(key);
    await expectError(again.response, 401, "unauthorized");
    expect(again.authQueries).toBe(1);
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

  it("never caches an unknown key", async () => {
    const h = harness();
    const unknown = generateApiKey();
    for (let i = 0; i < 2; i++) {
      const result = await h.list(unknown);
      await expectError(result.response, 401, "unauthorized");
      expect(result.authQueries).toBe(1);
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
