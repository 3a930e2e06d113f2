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
import { readFileSync, rmSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { median } from "simple-statistics";
import { wrangler } from "../scripts/wrangler.ts";
import { hashApiKey, issueApiKey, LOCAL_KEY_TAG_SECRET, untaggedApiKey } from "../src/auth/keys.ts";
import { encodeCursor } from "../src/pets/cursor.ts";
import type { Delays, Place } from "../test/support/instrumentation.ts";
import { addKey, migrate, seedPets } from "./database.ts";
import { HOST, requireFreePorts, runDirectory } from "./harness.ts";
import { ROOT, writeMeasured } from "./lib.ts";
import { apiWorkerOptions, CF } from "./workers.ts";

const DELAYS: Required<Delays> = { primary: 100, replica: 10, cache: 2 };
const ISOLATES = 4;
const PORTS = Array.from({ length: ISOLATES }, (_, i) => 8900 + i);
const SAMPLES = Number(process.env.EDGE_SAMPLES ?? 12);
const PETS = 1_000;
const DOC = path.join(ROOT, "docs", "performance.md");

type Trips = Record<Place, number>;

interface Answer {
  status: number;
  ms: number;
  trips: Trips;
  /** The trips themselves (place: SQL or cache call). */
  list: string[];
}

/** One request class: what was measured before the change, what is required, what was measured. */
interface Row {
  label: string;
  before: { trips: string; ms?: number };
  must: string;
  holds: (t: Trips) => boolean;
  answers: Answer[];
}

const started = performance.now();
function log(message: string) {
  console.log(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

/** Every isolate's answers are for one public host, as in one Cloudflare location. */
const PUBLIC_HOST = "api.petstore.test";
const agent = new http.Agent({ keepAlive: true });

async function send(
  isolate: number,
  pathname: string,
  key: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {
    Host: PUBLIC_HOST,
    Authorization: `Bearer ${key}`,
    ...init.headers,
  };
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const t0 = performance.now();
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = http.request(
      {
        host: HOST,
        port: PORTS[isolate],
        path: pathname,
        method: init.method ?? "GET",
        headers,
        agent,
      },
      resolve,
    );
    request.on("error", reject);
    request.end(body);
  });
  for await (const _chunk of response) {
    // read the whole body: the client waits for it
  }
  const ms = performance.now() - t0;
  const header = (name: string) => {
    const value = response.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  };
  const status = response.statusCode ?? 0;
  const trips = JSON.parse(header("x-edge-trips") ?? "null") as Trips | null;
  if (!trips) throw new Error(`${pathname}: no x-edge-trips header (status ${status})`);
  const list = JSON.parse(decodeURIComponent(header("x-edge-trip-list") ?? "[]")) as string[];
  return { status, ms, trips, list };
}

function expectStatus(answer: Answer, status: number, what: string): Answer {
  if (answer.status !== status) throw new Error(`${what}: status ${answer.status}, not ${status}`);
  return answer;
}

const primaryOnly = (n: number) => (t: Trips) => t.primary === n && t.replica === 0;
const noPrimary = (t: Trips) => t.primary === 0;

async function main() {
  await requireFreePorts(PORTS);
  const scratch = runDirectory("edge");
  log("building bench/edge-worker.ts (wrangler deploy --dry-run)");
  const outdir = path.join(scratch, "build");
  wrangler(["deploy", "--dry-run", "--env=", "--outdir", outdir, "bench/edge-worker.ts"], {
    capture: true,
    ci: true,
  });
  const bundle = path.join(outdir, "edge-worker.js");
  readFileSync(bundle); // fails clearly if wrangler named it otherwise

  const api = apiWorkerOptions(bundle);
  const state = path.join(scratch, "state");
  migrate(state);
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: HOST,
      port: 0,
      cf: CF,
      resourcePersistencePath: path.join(state, "v3"),
      logRequests: false,
      handleStructuredLogs: () => {},
      workers: PORTS.map((port, i) => ({
        ...api,
        name: `isolate-${i}`,
        cronTriggers: [],
        bindings: { ...api.bindings, EDGE_DELAYS: JSON.stringify(DELAYS) },
        unsafeDirectSockets: [{ host: HOST, port }],
      })),
    }),
  );
  const rows: Row[] = [];
  try {
    await mf.ready;
    const db = await mf.getD1Database("DB", "isolate-0");
    await seedPets(db, PETS);
    const newKey = async () => {
      const key = await issueApiKey(LOCAL_KEY_TAG_SECRET);
      await addKey(db, await hashApiKey(key));
      return key;
    };
    const keys = await Promise.all(Array.from({ length: SAMPLES }, newKey));
    log(
      `${ISOLATES} isolates on ports ${PORTS.join(", ")}, ${PETS} pets, delays ${JSON.stringify(DELAYS)}`,
    );

    const pet = `/v1/pets/${Math.floor(PETS / 2)}`;
    const page = "/v1/pets?limit=20";
    // A last page (no next page): never kept, so always read from D1.
    const lastPage = `/v1/pets?limit=100&cursor=${await encodeCursor(PETS - 50, undefined)}`;
    const row = (r: Omit<Row, "answers">) => {
      const made: Row = { ...r, answers: [] };
      rows.push(made);
      return made.answers;
    };

    // The location answers the pet and the page once (edge cache) and verifies each key
    // once, on isolate 0; isolates 1..3 then see each key for the first time.
    for (const key of keys) {
      expectStatus(await send(0, pet, key), 200, "warm-up");
      expectStatus(await send(0, page, key), 200, "warm-up");
    }
    const fresh = row({
      label: "cached getPet, isolate that never saw the key",
      before: { trips: "1 primary", ms: 117 },
      must: "0 primary",
      holds: (t) => t.primary === 0 && t.replica === 0,
    });
    const freshPage = row({
      label: "cached listPets page, isolate that never saw the key",
      before: { trips: "1 primary" },
      must: "0 primary",
      holds: (t) => t.primary === 0 && t.replica === 0,
    });
    for (const [i, key] of keys.entries()) {
      fresh.push(expectStatus(await send(1 + (i % 3), pet, key), 200, "fresh isolate"));
      freshPage.push(expectStatus(await send(1 + ((i + 1) % 3), page, key), 200, "fresh isolate"));
    }

    const newToLocation = row({
      label: "cached getPet, key the location has not verified yet",
      before: { trips: "1 primary", ms: 117 },
      must: "0 primary",
      holds: (t) => t.primary === 0 && t.replica === 1,
    });
    for (let i = 0; i < SAMPLES; i++) {
      newToLocation.push(
        expectStatus(await send(i % ISOLATES, pet, await newKey()), 200, "new key"),
      );
    }

    const [warmKey = ""] = keys;
    const warm = row({
      label: "cached read, warm isolate",
      before: { trips: "0", ms: 7 },
      must: "0 primary, 0 replica",
      holds: (t) => t.primary === 0 && t.replica === 0,
    });
    for (let i = 0; i < SAMPLES; i++)
      warm.push(expectStatus(await send(1, pet, warmKey), 200, "warm"));

    const miss = row({
      label: "listPets cache miss (a last page), warm isolate",
      before: { trips: "1 replica" },
      must: "0 primary",
      holds: (t) => t.primary === 0 && t.replica === 1,
    });
    for (let i = 0; i < SAMPLES; i++) {
      miss.push(expectStatus(await send(1, lastPage, warmKey), 200, "miss"));
    }

    const create = row({
      label: "createPet",
      before: { trips: "1 primary", ms: 109 },
      must: "exactly 1 primary",
      holds: primaryOnly(1),
    });
    const keyed = row({
      label: "createPet with a new Idempotency-Key",
      before: { trips: "2 primary", ms: 214 },
      must: "exactly 1 primary",
      holds: primaryOnly(1),
    });
    const replay = row({
      label: "its replay",
      before: { trips: "2 primary" },
      must: "at most 1 primary",
      holds: (t) => t.primary <= 1 && t.replica === 0,
    });
    const reused = row({
      label: "the same key with another body (422)",
      before: { trips: "2 primary" },
      must: "at most 1 primary",
      holds: (t) => t.primary <= 1 && t.replica === 0,
    });
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      send(1, "/v1/pets", warmKey, { method: "POST", body, headers });
    for (let i = 0; i < SAMPLES; i++) {
      const body = { name: `edge-${i}`, categoryId: 1 };
      create.push(expectStatus(await post(body), 201, "createPet"));
      const idempotencyKey = { "Idempotency-Key": `edge-${i}-${crypto.randomUUID()}` };
      keyed.push(expectStatus(await post(body, idempotencyKey), 201, "keyed create"));
      replay.push(expectStatus(await post(body, idempotencyKey), 201, "replay"));
      reused.push(expectStatus(await post({ ...body, categoryId: 2 }, idempotencyKey), 422, "422"));
    }

    const random = row({
      label: "a random token",
      before: { trips: "1 primary", ms: 107 },
      must: "no trip of any kind",
      holds: (t) => t.primary + t.replica + t.cache === 0,
    });
    const unknown = row({
      label: "an unknown well-formed key, first time in the location",
      before: { trips: "1 primary", ms: 107 },
      must: "0 primary",
      holds: noPrimary,
    });
    const again = row({
      label: "the same unknown key again within 10 s, after its 401 (another isolate)",
      before: { trips: "1 primary", ms: 107 },
      must: "0 primary (no lookup)",
      holds: (t) => t.primary === 0 && t.replica === 0,
    });
    for (let i = 0; i < SAMPLES; i++) {
      random.push(
        expectStatus(await send(i % ISOLATES, page, `random-${i}-${Math.random()}`), 401, "random"),
      );
      const stranger = untaggedApiKey();
      unknown.push(expectStatus(await send(i % ISOLATES, page, stranger), 401, "unknown"));
      again.push(
        expectStatus(await send((i + 1) % ISOLATES, page, stranger), 401, "unknown again"),
      );
    }
  } finally {
    agent.destroy();
    await mf.dispose();
    rmSync(scratch, { recursive: true, force: true });
  }

  const table = render(rows);
  console.log(`\n${table}\n`);
  writeDoc(table);
  const failed = rows.filter((r) => !r.answers.every((a) => r.holds(a.trips)));
  log(`wrote ${path.relative(ROOT, DOC)} (edge section)`);
  if (failed.length > 0) {
    for (const r of failed) {
      const bad = r.answers.find((a) => !r.holds(a.trips));
      console.error(
        `does not hold: ${r.label}; one answer waited for:\n  ${bad?.list.join("\n  ")}`,
      );
    }
    process.exit(1);
  }
}

