// Issue 15, "Trips at the floor", and issue 20, "Every read at one trip": the trips each
// response waits for, to the D1 primary, a replica and the location's Cache API, counted by
// test/support/instrumentation.ts around the real app, D1 and Cache API, and how many of
// them ran one after another; waitUntil work (last-use writes, cache puts) does not
// count. Every request class of the issues' tables; a change that adds a trip fails here.
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { issueApiKey, LOCAL_KEY_TAG_SECRET } from "../src/auth/keys.ts";
import { AUTH_CACHE_TTL_MS, AUTH_UNKNOWN_TTL_MS, GET_PET_SUNSET_AT } from "../src/config.ts";
import type { Pet } from "../src/pets/schemas.ts";
import {
  createAccount,
  createKey,
  createPetVia,
  expectError,
  revokeKey,
  unknownKey,
} from "./helpers.ts";
import type { Trip } from "./support/instrumentation.ts";
import { type InstrumentedApp, instrumentedApp } from "./support/instrumented-app.ts";

let key: string;
/** A page that has a next page (so the edge cache keeps it), and a pet. */
const PAGE = "/v1/pets?status=sold&limit=2";
/** The last page of a listing: never cached, so always read from D1. */
const LAST_PAGE = "/v1/pets?status=pending&limit=100";
let pet: Pet;

beforeAll(async () => {
  ({ key } = await createKey("edge-trips"));
  for (let i = 0; i < 3; i++) {
    pet = (await createPetVia(key, { name: `sold-${i}`, categoryId: 1, status: "sold" })) as Pet;
  }
});

/** Trips of a response, by place. */
const trips = (primary: number, replica: number, cache: number) => ({ primary, replica, cache });

/** What a response waited for: its trips by place, and how many ran one after another. */
const waited = (primary: number, replica: number, cache: number, inSequence: number) => ({
  counts: trips(primary, replica, cache),
  inSequence,
});
const waitedFor = ({ counts, inSequence }: { counts: unknown; inSequence: number }) => ({
  counts,
  inSequence,
});

/** The lookup of a cached response in the location's cache, among `list`. */
const responseLookup = (list: Trip[]) =>
  list.find((t) => t.place === "cache" && /^match .*\/_cache\//.test(t.what));
/** Whether any of `list` looked a key up in D1. */
const keyLookups = (list: Trip[]) => list.filter((t) => /FROM api_keys/.test(t.what));

// Tests that move time fake Date (the app's clock): `vi.advanceTimersByTime` moves it.
afterEach(() => {
  vi.useRealTimers();
});

/** An isolate that has verified `key` already (its memory is warm). */
async function warmIsolate(): Promise<InstrumentedApp> {
  const app = instrumentedApp();
  const { response } = await app.exchange("/v1/pets?limit=1&status=sold", { key });
  expect(response.status).toBe(200);
  return app;
}

const ONE_PRIMARY = trips(1, 0, 0);
const INVALID = 'Bearer realm="petstore", error="invalid_token"';

describe("createPet", () => {
  it("without an Idempotency-Key, with a new one, its replay and a 422: one primary trip each", async () => {
    const app = await warmIsolate();
    const plain = await app.exchange("/v1/pets", {
      method: "POST",
      key,
      json: { name: "trip-plain", categoryId: 1 },
    });
    expect(plain.response.status).toBe(201);
    expect(plain.counts).toEqual(ONE_PRIMARY);

    const idem = `trip-${crypto.randomUUID()}`;
    const post = (categoryId: number) =>
      app.exchange("/v1/pets", {
        method: "POST",
        key,
        headers: { "Idempotency-Key": idem },
        json: { name: "trip-keyed", categoryId },
      });
    const created = await post(1);
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get("Idempotent-Replayed")).toBeNull();
    expect(created.counts).toEqual(ONE_PRIMARY);
    // The one trip is one batch: the whole transaction.
    expect(created.trips[0]?.statements).toHaveLength(4);

    const replay = await post(1);
    expect(replay.response.status).toBe(201);
    expect(replay.response.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await replay.response.json()).toEqual(await created.response.json());
    expect(replay.counts).toEqual(ONE_PRIMARY);

    const reused = await post(2);
    expect(reused.response.status).toBe(422);
    expect(await reused.response.json()).toMatchObject({ code: "idempotency_key_reused" });
    expect(reused.counts).toEqual(ONE_PRIMARY);
  });

  it("a replay through another key of the account: the owner came with the key's record, one primary trip", async () => {
    const [first, second] = [await createKey("owner-first"), await createKey("owner-second")];
    await createAccount([first.id, second.id]);
    const app = instrumentedApp();
    for (const k of [first.key, second.key]) {
      expect((await app.exchange("/v1/pets?limit=1&status=sold", { key: k })).response.status).toBe(
        200,
      );
    }
    const idem = `trip-owner-${crypto.randomUUID()}`;
    const post = (k: string) =>
      app.exchange("/v1/pets", {
        method: "POST",
        key: k,
        headers: { "Idempotency-Key": idem },
        json: { name: "trip-owner", categoryId: 1 },
      });
    const created = await post(first.key);
    expect(created.response.status).toBe(201);
    const replay = await post(second.key);
    expect(replay.response.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await replay.response.json()).toEqual(await created.response.json());
    expect(replay.counts).toEqual(ONE_PRIMARY);
  });

  it("counts what the response waited for, not the work after it (a control)", async () => {
    // A fresh isolate's first request also writes the key's last use, after the response:
    // the write is recorded, but it had not finished when the response was handed back.
    const app = instrumentedApp();
    const pet = await createPetVia(key, { name: "trip-control", categoryId: 2 });
    const { response, counts } = await app.exchange(`/v1/pets/${pet.id}`, { key });
    expect(response.status).toBe(200);
    const lastUse = app.recorder.trips.filter((t) => /^UPDATE api_keys/.test(t.what));
    expect(lastUse).toHaveLength(1);
    expect(counts.primary + counts.replica + counts.cache).toBeLessThan(app.recorder.trips.length);
  });
});

