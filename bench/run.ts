// npm run bench (docs/performance.md, "What it measures"): the API against baselines in pairs of
// load slices (side by side or ABBA), its bundle and start-up; rewrites "Latest run". Knobs:
// BENCH_PAIRS (6), BENCH_SLICE_SECONDS (2), BENCH_CONNECTIONS (10), BENCH_STARTUP_PAIRS (20),
// BENCH_PORT (8781).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { quantile } from "simple-statistics";
import { buildMcpWorker, mcpWorkerOptions } from "../scripts/mcp-worker.ts";
import { GET_PET_SQL, LIST_PETS_SQL } from "../src/db/pets.ts";
import { encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
import type { Pet } from "../src/pets/schemas.ts";
import type { Check, Endpoint, Slice } from "./lib.ts";
import * as lib from "./lib.ts";

const { f0, f1, f2, log, ms, PORTS, sample, slice, spread } = lib;
const PAIRS = Number(process.env.BENCH_PAIRS ?? 6);
const SLICE_S = Number(process.env.BENCH_SLICE_SECONDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const STARTUP_PAIRS = Number(process.env.BENCH_STARTUP_PAIRS ?? 20);
const PETS = 100_000;
const DEEP_AFTER = 90_000;
/** The pet that getPet's rows ask for. */
const BENCH_PET_ID = 50_000;

const STATUSES = ["available", "pending", "sold"];
const PAGE = Array.from({ length: 20 }, (_, i) => ({ id: i + 1, name: `pet-${i + 1}` }));
const PAGE_BODY = PAGE.map((p) => ({
  ...p,
  categoryId: 1 + (p.id % 7),
  status: STATUSES[p.id % 3],
}));

/** The Ray ID Cloudflare gives each request; locally none is sent unless the client does. */
const RAY = "8f0b5e7c2a1d3e4f-LHR";

/** (a): a bare fetch handler serving a static page of 20 pets. */
const STATIC_WORKER = `const BODY = ${JSON.stringify(JSON.stringify(PAGE_BODY))};
export default { fetch: () => new Response(BODY, { headers: { "content-type": "application/json" } }) };`;

/**
 * (b): a bare fetch handler on the same D1 running listPets' SQL (page 1). With hit=list|pet
 * it makes every platform call the API makes for that read, and nothing else: its log line,
 * both rate limiters side by side, a D1 session (from the request's x-d1-bookmark), a Cache API match
 * and the body read of a hit, or on a miss the SQL and a put after the response (`x-raw-cache`
 * says which); inm: a 304 on the cached ETag. Served twice as the API is: with the Cache API
 * (raw) and with the no-op one of the from-D1 rows (raw-d1, where every match misses).
 */
const RAW_WORKER = `const toPet = (r) => ({ id: r.id, name: r.name, categoryId: r.categoryId, status: r.status });
const JSON_TYPE = { "content-type": "application/json" };
async function fromD1(db, what) {
  if (what === "pet") return toPet(await db.prepare(${JSON.stringify(GET_PET_SQL)}).bind(${BENCH_PET_ID}).first());
  const { results } = await db.prepare(${JSON.stringify(LIST_PETS_SQL)}).bind(0, 21).all();
  return results.slice(0, 20);
}
export default {
  async fetch(request, env, ctx) {
    const q = new URL(request.url).searchParams;
    const hit = q.get("hit");
    if (hit === null) return Response.json(await fromD1(env.DB, "list"));
    // The API's log line (Workers Logs), as long: one per request.
    console.log(JSON.stringify({ level: "info", msg: "request", request_id: "${RAY}", method: "GET", path: "/v1/pets", status: 200, duration_ms: 1.23 }));
    await Promise.all([
      env.RATE_LIMITER.limit({ key: "key:raw" }),
      env.ACCOUNT_RATE_LIMITER.limit({ key: "owner:raw" }),
    ]);
    const db = env.DB.withSession(request.headers.get("x-d1-bookmark") ?? "first-unconstrained");
    const key = "https://raw.bench/_edge/" + hit;
    const cached = await caches.default.match(key);
    let response;
    if (cached) {
      const body = await cached.arrayBuffer();
      const etag = cached.headers.get("ETag");
      response = q.has("inm") && request.headers.get("If-None-Match") === etag
        ? new Response(null, { status: 304, headers: { ETag: etag } })
        : new Response(body, { headers: { ...JSON_TYPE, ETag: etag } });
      response.headers.set("x-raw-cache", "hit");
    } else {
      const text = JSON.stringify(await fromD1(db, hit));
      const put = new Response(text, { headers: { ...JSON_TYPE, ETag: '"raw"', "Cache-Control": "public, max-age=86400" } });
      ctx.waitUntil(caches.default.put(key, put));
      response = new Response(text, { headers: { ...JSON_TYPE, "x-raw-cache": "miss" } });
    }
    response.headers.set("x-d1-bookmark", db.getBookmark() ?? "");
    return response;
  },
};`;

/**
 * The MCP worker of (m0), the floor of a tool call through /mcp's two workers: no SDK and no
 * JSON-RPC rules, only what any tool call must do. It reads the message, makes listPets' API
 * call through the API's way back (the whole /v1 chain, as every tool call does) and wraps the
 * page and its next cursor as a tool result. What (m) costs beyond it is the SDK's and the MCP
 * worker's own code; what it costs beyond (c) is the second worker and the second pass.
 */
const MCP_FLOOR_WORKER = `import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint {
  async serve(request, api) {
    const message = await request.json();
    const headers = new Headers();
    for (const name of ["Authorization", "CF-Connecting-IP", "CF-Ray"]) {
      const value = request.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const response = await api.fetch(new Request(new URL("/v1/pets", request.url), { headers }));
    const items = await response.json();
    const next = /<([^>]*)>/.exec(response.headers.get("Link") ?? "")?.[1];
    const nextCursor = next && new URL(next).searchParams.get("cursor");
    const structuredContent = { items, nextCursor };
    const text = JSON.stringify(structuredContent);
    return Response.json({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text }], structuredContent } });
  }
}`;

/**
 * The API with the edge cache (api) and with a no-op one (api-d1), the MCP worker their /mcp
 * hands requests to and the static worker, over PETS pets; the baselines of the API's reads in
 * a workerd of their own (`baselines`), so that the two can be loaded side by side.
 */
async function server(bundle: string, mcpBundle: string, state: string) {
  const api = lib.apiWorkerOptions(bundle, { mcp: true });
  const plain = { compatibilityDate: api.compatibilityDate, modules: true };
  const mf = await lib.serve(state, {
    workers: [
      ...lib.cachedAndNot(api, "api"),
      { ...plain, name: "static", script: STATIC_WORKER, ...lib.socket(PORTS.static) },
      mcpWorkerOptions(mcpBundle),
      // (m0): the API without its cache, its MCP binding on the floor worker.
      {
        ...lib.servedAt(api, PORTS.mcpFloor),
        name: "api-mcp-floor",
        cacheAPI: false,
        serviceBindings: { ...api.serviceBindings, MCP: "petstore-mcp-floor" },
      },
      { ...plain, name: "petstore-mcp-floor", script: MCP_FLOOR_WORKER },
    ],
  });
  const db = await seeded(mf, "api");
  return { mf, key: (await lib.newKey(db)).key };
}

/** The D1 database of `worker`, given the PETS pets. */
async function seeded(mf: Awaited<ReturnType<typeof lib.serve>>, worker: string) {
  const db = await mf.getD1Database("DB", worker);
  await lib.addPets(db, PETS);
  const count = await db.prepare("SELECT count(*) AS n FROM pets").first<{ n: number }>();
  assert.equal(count?.n, PETS, "the database was not seeded");
  return db;
}

/**
 * The raw workers, (b) and its like-for-like forms, in a workerd of their own over the same
 * PETS pets: each side-by-side comparison loads it and the API's at once on the server's CPU.
 */
async function baselines(bundle: string, state: string) {
  const { compatibilityDate, d1Databases, ratelimits } = lib.apiWorkerOptions(bundle);
  const plain = { compatibilityDate, modules: true };
  const mf = await lib.serve(state, {
    workers: [
      // The baseline of the from-D1 rows: its Cache API a no-op, as theirs (lib.cachedAndNot).
      {
        ...plain,
        name: "raw-d1",
        script: RAW_WORKER,
        d1Databases,
        ratelimits,
        cacheAPI: false,
        ...lib.socket(PORTS.rawD1),
      },
      {
        ...plain,
        name: "raw",
        script: RAW_WORKER,
        d1Databases,
        ratelimits,
        ...lib.socket(PORTS.raw),
      },
    ],
  });
  await seeded(mf, "raw");
  return mf;
}

/** Whether the API read D1 for this response: its D1 session handed out a bookmark. */
const readD1 = (headers: Headers) => headers.get("x-d1-bookmark") !== null;
/** A page of 20 pets from id `first` on (with a status filter: after `first`, all of it). */
const page =
  (first: number, status?: string): Check =>
  (body) => {
    const pets = JSON.parse(body) as Pet[];
    assert.equal(pets.length, 20, "a page of 20 pets");
    if (!status) return assert.equal(pets[0]?.id, first, "the page's first id");
    assert.ok((pets[0]?.id ?? 0) >= first, `the page starts before id ${first}`);
    assert.ok(
      pets.every((p) => p.status === status),
      `a pet is not ${status}`,
    );
  };
const benchPet: Check = (body) => assert.equal((JSON.parse(body) as Pet).id, BENCH_PET_ID);
const empty: Check = (body) => assert.equal(body, "", "a 304 with a body");
const next: Check = (_, h) => assert.match(h.get("Link") ?? "", /rel="next"/, "no next link");
const fromD1: Check = (_, h) => assert.ok(readD1(h), "no bookmark: this row must read D1");
/**
 * A cached response. Since the cache keeps the bookmark of the read it shows (changing animals),
 * a hit carries one as a read does, so only its tag is checked; the entry is read again once
 * it is CACHE_MAX_AGE_MS old, one response in a few thousand under this load.
 */
const apiHit: Check = (_, h) => assert.ok(h.get("ETag"), "no ETag");
const rawHit: Check = (_, h) =>
  assert.equal(h.get("x-raw-cache"), "hit", `raw cache ${h.get("x-raw-cache") ?? "not used"}`);
const deprecated: Check = (_, h) => assert.ok(h.get("Deprecation"), "no Deprecation header");
/** A JSON-RPC result whose structured content is the page `check` wants, and its next cursor. */
const mcpPage =
  (check: Check): Check =>
  (body, h) => {
    const { result } = JSON.parse(body) as { result?: Record<string, unknown> };
    assert.ok(result && !result.isError, `not a tool result: ${body.slice(0, 200)}`);
    const page = result.structuredContent as { items: Pet[]; nextCursor?: string };
    assert.ok(page.nextCursor, "no nextCursor");
    check(JSON.stringify(page.items), h);
  };

async function endpoints(key: string): Promise<Record<string, Endpoint>> {
  // As on Cloudflare, where every request carries its Ray ID (the API's request id).
  const headers = { Authorization: `Bearer ${key}`, "CF-Ray": RAY };
  const deep = await encodeCursor(DEEP_AFTER, undefined, LOCAL_CURSOR_SECRET);
  const deepAvailable = await encodeCursor(DEEP_AFTER, "available", LOCAL_CURSOR_SECRET);
  const raw = (query: string, status = 200) => ({ port: PORTS.raw, path: `/?${query}`, status });
  const rawHits = (q: string, status = 200) => ({ ...raw(`hit=${q}`, status), each: rawHit });
  /** On the no-op cache every match misses: the SQL runs, the put is made. */
  const missed: Check = (_, h) => assert.equal(h.get("x-raw-cache"), "miss", "not a miss");
  const rawD1 = (q: string) => ({ port: PORTS.rawD1, path: `/?hit=${q}`, each: missed });
  const fromApi = (path: string) => ({ port: PORTS.apiD1, path, headers });
  const hits = (p: string, status = 200) => ({
    port: PORTS.api,
    path: p,
    headers,
    status,
    each: apiHit,
  });
  const created: Check = (body, h) => {
    const pet = JSON.parse(body) as Pet;
    assert.ok(pet.name === "Bench" && pet.id > PETS, `unexpected pet ${body}`);
    assert.equal(h.get("Location"), `/v1/pets/${pet.id}`);
  };
  /** tools/call listPets through /mcp (2025-11-25), served by the same worker as `c`. */
  const mcpListPets = {
    ...{ port: PORTS.apiD1, path: "/mcp", method: "POST" as const },
    headers: {
      ...headers,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-11-25",
    },
    body: JSON.stringify({
      ...{ jsonrpc: "2.0", id: 1, method: "tools/call" },
      params: { name: "listPets", arguments: {} },
    }),
  };
  const create = {
    ...{ port: PORTS.api, path: "/v1/pets", method: "POST" as const, status: 201 },
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "Bench", categoryId: 7, status: "pending" }),
  };
  const SAME_CALLS = "raw worker + log line + both rate limiters + D1 session";
  const RAW_CALLS = `${SAME_CALLS} + Cache API match and body read`;
  const RAW_D1 = `${SAME_CALLS} + no-op Cache API match and put (as the API's from-D1 rows)`;
  /** Each endpoint by id: its label, where it is, and what every sample response must pass. */
  const LABELS = `a | a) static 20-pet JSON, bare worker
b | b) listPets SQL, raw D1 worker
bp | b+) ${RAW_D1} + listPets SQL (page 1)
bpf | b+f) ${RAW_D1} + getPet SQL
bh | b+h) ${RAW_CALLS} (page 1)
bhf | b+hf) ${RAW_CALLS} (one pet)
bn | b+n) ${RAW_CALLS}, 304 on its ETag (page 1)
c | c) listPets page 1, from D1
cs | c') listPets page 1, status=available, from D1
d | d) listPets deep page (after id ${f0(DEEP_AFTER)}), from D1
ds | d') listPets deep page, status=available, from D1
e | e) createPet
f | f) getPet, from D1
ch | c hit) listPets page 1, edge-cache hit
fh | f hit) getPet, edge-cache hit
cn | c 304) listPets page 1, If-None-Match with the current ETag (a cache hit)
m | m) listPets page 1 through /mcp (tools/call, 2025-11-25), from D1
m0 | m0) the same through /mcp's two workers at their floor: an MCP worker without the SDK that makes the API call and wraps the page`;
  const rows: Record<string, [Omit<Endpoint, "id" | "label">, ...Check[]]> = {
    a: [{ port: PORTS.static, path: "/" }, page(1)],
    b: [raw(""), page(1)],
    bp: [rawD1("list"), page(1)],
    bpf: [rawD1("pet"), benchPet],
    bh: [rawHits("list"), page(1)],
    bhf: [rawHits("pet"), benchPet],
    bn: [rawHits("list&inm", 304), empty],
    c: [fromApi("/v1/pets"), page(1), next, fromD1],
    cs: [fromApi("/v1/pets?status=available"), page(1, "available")],
    d: [fromApi(`/v1/pets?cursor=${deep}`), page(DEEP_AFTER + 1)],
    ds: [
      fromApi(`/v1/pets?status=available&cursor=${deepAvailable}`),
      page(DEEP_AFTER + 1, "available"),
    ],
    e: [create, created],
    f: [fromApi(`/v1/pets/${BENCH_PET_ID}`), benchPet, fromD1],
    ch: [hits("/v1/pets"), page(1), next],
    fh: [hits(`/v1/pets/${BENCH_PET_ID}`), benchPet, deprecated],
    // If-None-Match is filled in by prime() once the page's tag is known.
    cn: [hits("/v1/pets", 304), empty, next],
    m: [{ ...mcpListPets, each: mcpPage(page(1)) }],
    m0: [{ ...mcpListPets, port: PORTS.mcpFloor, each: mcpPage(page(1)) }],
  };
  const endpoints = LABELS.split("\n").map((line) => {
    const [id = "", label = ""] = line.split(" | ");
    const [where, ...checks] = rows[id] ?? [];
    if (!where) throw new Error(`no endpoint ${id}`);
    return [id, { id, label: `(${label}`, ...where, checks }];
  });
  return Object.fromEntries(endpoints);
}

