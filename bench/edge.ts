// npm run bench:edge — what a client far from the D1 primary waits for.
//  1. builds bench/edge-worker.ts (the service's app, its D1 and Cache API calls
//     instrumented and delayed) with wrangler as it builds the worker;
//  2. serves it from one Node process with miniflare: ISOLATES workers (each its own
//     isolate, on its own direct socket) sharing one D1 and one Cache API, as the isolates
//     of one Cloudflare location do;
//  3. sends each request class one request at a time and records, per answer, the trips it
//     waited for (x-edge-trips) and the time the client waited;
//  4. checks every row against what the edge contract requires (exit 1 if one fails), prints the
//     table and writes it into docs/performance.md (the edge section, which npm run
//     bench keeps).
// Delays stand for a client in Sydney: the primary 100 ms away, a replica 10 ms, the
// location's Cache API 2 ms; the client's own trip to the location is not included.
// Knobs (environment): EDGE_SAMPLES (12). Ports 8900-8903 on 127.0.0.1.
import { once } from "node:events";
import { rmSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { median } from "simple-statistics";
import { hashApiKey, issueApiKey, LOCAL_KEY_TAG_SECRET } from "../src/auth/keys.ts";
import { encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
import type { Delays, Place } from "../test/support/instrumentation.ts";
import {
  addKey,
  addPets,
  buildBundle,
  HOST,
  log,
  requireFreePorts,
  runDirectory,
  writeMeasured,
} from "./lib.ts";
import { apiWorkerOptions, localMiniflare } from "./workers.ts";

const DELAYS: Required<Delays> = { primary: 100, replica: 10, cache: 2 };
const ISOLATES = 4;
const PORTS = Array.from({ length: ISOLATES }, (_, i) => 8900 + i);
const SAMPLES = Number(process.env.EDGE_SAMPLES ?? 12);
const PETS = 1_000;
const PET = `/v1/pets/${PETS / 2}`;
const PAGE = "/v1/pets?limit=20";

type Trips = Record<Place, number>;

/** Every isolate's answers are for one public host, as in one Cloudflare location. */
const PUBLIC_HOST = "api.petstore.test";
const agent = new http.Agent({ keepAlive: true });

/**
 * One request to `isolate` as `key`, timed as the client waits for it (the whole body);
 * throws unless it answers `init.status` (200 unless given).
 */
async function send(
  isolate: number,
  pathname: string,
  key: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; status?: number } = {},
) {
  const headers: Record<string, string> = {
    Host: PUBLIC_HOST,
    Authorization: `Bearer ${key}`,
    ...init.headers,
  };
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const t0 = performance.now();
  const url = `http://${HOST}:${PORTS[isolate]}${pathname}`;
  const request = http.request(url, { method: init.method ?? "GET", headers, agent });
  request.end(body);
  const [response] = (await once(request, "response")) as [http.IncomingMessage];
  await response.toArray(); // the whole body: the client waits for it
  const ms = performance.now() - t0;
  const header = (name: string) => [response.headers[name] ?? []].flat().join(", ");
  const status = response.statusCode ?? 0;
  const expected = init.status ?? 200;
  if (status !== expected) throw new Error(`${pathname}: status ${status}, not ${expected}`);
  const trips = JSON.parse(header("x-edge-trips") || "null") as Trips | null;
  if (!trips) throw new Error(`${pathname}: no x-edge-trips header (status ${status})`);
  // The trips themselves (place: SQL or cache call), to say why a row does not hold.
  const list = JSON.parse(decodeURIComponent(header("x-edge-trip-list") || "[]")) as string[];
  return { status, ms, trips, list };
}
type Answer = Awaited<ReturnType<typeof send>>;

/** One request class: what was measured before the change, what is required, how to send it. */
interface Row {
  label: string;
  before: { trips: string; ms?: number };
  must: string;
  holds: (t: Trips) => boolean;
  /** The `i`th request of the row. */
  send: (i: number) => Promise<Answer>;
}

const noTrip = (t: Trips) => t.primary === 0 && t.replica === 0;
const replicaOnly = (t: Trips) => t.primary === 0 && t.replica === 1;
const atMostOnePrimary = (t: Trips) => t.primary <= 1 && t.replica === 0;

/** The request classes, over a location where `keys` are verified and pets kept. */
async function rows(keys: string[], newKey: () => Promise<string>): Promise<Row[]> {
  // A last page (no next page): never kept, so always read from D1.
  const lastPage = `/v1/pets?limit=100&cursor=${await encodeCursor(PETS - 50, undefined, LOCAL_CURSOR_SECRET)}`;
  const [warmKey = ""] = keys;
  const post = (i: number, headers = {}, categoryId = 1, status = 201) =>
    send(1, "/v1/pets", warmKey, {
      method: "POST",
      body: { name: `edge-${i}`, categoryId },
      headers,
      status,
    });
  const idempotencyKeys = keys.map((_, i) => ({
    "Idempotency-Key": `edge-${i}-${crypto.randomUUID()}`,
  }));
  // Well-formed keys no database holds: their valid tag says they may be seconds old.
  const strangers = await Promise.all(keys.map(() => issueApiKey(LOCAL_KEY_TAG_SECRET)));
  const refused = { status: 401 };
  return [
    {
      label: "cached getPet, isolate that never saw the key",
      before: { trips: "1 primary", ms: 117 },
      must: "0 primary",
      holds: noTrip,
      send: (i) => send(1 + (i % 3), PET, keys[i] as string),
    },
    {
      label: "cached listPets page, isolate that never saw the key",
      before: { trips: "1 primary" },
      must: "0 primary",
      holds: noTrip,
      send: (i) => send(1 + ((i + 1) % 3), PAGE, keys[i] as string),
    },
    {
      label: "cached getPet, key the location has not verified yet",
      before: { trips: "1 primary", ms: 117 },
      must: "0 primary",
      holds: replicaOnly,
      send: async (i) => send(i % ISOLATES, PET, await newKey()),
    },
    {
      label: "cached read, warm isolate",
      before: { trips: "0", ms: 7 },
      must: "0 primary, 0 replica",
      holds: noTrip,
      send: () => send(1, PET, warmKey),
    },
    {
      label: "listPets cache miss (a last page), warm isolate",
      before: { trips: "1 replica" },
      must: "0 primary",
      holds: replicaOnly,
      send: () => send(1, lastPage, warmKey),
    },
    {
      label: "createPet",
      before: { trips: "1 primary", ms: 109 },
      must: "exactly 1 primary",
      holds: (t) => t.primary === 1 && t.replica === 0,
      send: (i) => post(i),
    },
    {
      label: "createPet with a new Idempotency-Key",
      before: { trips: "2 primary", ms: 214 },
      must: "exactly 1 primary",
      holds: (t) => t.primary === 1 && t.replica === 0,
      send: (i) => post(i, idempotencyKeys[i]),
    },
    {
      label: "its replay",
      before: { trips: "2 primary" },
      must: "at most 1 primary",
      holds: atMostOnePrimary,
      send: (i) => post(i, idempotencyKeys[i]),
    },
    {
      label: "the same key with another body (422)",
      before: { trips: "2 primary" },
      must: "at most 1 primary",
      holds: atMostOnePrimary,
      send: (i) => post(i, idempotencyKeys[i], 2, 422),
    },
    {
      label: "a random token",
      before: { trips: "1 primary", ms: 107 },
      must: "no trip of any kind",
      holds: (t) => t.primary + t.replica + t.cache === 0,
      send: (i) => send(i % ISOLATES, PAGE, `random-${i}-${Math.random()}`, refused),
    },
    {
      label: "an unknown key with a valid tag, first time in the location",
      before: { trips: "1 primary", ms: 107 },
      must: "1 replica, then at most 1 primary (it may be new)",
      holds: (t) => t.primary <= 1 && t.replica === 1,
      send: (i) => send(i % ISOLATES, PAGE, strangers[i] as string, refused),
    },
    {
      label: "the same unknown key again within 10 s, after its 401 (another isolate)",
      before: { trips: "1 primary", ms: 107 },
      must: "0 primary (no lookup)",
      holds: noTrip,
      send: (i) => send((i + 1) % ISOLATES, PAGE, strangers[i] as string, refused),
    },
  ];
}

await requireFreePorts(PORTS);
const scratch = runDirectory("edge");
log("building bench/edge-worker.ts (wrangler deploy --dry-run)");
const api = apiWorkerOptions(buildBundle(path.join(scratch, "build"), "bench/edge-worker.ts").file);
const mf = localMiniflare(path.join(scratch, "state"), {
  logRequests: false,
  handleStructuredLogs: () => {},
  workers: PORTS.map((port, i) => ({
    ...api,
    name: `isolate-${i}`,
    bindings: { ...api.bindings, EDGE_DELAYS: JSON.stringify(DELAYS) },
    unsafeDirectSockets: [{ host: HOST, port }],
  })),
});
const measured: Array<Row & { answers: Answer[] }> = [];
try {
  await mf.ready;
  const db = await mf.getD1Database("DB", "isolate-0");
  await addPets(db, PETS);
  const newKey = async () => {
    const key = await issueApiKey(LOCAL_KEY_TAG_SECRET);
    await addKey(db, await hashApiKey(key));
    return key;
  };
  const keys = await Promise.all(Array.from({ length: SAMPLES }, newKey));
  log(
    `${ISOLATES} isolates on ports ${PORTS.join(", ")}, ${PETS} pets, delays ${JSON.stringify(DELAYS)}`,
  );
  const classes = await rows(keys, newKey);
  // The location answers the pet and the page once (edge cache) and verifies each key
  // once, on isolate 0; isolates 1..3 then see each key for the first time.
  for (const key of keys) {
    for (const warm of [PET, PAGE]) {
      await send(0, warm, key);
    }
  }
  for (const row of classes) {
    const answers: Answer[] = [];
    for (let i = 0; i < SAMPLES; i++) answers.push(await row.send(i));
    measured.push({ ...row, answers });
  }
} finally {
  agent.destroy();
  await mf.dispose();
  rmSync(scratch, { recursive: true, force: true });
}

const ms = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));
const tripsOf = (answers: Answer[]) =>
  [
    ...new Set(
      answers.map(
        (a) => `${a.trips.primary} primary, ${a.trips.replica} replica, ${a.trips.cache} cache`,
      ),
    ),
  ].join(" or ");