describe("changes", () => {
  it("updatePet and deletePet, with and without If-Match, refused or not: one primary trip each, one batch", async () => {
    const app = await warmIsolate();
    const made = await createPetVia(key, { name: "trip-change", categoryId: 1 });
    const path = `/v1/pets/${made.id}`;
    const patch = (json: unknown, headers: Record<string, string> = {}) =>
      app.exchange(path, { method: "PATCH", key, json, headers });
    const changed = await patch({ status: "pending" });
    expect(changed.response.status).toBe(200);
    const tag = changed.response.headers.get("ETag") as string;
    for (const [exchange, status] of [
      [changed, 200],
      [await patch({ status: "sold" }, { "If-Match": tag }), 200],
      // `tag` is the pet before that change now.
      [await patch({ name: "trip-changed" }, { "If-Match": tag }), 412],
      [await patch({ status: "available" }), 409],
      [await app.exchange("/v1/pets/999999999", { method: "PATCH", key, json: {} }), 404],
      [await app.exchange(path, { method: "DELETE", key, headers: { "If-Match": tag } }), 412],
      [await app.exchange(path, { method: "DELETE", key }), 204],
      [await app.exchange(path, { method: "DELETE", key }), 404],
    ] as const) {
      expect(exchange.response.status).toBe(status);
      expect(waitedFor(exchange)).toEqual(waited(1, 0, 0, 1));
      // The write and the read that says why nothing was written: one transaction.
      expect(exchange.trips[0]?.statements).toHaveLength(2);
    }
  });

  it("a read right after a change, with the change's bookmark: one replica trip beside the cache's", async () => {
    const app = await warmIsolate();
    const made = await createPetVia(key, { name: "trip-read-after", categoryId: 1 });
    const path = `/v1/pets/${made.id}`;
    expect((await app.exchange(path, { key })).response.status).toBe(200);
    const changed = await app.exchange(path, { method: "PATCH", key, json: { status: "sold" } });
    const bookmark = changed.response.headers.get("x-d1-bookmark") as string;
    const read = await app.exchange(path, { key, headers: { "x-d1-bookmark": bookmark } });
    expect(await read.response.json()).toMatchObject({ status: "sold" });
    expect(waitedFor(read)).toEqual(waited(0, 1, 1, 2));
  });
});