/** Asks each hit row until it responds, hands the tags to the 304 rows; a hit must equal D1's response. */
async function prime(eps: Record<string, Endpoint>): Promise<void> {
  const untilHit = async (id: string) => {
    for (let i = 1; ; i++) {
      const response = await sample(eps[id] as Endpoint).catch((err: Error) => {
        if (i === 50) throw new Error(`still not a cache hit after 50 requests: ${err.message}`);
      });
      if (response) return { body: response.body, etag: response.headers.get("ETag") ?? "" };
      await lib.sleep(20);
    }
  };
  const [ch, fh, bh] = [await untilHit("ch"), await untilHit("fh"), await untilHit("bh")];
  await untilHit("bhf");
  (eps.cn as Endpoint).headers = { ...eps.cn?.headers, "If-None-Match": ch.etag };
  (eps.bn as Endpoint).headers = { "If-None-Match": bh.etag };
  for (const [id, hit] of Object.entries({ c: ch, f: fh })) {
    const d1 = await sample(eps[id] as Endpoint);
    if (hit.body !== d1.body || hit.etag !== d1.headers.get("ETag")) {
      throw new Error(
        `a cache hit differs from the response read from D1:\n${hit.etag} ${hit.body.slice(0, 200)}\n${d1.headers.get("ETag")} ${d1.body.slice(0, 200)}`,
      );
    }
  }
}

