// The invalid-key limiter (issue 15, "Hostile tokens"): an address (CF-Connecting-IP) that
// sends more invalid keys a minute than INVALID_KEY_LIMITER allows gets 429 before any
// lookup; other addresses and keys the location has verified are not affected. Runs in
// the "invalid-key-limit" vitest project, where the limit is TEST_INVALID_KEY_LIMIT.
import { env, exports } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { RATE_LIMIT_RETRY_AFTER_SECONDS } from "../src/config.ts";
import { BASE, createKey, expectError, unknownKey } from "./helpers.ts";
import { type InstrumentedApp, instrumentedApp } from "./support/instrumented-app.ts";
import { freshWindow } from "./support/requests.ts";

const testEnv = env as unknown as {
  TEST_INVALID_KEY_LIMIT?: number;
  TEST_WRANGLER_RATELIMITS?: Record<
    string,
    Array<{ name: string; namespace_id: string; simple: { limit: number; period: number } }>
  >;
};
const LIMIT = testEnv.TEST_INVALID_KEY_LIMIT ?? 0;

beforeAll(() => {
  expect(LIMIT, "run through the invalid-key-limit project of vitest.config.ts").toBeGreaterThan(0);
});

let addresses = 0;
/** An address no other test of this file uses (TEST-NET-2). */
function newAddress(): string {
  addresses += 1;
  return `198.51.100.${addresses}`;
}

function from(ip: string, key: string) {
  return { key, headers: { "CF-Connecting-IP": ip } };
}

async function expectLimited(app: InstrumentedApp, ip: string, key: string) {
  const { response, trips } = await app.exchange("/v1/pets?limit=1", from(ip, key));
  await expectError(response, 429, "rate_limited", /invalid API keys/);
  expect(response.headers.get("Retry-After")).toBe(String(RATE_LIMIT_RETRY_AFTER_SECONDS));
  expect(response.headers.get("WWW-Authenticate")).toBeNull();
  // Before any lookup: no D1 statement, not even after the response.
  expect(trips.filter((t) => t.place !== "cache")).toEqual([]);
  expect(app.recorder.trips.filter((t) => t.place !== "cache")).toEqual([]);
}

/**
 * Spends the rest of `ip`'s allowance (`spent` of it is gone) on format-invalid tokens,
 * each a 401 with no trip at all.
 */
async function exhaust(app: InstrumentedApp, ip: string, spent = 0) {
  for (let i = spent; i < LIMIT; i++) {
    const { response } = await app.exchange("/v1/pets", from(ip, `not-a-key-${i}`));
    await expectError(response, 401, "unauthorized", /invalid or revoked/);
    expect(app.recorder.trips).toEqual([]);
  }
}

it("wrangler.toml declares the limiter in every environment: 60 a minute deployed, at least 10,000 locally; the owner budget above the key's", () => {
  const limits = testEnv.TEST_WRANGLER_RATELIMITS ?? {};
  expect(Object.keys(limits).sort()).toEqual(["local", "production", "staging"]);
  const ids = new Set<string>();
  for (const [environment, entries] of Object.entries(limits)) {
    const limiter = entries.find((e) => e.name === "INVALID_KEY_LIMITER");
    expect(limiter, environment).toBeDefined();
    expect(limiter?.simple.period).toBe(60);
    if (environment === "local") expect(limiter?.simple.limit).toBeGreaterThanOrEqual(10_000);
    else expect(limiter?.simple.limit, environment).toBe(60);
    // The owner budget (src/http/rate-limit.ts) beside the per-key limit, and above it.
    const perKey = entries.find((e) => e.name === "RATE_LIMITER");
    const perOwner = entries.find((e) => e.name === "ACCOUNT_RATE_LIMITER");
    expect(perOwner?.simple.limit, environment).toBeGreaterThan(perKey?.simple.limit ?? Infinity);
    for (const entry of entries) ids.add(entry.namespace_id);
  }
  // Nine counters of their own: no environment shares another's, no limiter another's.
  expect(ids.size).toBe(9);
});