const ms = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));

function tripsOf(answers: Answer[]): string {
  const seen = new Set(
    answers.map((a) =>
      (["primary", "replica", "cache"] as const)
        .map((p) => `${a.trips[p]} ${p === "cache" ? "cache" : p}`)
        .join(", "),
    ),
  );
  return [...seen].join(" or ");
}

function render(rows: Row[]): string {
  const when = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  return [
    `Run ${when}: ${ISOLATES} isolates sharing one local D1 and one Cache API, trips delayed as for a client in Sydney (primary ${DELAYS.primary} ms, replica ${DELAYS.replica} ms, Cache API ${DELAYS.cache} ms), ${SAMPLES} requests per row, one at a time. "Before": the figures measured before tiered key verification and one-batch creates (the same delays, the previous design). Time: what the client waited, median (range), without its own trip to the location; trips: what the answer waited for (primary, replica, Cache API), work after the answer excluded.`,
    "",
    "| request | before: trips | before: ms | must be | after: trips | after: ms | holds |",
    "|---|---|---|---|---|---|---|",
    ...rows.map((r) => {
      const times = r.answers.map((a) => a.ms);
      const holds = r.answers.every((a) => r.holds(a.trips));
      return `| ${r.label} | ${r.before.trips} | ${r.before.ms ?? "-"} | ${r.must} | ${tripsOf(r.answers)} | ${ms(median(times))} (${ms(Math.min(...times))}-${ms(Math.max(...times))}) | ${holds ? "yes" : "**no**"} |`;
    }),
    "",
    'A revoked key accepted by an isolate that had verified it: at most 30 s after the D1 read, all tiers together, plus the replica\'s lag (docs/keys.md, "Revocation bound"; tested with the injectable clock in test/edge-trips.test.ts, not timed here).',
  ].join("\n");
}

function writeDoc(table: string): void {
  writeMeasured(DOC, `## Edge round trips (npm run bench:edge)\n\n${table}`, "edge");
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