/**
 * Each comparison, target/baseline, measured in its own pairs: side by side (SIDE_BY_SIDE) or
 * ABBA, one slice after the other.
 */
const COMPARISONS = [
  // Like with like: reads from D1 against a raw worker making the same platform calls.
  ...["c/bp", "f/bpf"],
  // Depth alone: each deep page against page 1 of the same listing (same filter, same index).
  ...["d/c", "ds/cs"],
  // Diagnostic: against bare workers that make none of the API's platform calls, so locally
  // (where each call is a Durable Object on SQLite) the calls' cost more than the API's code;
  // and what the calls themselves cost.
  ...["c/b", "c/a", "d/b", "ds/b", "e/b", "f/b", "bp/b"],
  // The edge cache (issue 10): hits and a 304 against a raw worker making the same platform
  // calls; a hit against the same response read from D1.
  ...["ch/bh", "fh/bhf", "cn/bn", "ch/c"],
  // The MCP server: the same listPets as c, through /mcp (issue 33); diagnostic: the floor of
  // two workers and two passes (m0/c), and what the SDK and the MCP worker's code add (m/m0).
  ...["m/c", "m0/c", "m/m0"],
];
/**
 * The like-for-like comparisons: the API's workerd and the baselines' loaded at once, both on
 * the server's CPU, so that both see the same machine (docs/performance.md, "What it measures").
 */
