// Issue 4, "cheap auth": with the isolate's memory, the first tier of key verification
// (bounded; a key cached AUTH_CACHE_TTL_MS, a refusal AUTH_UNKNOWN_TTL_MS), a key's second
// request costs no D1 query for auth. The edge and key caches are off here;
// test/edge-trips.test.ts counts every tier, revoked and unknown keys included.
import { env } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { createApiKeyVerifier } from "../src/auth/verifier.ts";
import { AUTH_CACHE_MAX_ENTRIES, AUTH_CACHE_TTL_MS, AUTH_UNKNOWN_TTL_MS } from "../src/config.ts";
import type { Pet } from "../src/pets/schemas.ts";
import { createKey } from "./helpers.ts";
import { instrumentedApp, NO_EDGE_CACHE } from "./support/instrumented-app.ts";

/** One isolate of the real app with a hand-driven clock, its memory the only cache. */
function isolate(maxEntries?: number) {
  let now = Date.now();
  const clock = () => now;
  const verifier = createApiKeyVerifier(clock, {
    cache: () => NO_EDGE_CACHE,
    ...(maxEntries ? { maxEntries } : {}),
  });
  const app = instrumentedApp({ clock, cache: NO_EDGE_CACHE, verifier });
  return {
    advance(ms: number) {
      now += ms;
    },
    /** GET /v1/pets with `key`: the response, and the statements it waited for. */
    async list(key: string) {
      const { response, trips } = await app.exchange("/v1/pets?limit=2", { key });
      const statements = trips.flatMap((t) => t.statements.map((s) => s.sql));
      const authQueries = statements.filter((s) => /\bFROM api_keys\b/.test(s)).length;
      return { response, statements, authQueries };
    },
  };
}

async function expectPage(response: Response): Promise<void> {
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect((JSON.parse(text) as Pet[]).map((p) => p.name)).toEqual(["cache-0", "cache-1"]);
}

beforeAll(async () => {
  await env.DB.prepare(
    "INSERT INTO pets (name, category_id, status, created_at) VALUES ('cache-0', 1, 'available', 0), ('cache-1', 1, 'sold', 0), ('cache-2', 2, 'pending', 0)",
  ).run();
});

it("the API key cache is bounded, with a TTL, and at most 10 s for a refusal", () => {
  expect(AUTH_CACHE_TTL_MS).toBeGreaterThan(0); // at most 30 s: edge-trips.test.ts
  expect(AUTH_UNKNOWN_TTL_MS).toBeGreaterThan(0);
  expect(AUTH_UNKNOWN_TTL_MS).toBeLessThanOrEqual(10_000);
  expect(AUTH_CACHE_MAX_ENTRIES).toBeGreaterThan(0);
  expect(AUTH_CACHE_MAX_ENTRIES).toBeLessThanOrEqual(100_000);
});

it("verifies a key against D1 once a TTL; meanwhile a request runs only the operation's query", async () => {
  const { key } = await createKey("cache");
  const h = isolate();
  const first = await h.list(key);
  await expectPage(first.response);
  expect(first.authQueries).toBe(1);

  h.advance(AUTH_CACHE_TTL_MS - 1);
  const second = await h.list(key);
  await expectPage(second.response);
  // Steady state: the listing query is the only statement of the request.
  expect(second.statements).toHaveLength(1);
  expect(second.statements[0]).toMatch(/^SELECT .* FROM pets WHERE id > \?1 ORDER BY id/);

  h.advance(1); // the TTL has passed: verified against D1 again, and cached again
  expect((await h.list(key)).authQueries).toBe(1);
  expect((await h.list(key)).authQueries).toBe(0);
});

it("evicts the oldest entry when full (bounded size)", async () => {
  const keys = await Promise.all([createKey("a"), createKey("b"), createKey("c")]);
  const h = isolate(2);
  for (const { key } of keys) expect((await h.list(key)).authQueries).toBe(1);
  // b and c are cached; a was evicted when c came in.
  expect((await h.list(keys[2].key)).authQueries).toBe(0);
  expect((await h.list(keys[1].key)).authQueries).toBe(0);
  const evicted = await h.list(keys[0].key);
  await expectPage(evicted.response);
  expect(evicted.authQueries).toBe(1);
});