describe("reads", () => {
  it("a cached getPet or page, on an isolate that never saw the key: the key's record and the response side by side, one Cache API trip in time, as on a warm isolate", async () => {
    // The location has responded both before (edge cache) and verified the key (key cache).
    const first = instrumentedApp();
    for (const path of [PAGE, `/v1/pets/${pet.id}`]) {
      expect((await first.exchange(path, { key })).response.status).toBe(200);
    }
    for (const path of [PAGE, `/v1/pets/${pet.id}`]) {
      const fresh = await instrumentedApp().exchange(path, { key });
      expect(fresh.response.status).toBe(200);
      // The key's record and the response, both from the location's Cache API, side by side.
      expect(waitedFor(fresh)).toEqual(waited(0, 0, 2, 1));
      const warm = await first.exchange(path, { key });
      expect(await warm.response.text()).toBe(await fresh.response.text());
      expect(waitedFor(warm)).toEqual(waited(0, 0, 1, 1));
    }
  });

  it("a key the location has not verified: its replica lookup and the response's side by side; a page not cached costs one replica read more", async () => {
    const { key: fresh } = await createKey("edge-trips-fresh");
    const cached = await instrumentedApp().exchange(PAGE, { key: fresh });
    expect(cached.response.status).toBe(200);
    // The key's record: a miss in the location's cache, then a replica; the response beside.
    expect(waitedFor(cached)).toEqual(waited(0, 1, 2, 2));
    expect(cached.trips.find((t) => t.place === "replica")?.what).toMatch(/FROM api_keys/);

    const { key: another } = await createKey("edge-trips-fresh-miss");
    const miss = await instrumentedApp().exchange(LAST_PAGE, { key: another });
    expect(miss.response.status).toBe(200);
    expect(waitedFor(miss)).toEqual(waited(0, 2, 2, 3));
    expect(miss.trips.filter((t) => t.place === "replica").map((t) => t.what)).toEqual([
      expect.stringMatching(/FROM api_keys/),
      expect.stringMatching(/FROM pets/),
    ]);
  });

  it("on a warm isolate, a listPets cache miss: one replica trip; a cached read: no D1 trip", async () => {
    const app = await warmIsolate();
    const miss = await app.exchange(LAST_PAGE, { key });
    expect(miss.response.status).toBe(200);
    expect(waitedFor(miss)).toEqual(waited(0, 1, 1, 2));
    expect(miss.trips.find((t) => t.place === "replica")?.what).toMatch(/FROM pets/);
    await app.exchange(PAGE, { key });
    const hit = await app.exchange(PAGE, { key });
    expect(hit.response.status).toBe(200);
    expect(waitedFor(hit)).toEqual(waited(0, 0, 1, 1));
  });
});

describe("a tool call through /mcp waits for exactly the trips of the API call it makes", () => {
  /** An MCP message to /mcp of `app`, as a 2025-11-25 client sends it. */
  const mcp = (app: InstrumentedApp, method: string, params?: unknown) =>
    app.exchange("/mcp", {
      method: "POST",
      key,
      headers: {
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
      },
      json: { jsonrpc: "2.0", id: 1, method, ...(params ? { params } : {}) },
    });
  const toolCall = (app: InstrumentedApp, name: string, args: Record<string, unknown>) =>
    mcp(app, "tools/call", { name, arguments: args });

  it("listPets: a cache miss and a cached page, as through /v1", async () => {
    const app = await warmIsolate();
    const direct = await app.exchange(LAST_PAGE, { key });
    const miss = await toolCall(app, "listPets", { status: "pending", limit: 100 });
    expect(miss.response.status).toBe(200);
    expect(
      ((await miss.response.json()) as { result: { isError?: boolean } }).result.isError,
    ).toBeUndefined();
    expect(waitedFor(miss)).toEqual(waitedFor(direct));
    expect(waitedFor(miss)).toEqual(waited(0, 1, 1, 2));
    await app.exchange(PAGE, { key });
    const hit = await toolCall(app, "listPets", { status: "sold", limit: 2 });
    expect(waitedFor(hit)).toEqual(waited(0, 0, 1, 1));
  });

  it("createPet with an idempotencyKey: one primary trip; tools/list: none", async () => {
    const app = await warmIsolate();
    const created = await toolCall(app, "createPet", {
      name: "trip-mcp",
      categoryId: 1,
      idempotencyKey: `trip-mcp-${crypto.randomUUID()}`,
    });
    expect(created.response.status).toBe(200);
    expect(created.counts).toEqual(ONE_PRIMARY);
    const listed = await mcp(app, "tools/list");
    expect(listed.response.status).toBe(200);
    expect(waitedFor(listed)).toEqual(waited(0, 0, 0, 0));
  });
});