const SIDE_BY_SIDE = new Set(["c/bp", "f/bpf", "ch/bh", "fh/bhf", "cn/bn"]);
/** The MCP worker's start-up budget over a raw worker, in ms (issue 33). */
const MCP_STARTUP_BUDGET_MS = 60;
/** The targets of issues 4, 10 and 33: the least median ratio of a comparison, and its name. */
const TARGETS: Record<string, [least: number, name: string]> = {
  "c/bp": [0.95, "listPets from D1 >= 0.95x raw worker, same calls (c/b+)"],
  "d/c": [0.9, "deep page within 10% of page 1 (d/c)"],
  "ds/cs": [0.9, "deep page with status=available within 10% of its page 1 (d'/c')"],
  "f/bpf": [0.85, "getPet from D1 >= 0.85x raw worker, same calls (f/b+f)"],
  "ch/bh": [0.95, "listPets cache hit >= 0.95x raw worker, same calls (c hit/b+h)"],
  "fh/bhf": [0.85, "getPet cache hit >= 0.85x raw worker, same calls (f hit/b+hf)"],
  "cn/bn": [0.85, "304 revalidation >= 0.85x raw worker, same calls (c 304/b+n)"],
  "m/c": [0.85, "listPets through /mcp >= 0.85x the same listPets at /v1/pets (m/c)"],
};

