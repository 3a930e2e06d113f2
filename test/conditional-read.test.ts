// Conditional reads (docs/api.md, "Conditional requests and the cache"): ETag and 304 on
// listPets and getPet, and responses (a pet, a page that has a next page) cached in the
// location's Cache API and served from there without a D1 row for a few seconds, never older
// than the request's bookmark. `call()` goes through the worker's own fetch; `edge()` builds
// the same app with a D1 binding that records every statement and a Cache API cache of its
// own (a location), recording the keys asked for and cached.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createKeyUseRecorder } from "../src/auth/key-use.ts";
import { hashApiKey } from "../src/auth/keys.ts";
import type { EdgeCache } from "../src/cache/edge-cache.ts";
import { systemClock } from "../src/clock.ts";
import { CACHE_MAX_AGE_MS, GET_PET_SUNSET_AT } from "../src/config.ts";
import { READ_AT } from "../src/http/conditional-read.ts";
import { entityTag } from "../src/http/etag.ts";
import type { LogLine } from "../src/log.ts";
import { encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
import type { Pet } from "../src/pets/schemas.ts";
import {
  type CallOptions,
  call,
  createCheckedApp,
  createKey,
  createPetVia,
  expectDeprecationHeaders,
  expectError,
  makeRequest,
  revokeKey,
} from "./helpers.ts";
import { Recorder } from "./support/instrumentation.ts";

/** A tag computed from a page's body; a pet's, from its row (src/db/pets.ts). */
const ETAG = /^"[A-Za-z0-9_-]{22}"$/;
const PET_ETAG = /^"[A-Za-z0-9_-]{22}\.\d+\.(available|pending|sold)"$/;

let key: string;
/** A key that may only write: it must never see a page, a 304 or a cache hit. */
let writeOnly: string;

beforeAll(async () => {
  ({ key } = await createKey("conditional"));
  ({ key: writeOnly } = await createKey("conditional write-only", { scopes: ["pets:write"] }));
});

/** Pets made here, in one status nobody else in this file lists, so pages are ours. */
async function petsOf(status: "pending" | "sold", count: number): Promise<Pet[]> {
  const made: Pet[] = [];
  for (let i = 0; i < count; i++) {
    made.push((await createPetVia(key, { name: `${status}-${i}`, categoryId: 5, status })) as Pet);
  }
  return made;
}

/** A cursor that starts a `status` page just before `pet`. */
function cursorBefore(pet: Pet, status?: string): Promise<string> {
  return encodeCursor(pet.id - 1, status as never, LOCAL_CURSOR_SECRET);
}

/** Everything about a response that must not differ between D1 and the cache. */
async function snapshot(response: Response) {
  const headers = [...response.headers].filter(
    ([name]) => name !== "x-request-id" && name !== "x-d1-bookmark",
  );
  return { status: response.status, headers, body: new Uint8Array(await response.arrayBuffer()) };
}

type Edge = ReturnType<typeof edge>;

/**
 * The app over a D1 that records its statements, with a Cache API cache of its own whose
 * calls and cached responses are recorded across requests (or a failing `cache`).
 */
function edge(options: { clock?: () => number; cache?: EdgeCache } = {}) {
  const recorder = new Recorder();
  const calls: Array<{ op: "match" | "put"; key: string }> = [];
  const logs: LogLine[] = [];
  const stored: Response[] = [];
  const opened = caches.open(`edge-${crypto.randomUUID()}`);
  const recording: EdgeCache = {
    match: async (request, matchOptions) => {
      calls.push({ op: "match", key: String(request) });
      return (await opened).match(request, matchOptions);
    },
    put: async (request, response) => {
      calls.push({ op: "put", key: String(request) });
      stored.push(response.clone());
      return (await opened).put(request, response);
    },
  };
  const log = (line: LogLine) => logs.push(line);
  const app = createCheckedApp({
    log,
    ...(options.clock ? { clock: options.clock } : {}),
    edgeCache: () => options.cache ?? recording,
    // Its timers wake at once, as the instrumented app's (test/support/instrumented-app.ts).
    keyUse: createKeyUseRecorder(options.clock ?? systemClock, log, { sleep: async () => {} }),
  });
  const appEnv: Env = { ...env, DB: recorder.d1(env.DB) };
  return {
    /** The SQL of each statement the last request ran (its waitUntil work too). */
    get statements() {
      return recorder.sql();
    },
    calls,
    logs,
    stored,
    /** One request; its waitUntil work (the cache put, the last-use write) is done on return. */
    async fetch(path: string, callOptions: CallOptions = {}) {
      recorder.reset();
      const ctx = createExecutionContext();
      const response = await app.fetch(makeRequest(path, { key, ...callOptions }), appEnv, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    },
  };
}

describe("ETag and Cache-Control on every 200 of listPets and getPet", () => {
  it("a strong tag computed from the body: equal bodies, equal tags; other bodies, other tags", async () => {
    const [a, b] = await petsOf("sold", 2);
    const first = await call(`/v1/pets/${a?.id}`, { key });
    const again = await call(`/v1/pets/${a?.id}`, { key });
    const head = await call(`/v1/pets/${a?.id}`, { method: "HEAD", key });
    const other = await call(`/v1/pets/${b?.id}`, { key });
    for (const response of [first, again, head, other]) {
      expect(response.status).toBe(200);
      expect(response.headers.get("ETag")).toMatch(PET_ETAG);
      expect(response.headers.get("Cache-Control")).toBe("private, no-cache");
      expectDeprecationHeaders(response);
    }
    expect(await first.json()).toEqual(a);
    expect(await head.text()).toBe("");
    expect(again.headers.get("ETag")).toBe(first.headers.get("ETag"));
    expect(head.headers.get("ETag")).toBe(first.headers.get("ETag"));
    expect(other.headers.get("ETag")).not.toBe(first.headers.get("ETag"));

    const page = await call("/v1/pets?status=sold&limit=1", { key });
    const samePage = await call("/v1/pets?limit=1&unknown=x&status=sold", { key });
    expect(page.status).toBe(200);
    expect(page.headers.get("Cache-Control")).toBe("private, no-cache");
    expect(page.headers.get("ETag")).toMatch(ETAG);
    expect(samePage.headers.get("ETag")).toBe(page.headers.get("ETag"));
    expect(await samePage.text()).toBe(await page.text());
  });

  it("a page's tag is its body's, read after read and after the page changed (tags are cached by body)", async () => {
    const tagOf = async (response: Response) => {
      expect(response.status).toBe(200);
      expect(response.headers.has("Link")).toBe(false); // a last page: from D1 every time
      const body = await response.text();
      expect(response.headers.get("ETag")).toBe(
        await entityTag(new Uint8Array(new TextEncoder().encode(body))),
      );
      return response.headers.get("ETag");
    };
    await petsOf("pending", 1);
    const before = await tagOf(await call("/v1/pets?status=pending", { key }));
    expect(await tagOf(await call("/v1/pets?status=pending", { key }))).toBe(before);
    await petsOf("pending", 1);
    expect(await tagOf(await call("/v1/pets?status=pending", { key }))).not.toBe(before);
  });
});

describe("If-None-Match (weak comparison, lists, *) responds with 304", () => {
  let petPath: string;
  let tag: string;
  let pagePath: string;
  let pageTag: string;
  let pageLink: string;

  beforeAll(async () => {
    const [pet] = await petsOf("pending", 3);
    petPath = `/v1/pets/${pet?.id}`;
    const response = await call(petPath, { key });
    tag = response.headers.get("ETag") as string;
    pagePath = `/v1/pets?status=pending&limit=2&cursor=${await cursorBefore(pet as Pet, "pending")}`;
    const page = await call(pagePath, { key });
    pageTag = page.headers.get("ETag") as string;
    pageLink = page.headers.get("Link") as string;
    expect(tag).toMatch(PET_ETAG);
    expect(pageLink).toMatch(/rel="next"/);
  });

  // Which fields match is etag.test.ts's table; these show the app asks it.
  it.each([
    ["the tag itself", "GET", () => tag],
    ["a list holding its weak form", "GET", () => `"other", W/${tag}`],
    ["*", "GET", () => "*"],
    ["the tag, on HEAD", "HEAD", () => tag],
  ])("%s (%s): 304, no body, the resource's headers kept", async (_name, method, value) => {
    const headers = { "If-None-Match": value() };
    const response = await call(petPath, { method, key, headers });
    expect(response.status).toBe(304);
    expect(await response.text()).toBe("");
    expect(response.headers.get("ETag")).toBe(tag);
    expect(response.headers.get("Cache-Control")).toBe("private, no-cache");
    expect(response.headers.get("Content-Type")).toBeNull();
    expectDeprecationHeaders(response);
  });

  it.each([
    ["the tag without quotes", () => tag.slice(1, -1)],
    ["a list of other tags", () => `"a", W/"b"`],
  ])("%s: 200 with the body", async (_name, value) => {
    const response = await call(petPath, { key, headers: { "If-None-Match": value() } });
    expect(response.status).toBe(200);
    expect(response.headers.get("ETag")).toBe(tag);
    expect(((await response.json()) as Pet).id).toBe(Number(petPath.split("/").at(-1)));
  });

  it("a page's 304 keeps its Link rel=next (a last page has none) and the CORS headers", async () => {
    const response = await call(pagePath, {
      key,
      headers: { "If-None-Match": pageTag, Origin: "https://shop.example" },
    });
    expect(response.status).toBe(304);
    expect(await response.text()).toBe("");
    expect(response.headers.get("ETag")).toBe(pageTag);
    expect(response.headers.get("Link")).toBe(pageLink);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Access-Control-Expose-Headers")).toMatch(/\bLink\b/);

    const last = "/v1/pets?status=pending&limit=100";
    const etag = (await call(last, { key })).headers.get("ETag") as string;
    const unchanged = await call(last, { key, headers: { "If-None-Match": etag } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get("Link")).toBeNull();
    // A new pet on the last page changes its tag.
    const added = await createPetVia(key, { name: "late", categoryId: 5, status: "pending" });
    const changed = await call(last, { key, headers: { "If-None-Match": etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("ETag")).not.toBe(etag);
    expect(((await changed.json()) as Pet[]).at(-1)).toEqual(added);
  });

  it("only a 200 becomes a 304: a 404, a 400, a 401 and a 403 (without a tag) stay what they are", async () => {
    const ask = (path: string, as: string | null, value = "*") =>
      call(path, { key: as, headers: { "If-None-Match": value } });
    await expectError(await ask("/v1/pets/9007199254740991", key), 404, "not_found");
    await expectError(await ask("/v1/pets?limit=0", key), 400, "invalid_parameter", /limit/);
    await expectError(await ask(petPath, null, tag), 401, "unauthorized");
    await expectError(await ask(petPath, "psk_wrong"), 401, "unauthorized");
    for (const path of [petPath, pagePath]) {
      const forbidden = await ask(path, writeOnly);
      await expectError(forbidden, 403, "insufficient_scope", /pets:read/);
      expect(forbidden.headers.get("ETag")).toBeNull();
    }
  });
});

describe("the cache serves what it holds, from no D1 row", () => {
  /** `path` read once (cached), then each spelling: a hit, no statement, the same bytes. */
  async function expectOneEntry(h: Edge, path: string, spellings: string[]) {
    const first = await h.fetch(path);
    expect(first.status).toBe(200);
    const bytes = await snapshot(first);
    for (const spelling of spellings) {
      const response = await h.fetch(spelling);
      expect(h.statements, spelling).toEqual([]);
      expect(await snapshot(response), spelling).toEqual(bytes);
    }
    return bytes;
  }

  it("getPet: a miss reads D1 and keeps the pet with its tag; the hit and its 304 run no statement", async () => {
    const [pet] = await petsOf("sold", 1);
    const h = edge();
    const miss = await h.fetch(`/v1/pets/${pet?.id}`);
    expect(h.statements.some((s) => /FROM pets/.test(s))).toBe(true);
    expect(h.calls.map((c) => c.op)).toEqual(["match", "put"]);
    const tag = miss.headers.get("ETag") as string;
    // The tag is cached with the entry, so a hit does not hash the body again.
    expect(h.stored.map((r) => r.headers.get("ETag"))).toEqual([tag]);
    const missed = await snapshot(miss);

    const hit = await h.fetch(`/v1/pets/${pet?.id}`);
    expect(h.statements).toEqual([]);
    const served = await snapshot(hit);
    expect(served).toEqual(missed);
    expect(JSON.parse(new TextDecoder().decode(served.body))).toEqual(pet);
    expectDeprecationHeaders(hit);
    expect(hit.headers.get("X-Request-Id")).not.toBe(miss.headers.get("X-Request-Id"));

    const revalidated = await h.fetch(`/v1/pets/${pet?.id}`, { headers: { "If-None-Match": tag } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get("ETag")).toBe(tag);
    expectDeprecationHeaders(revalidated);
    expect(h.statements).toEqual([]);
  });

  it("an entry that is not one of ours (no entity tag, no read time, not a 200) is a miss", async () => {
    const [pet] = await petsOf("sold", 1);
    const body = JSON.stringify(pet);
    const tag = await entityTag(new Uint8Array(new TextEncoder().encode(body)));
    const opaque = tag.slice(1, -1);
    const now = String(Date.now());
    for (const [etag, readAt, status] of [
      [`x"${opaque}"`, now, 200],
      [`W/"${opaque}"`, now, 200],
      [`"${opaque}"`, "", 200],
      [`"${opaque}"`, "soon", 200],
      [`"${opaque}"`, now, 203],
    ] as const) {
      const h = edge({
        cache: {
          match: async () =>
            new Response(body, {
              status,
              headers: { "Content-Type": "application/json", ETag: etag, [READ_AT]: readAt },
            }),
          put: async () => {},
        },
      });
      const read = await h.fetch(`/v1/pets/${pet?.id}`);
      expect(
        h.statements.filter((sql) => /FROM pets/.test(sql)),
        etag,
      ).toHaveLength(1);
      expect(read.headers.get("ETag")).toMatch(PET_ETAG);
      expect(await read.json()).toEqual(pet);
    }
  });

  it("a full page is cached; after more creates the hit is still identical and reads nothing", async () => {
    const made = await petsOf("sold", 3);
    const path = `/v1/pets?status=sold&limit=2&cursor=${await cursorBefore(made[0] as Pet, "sold")}`;
    const h = edge();
    const miss = await h.fetch(path);
    expect(miss.headers.get("Link")).toMatch(/rel="next"/);
    expect(h.statements.some((s) => /FROM pets/.test(s))).toBe(true);
    const missed = await snapshot(miss);
    expect(JSON.parse(new TextDecoder().decode(missed.body))).toEqual(made.slice(0, 2));
    await petsOf("sold", 2);
    expect(await expectOneEntry(h, path, [])).toEqual(missed);
  });

  it("a 404 and a last page are never cached: the pets created after them show up", async () => {
    const h = edge();
    const made = await petsOf("pending", 1);
    const next = (made[0] as Pet).id + 1;
    await expectError(await h.fetch(`/v1/pets/${next}`), 404, "not_found");
    const path = `/v1/pets?status=pending&limit=50&cursor=${await cursorBefore(made[0] as Pet, "pending")}`;
    const before = await h.fetch(path);
    expect(before.headers.get("Link")).toBeNull();
    expect(await before.json()).toEqual(made);
    expect(h.calls.filter((c) => c.op === "put")).toEqual([]);

    const [added] = await petsOf("pending", 1);
    expect(added?.id).toBe(next);
    const found = await h.fetch(`/v1/pets/${next}`);
    expect(found.status).toBe(200);
    expect(await found.json()).toEqual(added);
    const after = await h.fetch(path);
    expect(h.statements.some((s) => /FROM pets/.test(s))).toBe(true);
    expect(await after.json()).toEqual([...made, added]);
  });

  it("parameter order, unknown parameters, defaults and percent-encoding: one entry per request", async () => {
    const [pet] = await petsOf("sold", 1);
    const made = await petsOf("sold", 3);
    const id = String(pet?.id);
    const cursor = await cursorBefore(made[0] as Pet, "sold");
    const encoded = (s: string) =>
      [...s].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join("");
    const h = edge();
    await expectOneEntry(h, `/v1/pets/${id}`, [
      `/v1/pets/${encoded(id)}`,
      `/v1/%70ets/${id}`,
      `/%76%31/pets/${id}`,
      `/%76%31/%70%65%74%73/${encoded(id)}`,
      `/v1/pe%74s/${id.slice(0, 1)}${encoded(id.slice(1))}`,
    ]);
    await expectOneEntry(h, `/v1/pets?limit=2&status=sold&cursor=${cursor}`, [
      `/v1/pets?cursor=${cursor}&status=sold&limit=2`,
      `/v1/pets?utm_source=mail&status=sold&cursor=${cursor}&limit=2&x=1`,
      `/v1/%70ets?%6Cimit=2&status=%73old&cursor=${cursor}`,
      `/%76%31/pets?limit=%32&%73tatus=sold&cursor=${encoded(cursor)}`,
    ]);
    // No limit means limit=20: one entry for both spellings (a full page, so cached).
    await petsOf("sold", 20);
    await expectOneEntry(h, `/v1/pets?status=sold&cursor=${cursor}`, [
      `/v1/pets?limit=20&status=sold&cursor=${cursor}`,
    ]);
    // Three entries: a limit, status or cursor of its own is a key of its own (etag.test.ts).
    const cached = h.calls.filter((c) => c.op === "put").map((c) => c.key);
    expect(cached).toHaveLength(3);
    expect(new Set(h.calls.map((c) => c.key))).toEqual(new Set(cached));
  });

  it("one entry for every reader, served only after authentication and scope; its key holds no secret", async () => {
    const [pet] = await petsOf("sold", 1);
    const path = `/v1/pets/${pet?.id}`;
    const h = edge();
    expect((await h.fetch(path)).status).toBe(200);
    const { key: other } = await createKey("conditional other reader", { scopes: ["pets:read"] });
    await h.fetch(path, { key: other });
    // Warm the other key's auth cache and last-use record, then look again.
    const hit = await h.fetch(path, { key: other });
    expect(hit.status).toBe(200);
    expect(h.statements).toEqual([]);
    expect(h.calls.filter((c) => c.op === "put")).toHaveLength(1);

    // A refused request gets its Error and nothing of the cached response, also where its key
    // had to be looked up and the response was looked up beside it (edge-trips.test.ts).
    const matches = h.calls.filter((c) => c.op === "match").length;
    await expectError(await h.fetch(path, { key: null }), 401, "unauthorized");
    expect(h.calls.filter((c) => c.op === "match")).toHaveLength(matches);
    const { key: revoked, id } = await createKey("conditional revoked");
    await revokeKey(id);
    for (const [token, status, code] of [
      [writeOnly, 403, "insufficient_scope"],
      [revoked, 401, "unauthorized"],
    ] as const) {
      const refused = await h.fetch(path, { key: token });
      await expectError(refused, status, code);
      expect(refused.headers.get("ETag")).toBeNull();
    }

    // Neither the keys nor the cached responses (headers included) hold an API key or its hash.
    const secrets = [key, other, await hashApiKey(key), await hashApiKey(other)];
    const seen = [
      ...h.calls.map((c) => c.key),
      ...(await Promise.all(
        h.stored.map(async (r) => JSON.stringify([...r.headers]) + (await r.text())),
      )),
    ].join("\n");
    for (const secret of secrets) expect(seen).not.toContain(secret);
  });

  it("on a hit, x-d1-bookmark is the bookmark of the read it caches; a newer bookmark is a miss", async () => {
    const [pet] = await petsOf("sold", 1);
    const h = edge();
    const miss = await h.fetch(`/v1/pets/${pet?.id}`);
    const bookmark = miss.headers.get("x-d1-bookmark") as string;
    expect(bookmark).toBeTruthy();
    const hit = await h.fetch(`/v1/pets/${pet?.id}`);
    expect(h.statements).toEqual([]);
    expect(hit.headers.get("x-d1-bookmark")).toBe(bookmark);
    const sent = await h.fetch(`/v1/pets/${pet?.id}`, { headers: { "x-d1-bookmark": bookmark } });
    expect(h.statements).toEqual([]);
    expect(sent.headers.get("x-d1-bookmark")).toBe(bookmark);
    // A write moves the database on: its bookmark sorts after the cached one's.
    await petsOf("pending", 1);
    const newer = (await call("/v1/pets?limit=1", { key })).headers.get("x-d1-bookmark") as string;
    expect(newer > bookmark).toBe(true);
    const fresh = await h.fetch(`/v1/pets/${pet?.id}`, { headers: { "x-d1-bookmark": newer } });
    expect(h.statements.some((s) => /FROM pets/.test(s))).toBe(true);
    expect((fresh.headers.get("x-d1-bookmark") ?? "") >= newer).toBe(true);
  });
});

describe("how long a cached response responds", () => {
  it(`for less than ${CACHE_MAX_AGE_MS} ms from its D1 read, in this location, then D1 again`, async () => {
    const [pet] = await petsOf("sold", 1);
    const path = `/v1/pets/${pet?.id}`;
    let now = Date.UTC(2027, 0, 1);
    const h = edge({ clock: () => now });
    await h.fetch(path);
    expect(h.stored.map((r) => r.headers.get("Cache-Control"))).toEqual([
      `public, max-age=${CACHE_MAX_AGE_MS / 1000}`,
    ]);
    now += CACHE_MAX_AGE_MS - 1;
    await h.fetch(path);
    expect(h.statements).toEqual([]);
    now += 1;
    await h.fetch(path);
    expect(h.statements.some((s) => /FROM pets/.test(s))).toBe(true);
  });

  it("getPet's: never past the sunset, so nothing is cached in its last seconds; from it on, 410", async () => {
    const [pet] = await petsOf("sold", 1);
    const path = `/v1/pets/${pet?.id}`;
    let now = 0;
    /** A read at `before` ms before the sunset: what it cached. */
    const cachedAt = async (before: number) => {
      now = GET_PET_SUNSET_AT * 1000 - before;
      const h = edge({ clock: () => now });
      expect(await (await h.fetch(path)).json()).toEqual(pet);
      return h;
    };
    expect((await cachedAt(CACHE_MAX_AGE_MS)).stored).toHaveLength(1);
    expect((await cachedAt(CACHE_MAX_AGE_MS - 1)).calls).toEqual([]);
    const h = await cachedAt(CACHE_MAX_AGE_MS + 10);
    now = GET_PET_SUNSET_AT * 1000;
    const calls = h.calls.length;
    const gone = await h.fetch(path);
    await expectError(gone, 410, "gone", /GET \/v1\/pets/);
    expect(gone.headers.get("Cache-Control")).toBe("no-store");
    expect(h.calls.length).toBe(calls);
  });
});

describe("a failing or hanging Cache API never fails a request", () => {
  const failing = (how: "throw" | "reject" | "hang" | "bad body"): EdgeCache => ({
    match: () => {
      if (how === "throw") throw new Error("cache exploded");
      if (how === "reject") return Promise.reject(new Error("cache gone"));
      if (how === "hang") return new Promise<undefined>(() => {});
      const body = new ReadableStream({
        pull: (controller) => controller.error(new Error("truncated entry")),
      });
      return Promise.resolve(new Response(body, { status: 200 }));
    },
    put: () => {
      if (how === "throw") throw new Error("cache exploded");
      return Promise.reject(new Error("cache full"));
    },
  });

  it.each(["throw", "reject", "hang", "bad body"] as const)(
    "a cache that %s: D1 responds, the same bytes as ever",
    async (how) => {
      const [pet] = await petsOf("sold", 1);
      const healthy = edge();
      const expected = await snapshot(await healthy.fetch(`/v1/pets/${pet?.id}`));
      const h = edge({ cache: failing(how) });
      const response = await h.fetch(`/v1/pets/${pet?.id}`);
      expect(await snapshot(response)).toEqual(expected);
      expect(h.statements.some((s) => /FROM pets/.test(s))).toBe(true);
      if (how !== "hang") {
        expect(
          h.logs.some((l) => l.level === "warn" && /cache (match|put) failed/.test(String(l.msg))),
        ).toBe(true);
      }
    },
  );
});