describe("a cached response looked up beside the key's lookup is released only after the key, the rate limit, the scope and the input", () => {
  /** A fresh isolate's read of a cached response, D1 slowed so the key's lookup ends last. */
  async function readBeside(path: string, token: string, headers: Record<string, string> = {}) {
    const app = instrumentedApp();
    app.recorder.delays = { replica: 20, primary: 20 };
    const result = await app.exchange(path, { key: token, headers });
    return { ...result, ahead: responseLookup(result.trips) };
  }

  /** The refusal carries nothing of the cached response: an Error, no ETag, no next page. */
  async function expectRefused(response: Response, status: number, code: string) {
    await expectError(response, status, code);
    expect(response.headers.get("ETag")).toBeNull();
    expect(response.headers.get("Link") ?? "").not.toMatch(/rel="next"/);
  }

  beforeAll(async () => {
    // Both are cached: a fresh isolate with a verified key reads no D1 row for them.
    for (const path of [PAGE, `/v1/pets/${pet.id}`]) {
      const { response, counts } = await instrumentedApp().exchange(path, { key });
      expect([response.status, counts.replica + counts.primary]).toEqual([200, 0]);
    }
  });

  it.each([
    ["an unknown key", () => unknownKey()],
    [
      "a revoked key",
      async () => {
        const { key: revoked, id } = await createKey("edge-trips-revoked-beside");
        expect(await revokeKey(id)).toBe(true);
        return revoked;
      },
    ],
  ])("%s whose lookup ends after the response's: 401", async (_what, token) => {
    for (const path of [PAGE, `/v1/pets/${pet.id}`]) {
      const { response, trips: list, ahead } = await readBeside(path, await token());
      await expectRefused(response, 401, "unauthorized");
      expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
      const lookups = keyLookups(list);
      expect(lookups.length).toBeGreaterThan(0);
      // The cached response was in hand before the key was refused.
      expect(ahead?.ended).toBeLessThan(lookups.at(-1)?.ended as number);
    }
  });

  it("a key without the scope: 403", async () => {
    const { key: writer } = await createKey("edge-trips-writer", { scopes: ["pets:write"] });
    const { response, ahead } = await readBeside(PAGE, writer);
    await expectRefused(response, 403, "insufficient_scope");
    expect(ahead?.done).toBe(true);
  });

  it.each([
    ["a path parameter", "/v1/pets/abc", {}],
    ["a query parameter", "/v1/pets?status=sold&limit=0", {}],
    ["x-d1-bookmark", PAGE, { "x-d1-bookmark": "not a bookmark" }],
    ["If-None-Match", PAGE, { "If-None-Match": `"${"a".repeat(1100)}"` }],
  ])("invalid input (%s): 400, and no response was looked up", async (_what, path, headers) => {
    const { key: fresh } = await createKey("edge-trips-invalid-input");
    const { response, trips: list, ahead } = await readBeside(path, fresh, headers);
    await expectRefused(response, 400, "invalid_parameter");
    expect(ahead).toBeUndefined();
    // The key itself was looked up: the request met the key check first.
    expect(list.some((t) => /FROM api_keys/.test(t.what))).toBe(true);
  });

  it("getPet past its sunset: 410, and no response was looked up", async () => {
    const app = instrumentedApp({ clock: () => GET_PET_SUNSET_AT * 1000 });
    const { response, trips: list } = await app.exchange(`/v1/pets/${pet.id}`, { key });
    await expectRefused(response, 410, "gone");
    expect(responseLookup(list)).toBeUndefined();
  });
});