type Comparison = { target: string; base: string; sideBySide: boolean } & (
  | { ratio: ReturnType<typeof spread>; extraUs: number; retried: string[] }
  | { notMeasured: string }
);
const firstLine = (text: string) => text.split("\n").slice(0, 2).join(" ").trim();

/** The slices of side-by-side pairs: an endpoint's row shows them when it has no other. */
const sideBySideSlices: Slice[] = [];
/** The two workerds: the API's and the baselines' (side by side, one loads each). */
type Servers = Record<"api" | "baselines", Awaited<ReturnType<typeof lib.serve>>>;

/**
 * PAIRS pairs of slices; a bad pair runs once more. ABBA: one slice after the other, the ratio of
 * their throughputs. Side by side: both at once, each on its own workerd, the ratio of their
 * CPU times per request (the baseline's over the target's): the throughput each would have
 * with the CPU to itself. Side-by-side slices go to `all` only when the endpoint has no other.
 */
async function compare(
  target: Endpoint,
  base: Endpoint,
  all: Slice[],
  servers: Servers,
): Promise<Comparison> {
  const [t, b] = [target.id, base.id];
  // Without a CPU count per process (no /proc), every comparison is ABBA.
  const sideBySide = lib.canCountCpu && SIDE_BY_SIDE.has(`${t}/${b}`);
  /** Each pair's ratio, and the target's extra server time per request (us). */
  const pairs: Array<{ ratio: number; extraUs: number }> = [];
  const retried: string[] = [];
  // A pair takes 2 slices' time either way: side by side, each workerd has half the CPU.
  const s = (e: Endpoint) => slice(e, sideBySide ? 2 * SLICE_S : SLICE_S, CONNECTIONS);
  for (let i = 0; i < PAIRS; i++) {
    for (let attempt = 1; ; attempt++) {
      try {
        if (sideBySide) {
          const cpu = () => [lib.cpuMs(servers.api), lib.cpuMs(servers.baselines)];
          const [api0 = 0, base0 = 0] = cpu();
          const [x, y] = await Promise.all([s(target), s(base)]);
          const [api1 = 0, base1 = 0] = cpu();
          const msX = (api1 - api0) / x.latenciesMs.length;
          const msY = (base1 - base0) / y.latenciesMs.length;
          pairs.push({ ratio: msY / msX, extraUs: (msX - msY) * 1000 });
          sideBySideSlices.push(x, y);
        } else {
          const [x, y] =
            i % 2 === 0 ? [await s(base), await s(target)] : [await s(target), await s(base)];
          const [tx, by] = i % 2 === 0 ? [y, x] : [x, y];
          pairs.push({ ratio: tx.rps / by.rps, extraUs: 1e6 / tx.rps - 1e6 / by.rps });
          all.push(tx, by);
        }
        break;
      } catch (err) {
        if (!(err instanceof lib.BadResponses)) throw err;
        log(`${t}/${b} pair ${i + 1}, attempt ${attempt}: ${err.message}`);
        const recheck = await Promise.allSettled([sample(target), sample(base)]);
        const still = recheck.flatMap((x) => (x.status === "rejected" ? [x.reason.message] : []));
        if (still.length > 0) log(`  responses right after it: ${still.join("; ")}`);
        if (attempt === 2) {
          return { target: t, base: b, sideBySide, notMeasured: firstLine(err.message) };
        }
        retried.push(firstLine(err.message));
      }
    }
  }
  const ratio = spread(
    pairs.map((p) => p.ratio),
    f2,
  );
  const extraUs = spread(pairs.map((p) => p.extraUs)).median;
  return { target: t, base: b, sideBySide, ratio, extraUs, retried };
}

/**
 * The MCP worker's first tools/call: a caller worker hands it one listPets call (2025-11-25) and
 * a stub of the API (its key check and one page), and responds with 200 when the result is the page.
 */
const MCP_CALLER = `import { RpcTarget } from "cloudflare:workers";
const PAGE = ${JSON.stringify(JSON.stringify(PAGE_BODY))};
class Api extends RpcTarget {
  authenticate() { return new Response(null, { status: 204, headers: { "X-Key-Scopes": "pets:read" } }); }
  fetch() { return new Response(PAGE, { headers: { "content-type": "application/json", link: '<http://x/v1/pets?cursor=next>; rel="next"' } }); }
}
export default {
  async fetch(request, env) {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "listPets", arguments: {} } });
    const headers = { authorization: "Bearer k", "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
    const response = await env.MCP.serve(new Request("http://x/mcp", { method: "POST", headers, body }), new Api(), { platformOrigin: "http://x" });
    const text = await response.text();
    return new Response(text, { status: text.includes('"nextCursor":"next"') ? 200 : 500 });
  },
};
`;

