// npm run bench:edge: what a client waits for, request class by class, in two locations of
// workers of bench/edge-worker.ts over one D1 (A: ISOLATES, B: B's; a location's isolates share
// its Cache API and none of the other's), and how long B serves a response a change at A made
// wrong; rewrites the edge section of docs/performance.md. Knobs: EDGE_SAMPLES (12),
// EDGE_CHANGE_SAMPLES (5), BENCH_PORT (8781, and the five after it).
import { once } from "node:events";
import { rmSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { buildMcpWorker, mcpWorkerOptions } from "../scripts/mcp-worker.ts";
import { issueApiKey, LOCAL_KEY_TAG_SECRET } from "../src/auth/keys.ts";
import { AUTH_CACHE_TTL_MS, CACHE_MAX_AGE_MS } from "../src/config.ts";
import { encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
import type { Pet } from "../src/pets/schemas.ts";
import type { Delays, Place } from "../test/support/instrumentation.ts";
import * as lib from "./lib.ts";

const DELAYS: Required<Delays> = { primary: 100, replica: 10, cache: 2 };
/** Location A's isolates are 0 to ISOLATES - 1; the rows run there unless they name B. */
const ISOLATES = 4;
/** Location B's isolates, after A's. */
const B = [ISOLATES, ISOLATES + 1];
const PORTS = Array.from({ length: ISOLATES + B.length }, (_, i) => lib.PORTS.api + i);
const locationOf = (isolate: number) => (isolate < ISOLATES ? "A" : "B");
const SAMPLES = Number(process.env.EDGE_SAMPLES ?? 12);
/** Changes at A whose staleness at B is timed, of each kind (each takes about 4 s). */
const CHANGE_SAMPLES = Number(process.env.EDGE_CHANGE_SAMPLES ?? 5);
/** After a change's response, no location may serve a response it invalidated for longer. */
const STALE_BOUND_MS = 5_000;
/** Unmeasured reads each isolate responds first, so its code is warm (JIT) on every path. */
const WARM_UP = 5;
const PETS = 1_000;
const PET = `/v1/pets/${PETS / 2}`;
const PAGE = "/v1/pets?limit=20";
const BOOKMARK = "x-d1-bookmark";
const MERGE_PATCH = { "Content-Type": "application/merge-patch+json" };

/** What a response waited for: its trips by place, and how many of them ran one after another. */
type Trips = Record<Place, number> & { inSequence: number };
const agent = new http.Agent({ keepAlive: true });
/** When each location last read each path's pets from D1 (the request's start), as seen here. */
const readAt = new Map<string, number>();
const READS_PETS = /^(primary|replica): [\s\S]*\bFROM pets\b/;

/** One request to `isolate` as `key`, timed to its whole body; throws unless `init.status` (200). */
async function send(
  isolate: number,
  pathname: string,
  key: string,
  init: {
    method?: string;
    body?: unknown;
    headers?: Record<string, string>;
    status?: number | "any";
  } = {},
) {
  const headers: Record<string, string> = {
    Host: "api.petstore.test",
    Authorization: `Bearer ${key}`,
  };
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  if (body !== undefined) headers["Content-Type"] = "application/json";
  Object.assign(headers, init.headers);
  const method = init.method ?? "GET";
  const t0 = performance.now();
  const url = `http://${lib.HOST}:${PORTS[isolate]}${pathname}`;
  const request = http.request(url, { method, headers, agent });
  request.end(body);
  const [response] = (await once(request, "response")) as [http.IncomingMessage];
  const text = Buffer.concat(await response.toArray()).toString();
  const ms = performance.now() - t0;
  const header = (name: string) => [response.headers[name] ?? []].flat().join(", ");
  const status = response.statusCode ?? 0;
  if (init.status !== "any" && status !== (init.status ?? 200))
    throw new Error(`${method} ${pathname}: status ${status}: ${text}`);
  const trips = JSON.parse(header("x-edge-trips") || "null") as Trips | null;
  if (!trips) throw new Error(`${pathname}: no x-edge-trips header (status ${status})`);
  // The trips themselves (place: SQL or cache call), to say why a row does not hold.
  const list = JSON.parse(decodeURIComponent(header("x-edge-trip-list") || "[]")) as string[];
  if (method === "GET" && status === 200 && list.some((t) => READS_PETS.test(t)))
    readAt.set(`${locationOf(isolate)} ${pathname}`, t0);
  return { ms, trips, list, body: text, status, header };
}
type EdgeResponse = Awaited<ReturnType<typeof send>>;

/** One MCP message to /mcp of isolate 1 (2025-11-25); throws on a protocol or tool error. */
async function mcp(key: string, method: string, params: unknown) {
  const headers = {
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
  };
  const body = { jsonrpc: "2.0", id: 1, method, params };
  const response = await send(1, "/mcp", key, { method: "POST", body, headers });
  type Message = { result?: { isError?: boolean }; error?: unknown };
  const { result, error } = JSON.parse(response.body) as Message;
  if (error || !result || result.isError) throw new Error(`/mcp ${method}: ${response.body}`);
  return response;
}

/**
 * Keys as the rows need them, each used well within AUTH_CACHE_TTL_MS of its D1 read (a key's
 * record serves that long in every tier, then is read again): `known(isolate)`, one the isolate
 * has verified; `verified()`, one location A verified (on isolate 0) at least 100 ms before (its
 * record is put in A's cache after the response) and no isolate has used since.
 */
function keysOf(newKey: () => Promise<string>) {
  type Held = { key: string; at: number };
  const young = ({ at }: Held) => performance.now() - at < AUTH_CACHE_TTL_MS / 2;
  const verify = async (isolate: number): Promise<Held> => {
    const [key, at] = [await newKey(), performance.now()];
    await send(isolate, PET, key);
    return { key, at };
  };
  const known = new Map<number, Held>();
  let verified: Held[] = [];
  return {
    async known(isolate: number) {
      const held = known.get(isolate);
      if (held && young(held)) return held.key;
      const fresh = await verify(isolate);
      known.set(isolate, fresh);
      return fresh.key;
    },
    async verified() {
      verified = verified.filter(young);
      if (verified.length === 0) {
        for (let i = 0; i < SAMPLES; i++) verified.push(await verify(0));
        await lib.sleep(100);
      }
      return (verified.shift() as Held).key;
    },
  };
}
type Keys = ReturnType<typeof keysOf>;

const fromD1 = (response: EdgeResponse) => response.list.some((t) => READS_PETS.test(t));

/**
 * Reads `path` at the first isolate of `isolate`'s location until the location's cached
 * response is a hit younger than half CACHE_MAX_AGE_MS, so a read right after it is a hit too.
 * A cached response is served for CACHE_MAX_AGE_MS after its D1 read only: one warm-up at the
 * start would leave later rows reading D1, so every cached sample is warmed again just before.
 */
async function warm(isolate: number, path: string, keys: Keys) {
  const first = locationOf(isolate) === "A" ? 0 : (B[0] as number);
  const key = await keys.known(first);
  for (;;) {
    // Read from D1: read again, since its put lands after the response.
    if (fromD1(await send(first, path, key))) continue;
    const at = readAt.get(`${locationOf(first)} ${path}`);
    const age = at === undefined ? Number.POSITIVE_INFINITY : performance.now() - at;
    if (age < CACHE_MAX_AGE_MS / 2) return;
    // An older hit: wait until it is served no more, so the next read replaces it.
    await lib.sleep(at === undefined ? CACHE_MAX_AGE_MS : Math.max(CACHE_MAX_AGE_MS - age, 0) + 10);
  }
}

/** A read of `path` at `isolate` as `key` that its location serves from its cache. */
async function cachedRead(isolate: number, path: string, key: string, keys: Keys) {
  await warm(isolate, path, keys);
  return send(isolate, path, key);
}

/** A read a change invalidates, and whether a response to it shows the change. */
interface Read {
  path: string;
  right(response: EdgeResponse): boolean;
}
/** A change of a pet at A (isolate 1): what it is, and the reads it invalidates. */
interface Change {
  label: string;
  reads: string;
  send(id: number, key: string): Promise<EdgeResponse>;
  wrong(id: number): Promise<Read[]>;
}
const idsOf = (response: EdgeResponse) => (JSON.parse(response.body) as Pet[]).map((p) => p.id);
/** A full page (a next page follows, so it is cached) from pet `id`'s place on. */
const pageFrom = async (id: number, status?: Pet["status"]) =>
  `/v1/pets?limit=5${status ? `&status=${status}` : ""}&cursor=${await encodeCursor(id - 1, status, LOCAL_CURSOR_SECRET)}`;
const patch = (id: number, key: string, body: unknown, headers = {}, status = 200) =>
  send(1, `/v1/pets/${id}`, key, {
    ...{ method: "PATCH", body, status },
    headers: { ...MERGE_PATCH, ...headers },
  });
const remove = (id: number, key: string, headers = {}) =>
  send(1, `/v1/pets/${id}`, key, { method: "DELETE", headers, status: 204 });
const sale: Change = {
  label: "a pet's status, available to sold (updatePet)",
  reads: "getPet, the available page it leaves, the sold page it joins",
  send: (id, key) => patch(id, key, { status: "sold" }),
  wrong: async (id) => [
    { path: `/v1/pets/${id}`, right: (a) => (JSON.parse(a.body) as Pet).status === "sold" },
    { path: await pageFrom(id, "available"), right: (a) => !idsOf(a).includes(id) },
    { path: await pageFrom(id, "sold"), right: (a) => idsOf(a).includes(id) },
  ],
};
const removal: Change = {
  label: "a pet removed (deletePet)",
  reads: "getPet (404 once right), the available page and the unfiltered page it leaves",
  send: (id, key) => remove(id, key),
  wrong: async (id) => [
    { path: `/v1/pets/${id}`, right: (a) => a.status === 404 },
    { path: await pageFrom(id, "available"), right: (a) => !idsOf(a).includes(id) },
    { path: await pageFrom(id), right: (a) => !idsOf(a).includes(id) },
  ],
};
const CHANGES = [sale, removal];

/**
 * Pet `id` changes at A right after `reader`'s location cached the reads the change makes
 * wrong (each read from D1, then a hit): the reads, the change's response and when it came.
 */
async function changeAfterCaching(change: Change, id: number, reader: number, keys: Keys) {
  const key = await keys.known(1);
  const reads = await change.wrong(id);
  for (const { path } of reads) await warm(reader, path, keys);
  const response = await change.send(id, key);
  return { reads, response, at: performance.now() };
}

/** At `reader` right after a change at A, read `i` of those it invalidated, with the change's bookmark; throws unless right. */
async function readWithBookmark(change: Change, id: number, i: number, reader: number, keys: Keys) {
  const { reads, response } = await changeAfterCaching(change, id, reader, keys);
  const read = reads[i % reads.length] as Read;
  const init = { headers: { [BOOKMARK]: response.header(BOOKMARK) }, status: "any" as const };
  const bookmarked = await send(reader, read.path, await keys.known(reader), init);
  if (!read.right(bookmarked))
    throw new Error(`${read.path} with the change's bookmark: ${bookmarked.body}`);
  return bookmarked;
}

/**
 * How long B serves what `change` invalidated: B cached its reads, pet `id` changes at A, then
 * B's isolates in turn send the reads without a bookmark until all are right. The last wrong
 * response's arrival after the change's response (ms), and whether B's first reads after the
 * change were all wrong (served from its cache: else the figure says nothing).
 */
async function staleAtB(change: Change, id: number, keys: Keys) {
  const own: string[] = [];
  for (const isolate of B) own.push(await keys.known(isolate));
  const { reads, at } = await changeAfterCaching(change, id, B[0] as number, keys);
  let [wrongFor, firstWrong] = [0, true];
  for (let round = 0, right = false; !right; round++) {
    right = true;
    for (const read of reads) {
      const turn = round % B.length;
      const response = await send(B[turn] as number, read.path, own[turn] as string, {
        status: "any",
      });
      if (read.right(response)) firstWrong &&= round > 0;
      else [right, wrongFor] = [false, performance.now() - at];
    }
    if (performance.now() - at > 2 * STALE_BOUND_MS)
      throw new Error(`${change.label}: still wrong at B`);
  }
  return { wrongFor, firstWrong };
}

const noTrip = (t: Trips) => t.primary === 0 && t.replica === 0;
/** What each request class may wait for at most, by the name its row gives. */
const HOLDS: Record<string, (t: Trips) => boolean> = {
  oneTrip: (t) => noTrip(t) && t.inSequence <= 1,
  replicaOnly: (t) => t.primary === 0 && t.replica === 1,
  freshKey: (t) => t.primary === 0 && t.replica === 1 && t.inSequence <= 2,
  freshKeyMiss: (t) => t.primary === 0 && t.replica === 2 && t.inSequence <= 3,
  onePrimary: (t) => t.primary === 1 && t.replica === 0,
  atMostOnePrimary: (t) => t.primary <= 1 && t.replica === 0,
  nothing: (t) => t.primary + t.replica + t.cache === 0,
  stranger: (t) => t.primary <= 1 && t.replica === 1,
  noTrip,
};
const ONE = "0 primary, 0 replica, 1 in a row";
const AT_ONCE = "0 primary, 1 replica; right at once";
/** The request classes: label | what it must wait for at most | its HOLDS, in ROWS' order. */
const TABLE = `cached getPet, isolate that never saw the key | ${ONE} | oneTrip
cached listPets page, isolate that never saw the key | ${ONE} | oneTrip
cached read, warm isolate | ${ONE} | oneTrip
cached getPet, key the location has not verified yet | 0 primary, 1 replica, 2 in a row | freshKey
listPets cache miss (a last page), warm isolate | 0 primary, 1 replica | replicaOnly
listPets cache miss (a last page), key the location has not verified yet | 0 primary, 2 replica (one read more than a hit), 3 in a row | freshKeyMiss
createPet | exactly 1 primary | onePrimary
createPet with a new Idempotency-Key | exactly 1 primary | onePrimary
its replay | at most 1 primary | atMostOnePrimary
the same key with another body (422) | at most 1 primary | atMostOnePrimary
updatePet, a status change | exactly 1 primary | onePrimary
updatePet with If-Match, the pet's ETag | exactly 1 primary | onePrimary
updatePet with an If-Match the pet no longer has (412) | exactly 1 primary | onePrimary
deletePet | exactly 1 primary | onePrimary
deletePet with If-Match, the pet's ETag | exactly 1 primary | onePrimary
the changer's read with its change's bookmark (getPet or a page, cached) | ${AT_ONCE} | replicaOnly
the same read at B, which had cached it too | ${AT_ONCE} | replicaOnly
a read at B with a removal's bookmark (getPet, 404, or a page it left) | ${AT_ONCE} | replicaOnly
listPets through /mcp (tools/call), cached page, warm isolate | as listPets: ${ONE} | oneTrip
listPets through /mcp (tools/call), a last page, warm isolate | as listPets: 0 primary, 1 replica | replicaOnly
createPet through /mcp (tools/call) with a new idempotencyKey | as createPet: exactly 1 primary | onePrimary
tools/list through /mcp, warm isolate | the key check only: no trip of any kind | nothing
a random token | no trip of any kind | nothing
an unknown key with a valid tag, first time in the location | 1 replica, then at most 1 primary (it may be new) | stranger
the same unknown key again within 10 s, after its 401 (another isolate) | 0 primary (no lookup) | noTrip`;
type Row = Awaited<ReturnType<typeof rows>>[number];

/** The request classes of TABLE; `pet()`, an available pet no other row reads. */
async function rows(keys: Keys, newKey: () => Promise<string>, pet: () => number) {
  // A last page (no next page): never cached, so always read from D1.
  const lastCursor = await encodeCursor(PETS - 50, undefined, LOCAL_CURSOR_SECRET);
  const lastPage = `/v1/pets?limit=100&cursor=${lastCursor}`;
  /** The key of the warm isolate (1), which sends the changes too. */
  const warmKey = () => keys.known(1);
  const body = (i: number, categoryId = 1) => ({ name: `edge-${i}`, categoryId });
  const post = (i: number, key: string, headers = {}, categoryId = 1, status = 201) =>
    send(1, "/v1/pets", key, { method: "POST", body: body(i, categoryId), headers, status });
  // A keyed create, its replay and its 422 share their API key too: its owner scopes the key.
  type Keyed = [key: string, headers: { "Idempotency-Key": string }];
  const keyed: Keyed[] = [];
  // Well-formed keys no database holds: their valid tag says they may be seconds old.
  const strangers = await Promise.all(
    Array.from({ length: SAMPLES }, () => issueApiKey(LOCAL_KEY_TAG_SECRET)),
  );
  const refused = { status: 401 };
  const call = async (name: string, args: Record<string, unknown>) =>
    mcp(await warmKey(), "tools/call", { name, arguments: args });
  const changed = async (change: (id: number, key: string) => Promise<EdgeResponse>) =>
    change(pet(), await warmKey());
  /** The pet's ETag, as getPet says it. */
  const tagOf = async (id: number, key: string) =>
    (await send(1, `/v1/pets/${id}`, key)).header("etag");
  const sends: Array<(i: number) => Promise<EdgeResponse>> = [
    async (i) => cachedRead(1 + (i % 3), PET, await keys.verified(), keys),
    async (i) => cachedRead(1 + (i % 3), PAGE, await keys.verified(), keys),
    async () => cachedRead(1, PET, await warmKey(), keys),
    async (i) => cachedRead(i % ISOLATES, PET, await newKey(), keys),
    async () => send(1, lastPage, await warmKey()),
    async (i) => send(i % ISOLATES, lastPage, await newKey()),
    async (i) => post(i, await warmKey()),
    async (i) => {
      const sent: Keyed = [await warmKey(), { "Idempotency-Key": crypto.randomUUID() }];
      keyed[i] = sent;
      return post(i, ...sent);
    },
    (i) => post(i, ...(keyed[i] as Keyed)),
    (i) => post(i, ...(keyed[i] as Keyed), 2, 422),
    () => changed(sale.send),
    () =>
      changed(async (id, key) =>
        patch(id, key, { status: "pending" }, { "If-Match": await tagOf(id, key) }),
      ),
    () =>
      changed(async (id, key) => {
        const tag = await tagOf(id, key);
        await patch(id, key, { name: "edge-renamed" });
        return patch(id, key, { status: "sold" }, { "If-Match": tag }, 412);
      }),
    () => changed(removal.send),
    () => changed(async (id, key) => remove(id, key, { "If-Match": await tagOf(id, key) })),
    (i) => readWithBookmark(sale, pet(), i, 1, keys),
    (i) => readWithBookmark(sale, pet(), i, B[0] as number, keys),
    (i) => readWithBookmark(removal, pet(), i, B[0] as number, keys),
    async () => {
      await warm(1, PAGE, keys);
      return call("listPets", { limit: 20 });
    },
    () => call("listPets", { limit: 100, cursor: lastCursor }),
    (i) => call("createPet", { ...body(i), idempotencyKey: crypto.randomUUID() }),
    async () => mcp(await warmKey(), "tools/list", {}),
    (i) => send(i % ISOLATES, PAGE, `random-${i}-${Math.random()}`, refused),
    (i) => send(i % ISOLATES, PAGE, strangers[i] as string, refused),
    (i) => send((i + 1) % ISOLATES, PAGE, strangers[i] as string, refused),
  ];
  const lines = TABLE.split("\n");
  return lines.map((line, i) => {
    const [label = "", must = "", holds = ""] = line.split(" | ");
    const [check, request] = [HOLDS[holds], sends[i]];
    if (!check || !request || lines.length !== sends.length) throw new Error(`row ${i}: ${line}`);
    return { label, must, holds: check, send: request };
  });
}

const { facts, scratch } = await lib.begin("edge", PORTS, false);
lib.log("building bench/edge-worker.ts (wrangler deploy --dry-run)");
const api = lib.apiWorkerOptions(
  lib.buildBundle(path.join(scratch, "build"), "bench/edge-worker.ts").file,
  { mcp: true },
);
const mf = await lib.serve(
  path.join(scratch, "state"),
  {
    handleStructuredLogs: () => {},
    workers: [
      ...PORTS.map((port, i) => ({
        ...{ ...api, name: `isolate-${i}`, ...lib.socket(port) },
        bindings: {
          ...api.bindings,
          // The address every request names (Host): /mcp serves the API's addresses alone.
          API_ORIGINS: "http://api.petstore.test",
          EDGE_DELAYS: JSON.stringify(DELAYS),
          EDGE_LOCATION: locationOf(i),
        },
      })),
      // The MCP server, which each isolate's /mcp hands its requests, with a way back into it.
      mcpWorkerOptions(buildMcpWorker(path.join(scratch, "mcp"))),
    ],
  },
  false,
);
const measured: Array<{ row: Row; responses: EdgeResponse[] }> = [];
let pairs: Array<[fresh: EdgeResponse, warm: EdgeResponse]> = [];
type Stale = Awaited<ReturnType<typeof staleAtB>>;
const stale: Array<{ change: Change; samples: Stale[] }> = [];
try {
  const db = await mf.getD1Database("DB", "isolate-0");
  await lib.addPets(db, PETS);
  const newKey = async () => (await lib.newKey(db)).key;
  const keys = keysOf(newKey);
  // The pets the changes change, one each: available, and apart from what other rows read.
  const { results: changing } = await db
    .prepare("SELECT id FROM pets WHERE status = 'available' AND id BETWEEN 100 AND 900")
    .all<{ id: number }>();
  const pet = () => {
    const next = changing.shift();
    if (!next) throw new Error("no pet left to change: lower EDGE_SAMPLES or EDGE_CHANGE_SAMPLES");
    return next.id;
  };
  lib.log(
    `${ISOLATES} isolates at A and ${B.length} at B on ports ${PORTS.join(", ")}, ${PETS} pets, delays ${JSON.stringify(DELAYS)}`,
  );
  const classes = await rows(keys, newKey, pet);
  // The locations' caches are apart: B's first read of the pet A has cached comes from D1.
  await cachedRead(0, PET, await keys.known(0), keys);
  if (!fromD1(await send(B[0] as number, PET, await newKey())))
    throw new Error("B served a response only A had cached: the locations share a cache");
  // Every isolate reads with keys of its own first, each once unseen and once known.
  for (let isolate = 0; isolate < PORTS.length; isolate++) {
    for (let i = 0; i < WARM_UP; i++) {
      const key = await newKey();
      for (const path of [PET, PAGE, PET]) await send(isolate, path, key);
    }
  }
  for (const row of classes) {
    const responses: EdgeResponse[] = [];
    for (let i = 0; i < SAMPLES; i++) responses.push(await row.send(i));
    measured.push({ row, responses });
  }
  // Issue 20's target, in ABBA pairs on one isolate: a cached getPet with a key the isolate
  // never saw (the location had verified it), and with one it knows.
  const isolate = (i: number) => 1 + (i % (ISOLATES - 1));
  pairs = await lib.abba(
    SAMPLES,
    async (i) => cachedRead(isolate(i), PET, await keys.verified(), keys),
    async (i) => cachedRead(isolate(i), PET, await keys.known(isolate(i)), keys),
  );
  for (const change of CHANGES) {
    lib.log(`${change.label}: ${CHANGE_SAMPLES} changes at A, each watched at B`);
    const samples: Stale[] = [];
    for (let i = 0; i < CHANGE_SAMPLES; i++) samples.push(await staleAtB(change, pet(), keys));
    stale.push({ change, samples });
  }
} finally {
  agent.destroy();
  await mf.dispose();
  rmSync(scratch, { recursive: true, force: true });
}

const ms = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));
const tripsOf = (responses: EdgeResponse[]) => {
  const each = responses.map(
    ({ trips: t }) =>
      `${t.primary} primary, ${t.replica} replica, ${t.cache} cache; ${t.inSequence} in a row`,
  );
  return [...new Set(each)].join(" or ");
};
// A fresh isolate's cached read waits for at most one Cache API trip more than a warm
// isolate's (its key's record and the response are looked up side by side).
const extras = pairs.map(([fresh, warm]) => fresh.ms - warm.ms);
const extra = lib.spread(extras, ms);
const pairsHold = pairs.every(([fresh]) => HOLDS.oneTrip?.(fresh.trips));
const targetMet = pairsHold && extra.median <= DELAYS.cache;
/** A change's row: its longest staleness at B, and whether it holds (B served from its cache at first). */
const staleRows = stale.map(({ change, samples }) => {
  const worst = Math.max(...samples.map((s) => s.wrongFor));
  const cached = samples.every((s) => s.firstWrong);
  return { change, samples, worst, cached, holds: cached && worst <= STALE_BOUND_MS };
});
const section = [
  "## Edge round trips (npm run bench:edge)",
  "",
  `Run ${facts.date} (${facts.line}): two locations over one local D1, A with ${ISOLATES} isolates and B with ${B.length}, each location's isolates sharing its own Cache API and none of the other's; trips delayed as for a client in Sydney (primary ${DELAYS.primary} ms, replica ${DELAYS.replica} ms, Cache API ${DELAYS.cache} ms). Rows at A unless they name B, ${SAMPLES} requests per row, one at a time. Time: what the client waited, median (range), without its own trip to the location; trips: what the response waited for (primary, replica, Cache API), work after the response excluded, and how many of them ran one after another ("in a row"; side by side counts once). A cached response is served for ${lib.f0(CACHE_MAX_AGE_MS)} ms after its D1 read only, so each sample of a cached row follows a warm-up that leaves it younger than ${lib.f0(CACHE_MAX_AGE_MS / 2)} ms: a hit.`,
  "",
  lib.table(
    "| request | must be | trips | ms | holds |",
    measured.map(({ row: { label, must, holds }, responses }) => {
      const times = responses.map((a) => a.ms);
      const time = lib.spread(times, ms).text;
      const ok = responses.every((a) => holds(a.trips)) ? "yes" : "**no**";
      return `| ${label} | ${must} | ${tripsOf(responses)} | ${time} | ${ok} |`;
    }),
  ),
  "",
  `Target (issue 20): a fresh isolate's cached read within one Cache API trip (${DELAYS.cache} ms) of a warm isolate's. ${pairs.length} pairs back to back on one isolate, a cached getPet with a key the isolate never saw (the location had verified it) and with one it knows: fresh ${ms(lib.spread(pairs.map(([f]) => f.ms)).median)} ms, warm ${ms(lib.spread(pairs.map(([, w]) => w.ms)).median)} ms, **extra ${ms(extra.median)} ms** (median; pairs ${ms(extra.min)} to ${ms(extra.max)}); every fresh read 1 trip in a row: ${pairsHold ? "yes" : "**no**"}; target ${targetMet ? "met" : "**missed**"}.`,
  "",
  "### Changed at A, wrong at B",
  "",
  `B reads three responses the change will invalidate, each from D1 and then from its cache (so B's copies are as young as they can be when the pet changes); the pet changes at A; then B's isolates in turn read the three without a bookmark until all are right. Wrong for: from the change's response to the last wrong response B served, over ${CHANGE_SAMPLES} changes of each kind. The contract allows ${lib.f0(STALE_BOUND_MS)} ms; by design a cached response is served for ${lib.f0(CACHE_MAX_AGE_MS)} ms after its D1 read plus the replica's lag, which is nil here. Holds: within the bound, and B's first reads after each change were wrong (served from its cache). With the change's bookmark, sent right after it, the same reads are right at once at A and at B (the rows with a bookmark above, one of the three per sample).`,
  "",
  lib.table(
    "| changed at A | read at B | wrong at B for at most | each change | must be | holds |",
    staleRows.map(({ change, samples, worst, holds }) => {
      const each = samples.map(
        (s) => `${lib.f0(s.wrongFor)}${s.firstWrong ? "" : " (not cached)"}`,
      );
      const must = `at most ${lib.f0(STALE_BOUND_MS)} ms (${lib.f0(CACHE_MAX_AGE_MS)} by design here)`;
      const ok = holds ? "yes" : "**no**";
      return `| ${change.label} | ${change.reads} | **${lib.f0(worst)} ms** | ${each.join(", ")} ms | ${must} | ${ok} |`;
    }),
  ),
  "",
  'A revoked key accepted by an isolate that had verified it: at most 30 s after the D1 read, all tiers together, plus the replica\'s lag (docs/keys.md, "Revocation bound"; tested with the injectable clock in test/edge-trips.test.ts, not timed here).',
];
lib.writeMeasured("docs/performance.md", section.join("\n"), "edge");
if (!targetMet) {
  console.error(
    "target missed: a fresh isolate's cached read is more than one Cache API trip slower than a warm isolate's",
  );
  process.exitCode = 1;
}
for (const { row, responses } of measured) {
  const bad = responses.find((a) => !row.holds(a.trips));
  if (!bad) continue;
  console.error(
    `does not hold: ${row.label}; one response waited for:\n  ${bad.list.join("\n  ")}`,
  );
  process.exitCode = 1;
}
for (const { change, worst, cached, holds } of staleRows) {
  if (holds) continue;
  console.error(
    `does not hold: ${change.label}: wrong at B for ${lib.f0(worst)} ms${cached ? "" : ", and B's first reads after a change were not from its cache"}`,
  );
  process.exitCode = 1;
}