const when = new Date().toISOString().replace(/\.\d+Z$/, "Z");
const table = [
  `Run ${when}: ${ISOLATES} isolates sharing one local D1 and one Cache API, trips delayed as for a client in Sydney (primary ${DELAYS.primary} ms, replica ${DELAYS.replica} ms, Cache API ${DELAYS.cache} ms), ${SAMPLES} requests per row, one at a time. "Before": the figures measured before tiered key verification and one-batch creates (the same delays, the previous design). Time: what the client waited, median (range), without its own trip to the location; trips: what the answer waited for (primary, replica, Cache API), work after the answer excluded.`,
  "",
  "| request | before: trips | before: ms | must be | after: trips | after: ms | holds |",
  "|---|---|---|---|---|---|---|",
  ...measured.map((r) => {
    const times = r.answers.map((a) => a.ms);
    const holds = r.answers.every((a) => r.holds(a.trips));
    return `| ${r.label} | ${r.before.trips} | ${r.before.ms ?? "-"} | ${r.must} | ${tripsOf(r.answers)} | ${ms(median(times))} (${ms(Math.min(...times))}-${ms(Math.max(...times))}) | ${holds ? "yes" : "**no**"} |`;
  }),
  "",
  'A revoked key accepted by an isolate that had verified it: at most 30 s after the D1 read, all tiers together, plus the replica\'s lag (docs/keys.md, "Revocation bound"; tested with the injectable clock in test/edge-trips.test.ts, not timed here).',
].join("\n");
writeMeasured(
  "docs/performance.md",
  `## Edge round trips (npm run bench:edge)\n\n${table}`,
  "edge",
);
for (const r of measured) {
  const bad = r.answers.find((a) => !r.holds(a.trips));
  if (!bad) continue;
  console.error(`does not hold: ${r.label}; one answer waited for:\n  ${bad.list.join("\n  ")}`);
  process.exitCode = 1;
}