/**
 * Start-up: `workerd serve` (pinned) to its first response, against a raw worker, in ABBA pairs;
 * for the MCP worker, also to its first tools/call (`called`), which loads the SDK.
 */
async function startup(kind: "api" | "mcp", bundle: string, dir: string) {
  const options = kind === "mcp" ? mcpWorkerOptions(bundle) : lib.apiWorkerOptions(bundle);
  const texts = Object.entries(options.bindings ?? {})
    .filter(([, v]) => typeof v === "string")
    .map(([name, v]) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(v)})`);
  const worker = (name: string, module: string, bindings: string[]) => `
const ${name} :Workerd.Worker = (
  modules = [(name = "${module}", esModule = embed "${module}")],
  compatibilityDate = ${JSON.stringify(options.compatibilityDate)},
  compatibilityFlags = ${JSON.stringify(options.compatibilityFlags ?? [])},
  bindings = [${bindings.join(", ")}],
);`;
  /** A config of `workers` (the first serves the socket), its modules written by `files`. */
  const config = (
    name: string,
    files: Record<string, (file: string) => void>,
    workers: string[],
  ) => {
    mkdirSync(path.join(dir, name), { recursive: true });
    for (const [module, write] of Object.entries(files)) write(path.join(dir, name, module));
    const file = path.join(dir, name, "config.capnp");
    const names = workers.map((w) => /const (\w+) :/.exec(w)?.[1]);
    writeFileSync(
      file,
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [${names.map((n, i) => `(name = "${i === 0 ? "main" : n}", worker = .${n})`).join(", ")}],
  sockets = [(name = "http", address = "${lib.HOST}:${PORTS.startup}", http = (), service = "main")],
);
${workers.join("\n")}
`,
    );
    return file;
  };
  const firstResponse = async (file: string, status: number) => {
    const started = performance.now();
    const [command = "", ...args] = lib.pinned(lib.SERVER_CPU, [lib.WORKERD, "serve", file]);
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    try {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`workerd exited: ${stderr}`);
        if (performance.now() - started > 20_000) throw new Error(`no response in 20 s: ${stderr}`);
        const response = await fetch(`http://${lib.HOST}:${PORTS.startup}/`).catch(() => undefined);
        const body = await response?.text();
        if (response?.status === status) return performance.now() - started;
        if (response) throw new Error(`${kind}: ${response.status} ${body}`);
        await lib.sleep(1); // not listening yet
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null && child.kill("SIGTERM"))
        await once(child, "exit");
    }
  };
  const copy = (file: string) => copyFileSync(bundle, file);
  const rawWorker = `export default { fetch() { return new Response("ok"); } };\n`;
  const raw = config("raw", { "raw.js": (f) => writeFileSync(f, rawWorker) }, [
    worker("raw", "raw.js", []),
  ]);
  const alone = config(kind, { "worker.js": copy }, [worker("worker", "worker.js", texts)]);
  /** Pairs of the raw worker's and `file`'s first responses (`status`), and their difference. */
  const against = async (file: string, status: number) => {
    const rawFirst = () => firstResponse(raw, 200);
    const workerFirst = () => firstResponse(file, status);
    await rawFirst(); // warms the page cache: workerd's binary, the bundle
    await workerFirst();
    const pairs = await lib.abba(STARTUP_PAIRS, rawFirst, workerFirst);
    return {
      worker: spread(pairs.map(([, w]) => w)),
      raw: spread(pairs.map(([r]) => r)),
      extra: spread(pairs.map(([r, w]) => w - r)),
    };
  };
  const first = await against(alone, kind === "mcp" ? 404 : 200);
  if (kind === "api") return { ...first, called: undefined };
  const write = (f: string) => writeFileSync(f, MCP_CALLER);
  const called = config("called", { "caller.js": write, "mcp.js": copy }, [
    worker("caller", "caller.js", ['(name = "MCP", service = "mcp")']),
    worker("mcp", "mcp.js", texts),
  ]);
  return { ...first, called: await against(called, 200) };
}