it("an address over its limit of invalid keys gets 429 rate_limited with Retry-After before any lookup, for any token; others do not", async () => {
  const app = instrumentedApp();
  const ip = newAddress();
  await freshWindow();
  await exhaust(app, ip);
  await expectLimited(app, ip, "still-not-a-key");
  // A well-formed key with a valid tag is not looked up either.
  await expectLimited(app, ip, await unknownKey());
  // Nor is a valid key this location has never verified: it would need a lookup, and
  // the address has spent its own allowance.
  await expectLimited(app, ip, (await createKey("limited-address")).key);
  // No key at all is still a plain 401: nothing was sent to count.
  const { response } = await app.exchange("/v1/pets", { headers: { "CF-Connecting-IP": ip } });
  await expectError(response, 401, "unauthorized", /Missing API key/);
  // Another address with a valid key is not affected.
  const { key } = await createKey("other-address");
  const other = await app.exchange("/v1/pets?limit=1", from(newAddress(), key));
  expect(other.response.status).toBe(200);
});

it("counts the invalid keys of an address's MCP tool calls against that address", async () => {
  const app = instrumentedApp();
  const ip = newAddress();
  await freshWindow();
  for (let i = 0; i < LIMIT; i++) {
    const call = { name: "listPets", arguments: {} };
    const response = await exports.default.fetch(
      new Request(`${BASE}/mcp`, {
        method: "POST",
        headers: {
          ...from(ip, "").headers,
          Authorization: `Bearer not-a-key-${i}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: call }),
      }),
    );
    await expectError(response, 401, "unauthorized", /invalid or revoked/);
  }
  await expectLimited(app, ip, "still-not-a-key");
});

it("an IPv6 address counts by its /64: its neighbours share its allowance, another /64 has its own", async () => {
  const app = instrumentedApp();
  await freshWindow();
  const prefix = `2001:db8:${addresses + 1}:7`;
  addresses += 1;
  // Each invalid key from another address of the one /64, spelled every way.
  const neighbours = Array.from({ length: LIMIT }, (_, i) => `${prefix}:${i}::${i + 1}`);
  for (const [i, ip] of neighbours.entries()) {
    const { response } = await app.exchange("/v1/pets", from(ip, `not-a-key-${i}`));
    await expectError(response, 401, "unauthorized", /invalid or revoked/);
  }
  await expectLimited(app, `${prefix}:ffff:ffff:ffff:ffff`, "not-a-key");
  await expectLimited(app, `${prefix.toUpperCase().replace(":7", ":0007")}::42`, "not-a-key");
  const { response } = await app.exchange("/v1/pets", from(`${prefix}1::1`, "not-a-key"));
  await expectError(response, 401, "unauthorized", /invalid or revoked/);
});

it("counts refused tokens and D1 lookups, not a key the location has verified, which keeps working", async () => {
  const { key } = await createKey("verified-before");
  const ip = newAddress();
  const warm = instrumentedApp();
  await freshWindow();
  // Its verification was a D1 lookup: one of the address's allowance...
  expect((await warm.exchange("/v1/pets?limit=1", from(ip, key))).response.status).toBe(200);
  // ...served from the isolate's memory, however often: nothing more.
  for (let i = 0; i < LIMIT * 2; i++) {
    expect((await warm.exchange("/v1/pets?limit=1", from(ip, key))).response.status).toBe(200);
  }
  // LIMIT - 1 refusals fill the allowance exactly, so the next invalid key is over it.
  await exhaust(warm, ip, 1);
  await expectLimited(warm, ip, "over");
  // The isolate that verified it (memory) and another one of the location (Cache API).
  for (const app of [warm, instrumentedApp()]) {
    const { response, trips } = await app.exchange("/v1/pets?limit=1", from(ip, key));
    expect(response.status).toBe(200);
    expect(trips.filter((t) => /\bapi_keys\b/.test(t.what))).toEqual([]);
  }
});

it("getPet's 429 for such an address comes before the key check, so without the deprecation headers of every response after it", async () => {
  const app = instrumentedApp();
  const ip = newAddress();
  await freshWindow();
  await exhaust(app, ip);
  // app.exchange checks the response against the document, which promises them no more here.
  const { response } = await app.exchange("/v1/pets/1", from(ip, "not-a-key"));
  await expectError(response, 429, "rate_limited", /invalid API keys/);
  expect(response.headers.get("Retry-After")).toBe(String(RATE_LIMIT_RETRY_AFTER_SECONDS));
  for (const name of ["Deprecation", "Sunset", "Link"]) {
    expect(response.headers.get(name), name).toBeNull();
  }
});