describe("hostile tokens", () => {
  it.each([
    ["random text", () => "not-a-key"],
    ["the old prefix on a random string", () => "psk_hello"],
    ["a well-shaped key with a forged tag", () => `psk_${"A".repeat(43)}${"B".repeat(22)}`],
    ["a key tagged by another environment", () => issueApiKey(`not ${LOCAL_KEY_TAG_SECRET}`)],
    ["the untagged format of earlier builds", () => `psk_${"x".repeat(43)}`],
    ["a real key cut to 47 characters", async () => (await createKey("cut")).key.slice(0, 47)],
  ])("%s: refused with no trip of any kind, not even after the response", async (_what, token) => {
    const app = instrumentedApp();
    const { response } = await app.exchange(PAGE, { key: await token() });
    await expectError(response, 401, "unauthorized", /invalid or revoked/);
    expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
    expect(app.recorder.trips).toEqual([]);
  });

  it("an unknown key with a valid tag: looked up at most once per location in any 10 s", async () => {
    const unknown = await unknownKey();
    vi.useFakeTimers({ toFake: ["Date"] });
    const isolates = Array.from({ length: 3 }, () => instrumentedApp());

    const first = await isolates[0]?.exchange(PAGE, { key: unknown });
    await expectError(first?.response as Response, 401, "unauthorized");
    // A key with our tag may be seconds old and missing on the replica, so the primary is
    // asked once; the page's cached response is looked up beside it (and not released). The
    // refusal is put into the location's cache before the 401 leaves (the third trip to
    // the cache), so every isolate knows it by the time the client can repeat it.
    expect(first?.counts).toEqual(trips(1, 1, 3));

    // 30 more requests spread over the 10 s, on every isolate of the location: not one
    // D1 statement, before or after their responses.
    let statements = 0;
    for (let i = 0; i < 30; i++) {
      vi.advanceTimersByTime((AUTH_UNKNOWN_TTL_MS - 1) / 30);
      const app = isolates[i % 3] as InstrumentedApp;
      const { response } = await app.exchange(PAGE, { key: unknown });
      await expectError(response, 401, "unauthorized");
      statements += app.recorder.trips.filter((t) => t.place !== "cache").length;
    }
    expect(statements).toBe(0);

    vi.advanceTimersByTime(1);
    const again = await isolates[1]?.exchange(PAGE, { key: unknown });
    expect(again?.counts).toEqual(trips(1, 1, 3));
  });
  it("50 simultaneous requests with one key an isolate has not verified: one D1 lookup, always", async () => {
    // Bursts of an unknown key (its valid tag lets the primary be asked too) and of a
    // valid key no tier holds yet.
    for (let round = 0; round < 5; round++) {
      for (const [token, status, places] of [
        [await unknownKey(), 401, ["replica", "primary"]],
        [(await createKey(`edge-trips-burst-${round}`)).key, 200, ["replica"]],
      ] as const) {
        const { responses, trips } = await instrumentedApp().burst(50, PAGE, { key: token });
        expect(responses.map((r) => r.status)).toEqual(Array(50).fill(status));
        const lookups = trips.filter((t) => /FROM api_keys/.test(t.what)).map((t) => t.place);
        expect(lookups, `round ${round}`).toEqual(places);
        await Promise.all(responses.map((r) => r.body?.cancel()));
      }
    }
  }, 30_000);
});

describe("revocation across the tiers", () => {
  it(`a revoked key is accepted at most ${AUTH_CACHE_TTL_MS / 1000} s after the D1 read, by every tier together`, async () => {
    const { key: revoked, id } = await createKey("edge-trips-revoked");
    vi.useFakeTimers({ toFake: ["Date"] });
    const reader = instrumentedApp();
    expect((await reader.exchange(PAGE, { key: revoked })).response.status).toBe(200);
    expect(await revokeKey(id)).toBe(true);
    // Just before the bound: the reader's memory, and another isolate from the Cache API,
    // still accept it (a record read back from the cache keeps its D1 read's instant).
    vi.advanceTimersByTime(AUTH_CACHE_TTL_MS - 1_000);
    const late = instrumentedApp();
    for (const app of [reader, late]) {
      const { response, trips: list } = await app.exchange(PAGE, { key: revoked });
      expect(response.status).toBe(200);
      expect(keyLookups(list)).toEqual([]);
    }
    // At the bound every isolate refuses it, the one that got its copy a second ago too:
    // no tier extends the age of what it got from another.
    vi.advanceTimersByTime(1_000);
    for (const app of [reader, late, instrumentedApp()]) {
      const { response, counts } = await app.exchange(PAGE, { key: revoked });
      await expectError(response, 401, "unauthorized", /invalid or revoked/);
      expect(counts.primary).toBe(0);
    }
    expect(AUTH_CACHE_TTL_MS).toBeLessThanOrEqual(30_000);
  });

  it("an expiry known when the key was read is exact in every tier", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const expiresAt = Math.floor(Date.now() / 1000) + 5;
    const { key: expiring } = await createKey("edge-trips-expiring", { expiresAt });
    const reader = instrumentedApp();
    expect((await reader.exchange(PAGE, { key: expiring })).response.status).toBe(200);
    vi.advanceTimersByTime(expiresAt * 1000 - Date.now() - 1);
    for (const app of [reader, instrumentedApp()]) {
      expect((await app.exchange(PAGE, { key: expiring })).response.status).toBe(200);
    }
    vi.advanceTimersByTime(1);
    for (const app of [reader, instrumentedApp()]) {
      const { response, counts } = await app.exchange(PAGE, { key: expiring });
      await expectError(response, 401, "unauthorized", /expired/);
      expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
      expect(counts.primary + counts.replica).toBe(0);
    }
  });
});