/** The whole run: every figure of the section. */
async function measure() {
  log(
    `plan: ${COMPARISONS.length} comparisons x ${PAIRS} pairs x 2 slices x ${SLICE_S} s = ~${Math.round(COMPARISONS.length * PAIRS * 2 * SLICE_S)} s of load, plus a warm-up slice per endpoint`,
  );
  const { facts, scratch } = await lib.begin("run", Object.values(PORTS));
  log("building the worker (wrangler deploy --dry-run)");
  const bundle = lib.buildBundle(path.join(scratch, "build"));
  log(`bundle: ${lib.sizeText(bundle)}; starting the server on CPU ${lib.SERVER_CPU}`);
  const all: Slice[] = [];
  const comparisons: Comparison[] = [];
  /** Endpoints whose response was wrong when checked again after all the load. */
  const afterLoad: string[] = [];
  const mcpFile = buildMcpWorker(path.join(scratch, "mcp"));
  const { mf, key } = await server(bundle.file, mcpFile, path.join(scratch, "state"));
  const servers = { api: mf, baselines: await baselines(bundle.file, path.join(scratch, "raw")) };
  const eps = await endpoints(key);
  try {
    log(`server ready: ${f0(PETS)} pets`);
    await prime(eps);
    for (const e of Object.values(eps)) await sample(e);
    log("warm-up");
    for (const e of Object.values(eps)) {
      // A bad warm-up response is said; the comparisons that use the endpoint deal with it.
      await slice(e, SLICE_S, CONNECTIONS).catch((err: Error) => log(`warm-up: ${err.message}`));
    }
    for (const pair of COMPARISONS) {
      const [t = "", b = ""] = pair.split("/");
      const x = await compare(eps[t] as Endpoint, eps[b] as Endpoint, all, servers);
      comparisons.push(x);
      log(
        `${t}/${b}: ${"notMeasured" in x ? `NOT MEASURED (${x.notMeasured})` : `${x.ratio.text}, ${us(x.extraUs)}/request`}`,
      );
    }
    // The responses are still right after the load (e.g. no 429, no 503, hits still hits).
    for (const e of Object.values(eps)) {
      await sample(e).catch((err: Error) => afterLoad.push(firstLine(err.message)));
    }
  } finally {
    await mf.dispose();
    await servers.baselines.dispose();
  }

  log("start-up: workerd serve -> first response, the API and the MCP worker vs a raw worker");
  const api = await startup("api", bundle.file, path.join(scratch, "startup-api"));
  const mcp = { ...lib.sizeOf(mcpFile), ...(await startup("mcp", mcpFile, `${scratch}/mcp-up`)) };
  rmSync(scratch, { recursive: true, force: true });
  const endpointRows = Object.values(eps).map((e) => {
    const alone = all.filter((s) => s.endpoint === e.id);
    const slices = alone.length > 0 ? alone : sideBySideSlices.filter((s) => s.endpoint === e.id);
    const label = alone.length > 0 || slices.length === 0 ? e.label : `${e.label}, side by side`;
    const latencies = slices.flatMap((s) => s.latenciesMs);
    if (latencies.length === 0) return `| ${label} | not measured | | | | 0 |`;
    const [p50 = 0, p99 = 0] = quantile(latencies, [0.5, 0.99]);
    const rps = spread(slices.map((s) => s.rps));
    return `| ${label} | ${f0(rps.median)} | ${f0(rps.min)}-${f0(rps.max)} | ${ms(p50)} | ${ms(p99)} | ${f0(latencies.length)} |`;
  });
  return { facts, bundle, api, mcp, comparisons, afterLoad, endpointRows, seconds: lib.seconds() };
}

const us = (n: number) => `${n >= 0 ? "+" : ""}${f0(n)} us`;
const verdict = (pass: boolean | undefined) =>
  pass === undefined ? "**not measured**" : pass ? "met" : "**missed**";

function markdown(r: Awaited<ReturnType<typeof measure>>): string {
  const { gzipKiB } = r.bundle;
  const targets = r.comparisons.flatMap((x) => {
    const [least, name] = TARGETS[`${x.target}/${x.base}`] ?? [];
    if (name === undefined || least === undefined) return [];
    const [measured, pass] =
      "notMeasured" in x
        ? [`not measured: ${x.notMeasured}`]
        : [x.ratio.text, x.ratio.median >= least];
    return [`| ${name} | >= ${f2(least)} | ${measured} | ${verdict(pass)} |`];
  });
  const start = (s: Pick<typeof r.api, "worker" | "raw" | "extra">) =>
    `${ms(s.worker.median)} ms, raw worker ${ms(s.raw.median)} ms, **extra +${ms(s.extra.median)} ms** (pairs ranged ${ms(s.extra.min)} to ${ms(s.extra.max)} ms)`;
  const problems = r.comparisons.flatMap((x) => {
    const pair = `${x.target}/${x.base}`;
    if ("notMeasured" in x) return [`- **${pair} not measured**: ${x.notMeasured}`];
    return x.retried.map((why) => `- ${pair}: one pair failed and was run again: ${why}`);
  });
  problems.push(...r.afterLoad.map((why) => `- **wrong response after the load**: ${why}`));
  return [
    `Run ${r.facts.date}: ${r.facts.line}.`,
    `Server pinned to CPU ${lib.SERVER_CPU}, load generator to CPU ${lib.LOADGEN_CPU}: ${lib.canPin ? "yes" : "NO (taskset unavailable): figures are less reliable"}. ${PAIRS} pairs per comparison: side by side, slices of ${2 * SLICE_S} s, for ${lib.canCountCpu ? [...SIDE_BY_SIDE].join(", ") : "none (NO CPU count per process here: figures are less reliable)"} (CPU time per request); ABBA, slices of ${SLICE_S} s, for the rest (throughput); ${CONNECTIONS} connections to each endpoint, ${f0(PETS)} pets; whole run ${Math.round(r.seconds)} s.`,
    `Every comparison measured, no pair run again, every response right after the load: ${problems.length === 0 ? "yes" : "**no**, see below"}.`,
    ...(problems.length > 0 ? ["", ...problems] : []),
    "",
    "### Targets",
    "",
    lib.table("| target | budget | measured | |", [
      ...targets,
      "| auth adds no D1 query in steady state | 0 queries | 0 (test/perf-auth-cache.test.ts, npm test) | met |",
      "| a cache hit reads no D1 row | 0 rows | 0 (test/conditional-read.test.ts, npm test) | met |",
      `| bundle <= ${lib.BUNDLE_BUDGET_KIB} KiB gzip | <= ${lib.BUNDLE_BUDGET_KIB} | ${f1(gzipKiB)} KiB | ${verdict(gzipKiB <= lib.BUNDLE_BUDGET_KIB)} |`,
      `| start-up <= +${lib.STARTUP_BUDGET_MS} ms over a raw worker | <= +${lib.STARTUP_BUDGET_MS} | +${ms(r.api.extra.median)} ms (${ms(r.api.extra.min)} to ${ms(r.api.extra.max)}) | ${verdict(r.api.extra.median <= lib.STARTUP_BUDGET_MS)} |`,
      `| MCP worker start-up <= +${MCP_STARTUP_BUDGET_MS} ms over a raw worker | <= +${MCP_STARTUP_BUDGET_MS} | +${ms(r.mcp.extra.median)} ms (${ms(r.mcp.extra.min)} to ${ms(r.mcp.extra.max)}) | ${verdict(r.mcp.extra.median <= MCP_STARTUP_BUDGET_MS)} |`,
    ]),
    "",
    "### Ratios (medians over pairs: of CPU time per request side by side, of throughput in ABBA order)",
    "",
    lib.table(
      "| ratio | median | range | extra server time per request | |",
      r.comparisons.map((x) => {
        const least = TARGETS[`${x.target}/${x.base}`]?.[0];
        const kind = `${least === undefined ? "diagnostic" : `target >= ${f2(least)}`}, ${x.sideBySide ? "side by side" : "ABBA"}`;
        return "notMeasured" in x
          ? `| ${x.target}/${x.base} | **not measured** | | | ${kind} |`
          : `| ${x.target}/${x.base} | ${f2(x.ratio.median)} | ${f2(x.ratio.min)}-${f2(x.ratio.max)} | ${us(x.extraUs)} | ${kind} |`;
      }),
    ),
    "",
    "### Endpoints",
    "",
    lib.table(
      "| endpoint | req/s (median of slices) | range | p50 ms | p99 ms | requests |",
      r.endpointRows,
    ),
    "",
    "p50/p99: exact percentiles of every response's latency as autocannon timed it (no histogram, no coordinated-omission padding), pooled over the endpoint's slices.",
    "",
    "### Bundle and start-up",
    "",
    `- Bundle (\`wrangler deploy --dry-run\`, minified; the OpenAPI document and the docs page's files are static assets, not in it): ${f1(r.bundle.bytes / 1024)} KiB, **${f1(gzipKiB)} KiB gzip** (zlib level 9; wrangler says "${r.bundle.wranglerSays ?? "?"}"). Budget ${lib.BUNDLE_BUDGET_KIB} KiB gzip, enforced by \`npm run bench:size\`.`,
    `- Start-up (spawn \`workerd serve\` to first 200 on GET /, median of ${STARTUP_PAIRS} ABBA pairs): API ${start(r.api)}. Budget +${lib.STARTUP_BUDGET_MS} ms.`,
    `- The MCP worker (\`mcp/\`, a worker of its own behind the API's MCP binding, outside the API's budget): ${f1(r.mcp.bytes / 1024)} KiB, **${f1(r.mcp.gzipKiB)} KiB gzip**; start-up to its first response ${start(r.mcp)}. Budget +${MCP_STARTUP_BUDGET_MS} ms. It loads the SDK with the first request that carries a key: to a first \`tools/call listPets\` (a caller worker hands it the request and a stub of the API) ${start(r.mcp.called ?? r.mcp)}. The API pays these on its first \`/mcp\` requests in a location only.`,
  ].join("\n");
}

const results = await measure();
lib.writeMeasured("docs/performance.md", markdown(results));
const notMeasured = results.comparisons.filter((x) => "notMeasured" in x).length;
if (notMeasured > 0 || results.afterLoad.length > 0) {
  console.error(
    `${notMeasured} comparison(s) not measured, ${results.afterLoad.length} wrong response(s) after the load: see above and docs/performance.md`,
  );
  process.exitCode = 1;
}
