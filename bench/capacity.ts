// npm run bench:capacity — the capacity figures of issue 10, written into the measured
// section of docs/scaling.md (the rest of that file, the plan, is kept).
//  1. builds the worker as it deploys (wrangler deploy --dry-run) and takes wrangler.toml's
//     D1 binding from it;
//  2. storage: a fresh local D1 (miniflare, in this process) with the migrations; bytes
//     per pet and per idempotency record from D1's own `meta.size_after` (SQLite page
//     count x page size) before and after N inserts of each, then SQLite's dbstat table
//     (node:sqlite on the database file) for what each table and index holds;
//  3. rows read: the real app (createApp from src/app.ts, run here in Node) over that D1,
//     every statement recorded with D1's `meta.rows_read` and `meta.rows_written`, one
//     request per operation (auth on a cold cache, hits, misses, creates, the replay);
//  4. load: bench/server.ts (the built bundle in workerd, direct sockets) pinned to CPU 1,
//     autocannon pinned to CPU 0, on 127.0.0.1: creates without and with a unique
//     Idempotency-Key each, and listPets read from D1, at 1, 2, 4, ... connections;
//  5. prints the tables and rewrites the measured section of docs/scaling.md.
// Knobs (environment): CAPACITY_STEP_SECONDS (4), CAPACITY_ROWS (100000).
import assert from "node:assert/strict";
import { randomUUID, timingSafeEqual } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { median, quantileSorted } from "simple-statistics";
import { hashApiKey, issueApiKey, LOCAL_KEY_TAG_SECRET } from "../src/auth/keys.ts";
import { encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
import type { Pet } from "../src/pets/schemas.ts";
import {
  type CacheLike,
  type Executed,
  NO_EDGE_CACHE,
  Recorder,
} from "../test/support/instrumentation.ts";
import {
  addKey,
  addPets,
  begin,
  type Check,
  canPin,
  type Endpoint,
  f0,
  LOADGEN_CPU,
  log,
  ms,
  PORTS,
  SERVER_CPU,
  sample,
  seconds,
  slice,
  withServer,
  writeMeasured,
} from "./lib.ts";
import { apiWorkerOptions, localMiniflare } from "./workers.ts";

const STEP_S = Number(process.env.CAPACITY_STEP_SECONDS ?? 4);
const ROWS = Number(process.env.CAPACITY_ROWS ?? 100_000);
const RAMP = [1, 2, 4, 8, 16, 32];
/** D1's maximum database size (developers.cloudflare.com/d1/platform/limits/), in bytes. */
const D1_MAX_BYTES = 10e9;
/** D1's storage per account on Workers Paid before a limit increase (same page), in bytes. */
const ACCOUNT_BYTES = 250e9;
const f1 = (n: number) => n.toFixed(1);

// -------------------------------------------------------------------- storage
/** D1's own size of the database (page count x page size), from a query's meta. */
async function d1Size(db: D1Database): Promise<number> {
  return (await db.prepare("SELECT count(*) AS n FROM pets").all()).meta.size_after;
}

/** Average bytes of key hash / fingerprint / digits of the pet id, over the records. */
async function recordShape(db: D1Database): Promise<string> {
  const shape = await db
    .prepare(
      `SELECT round(avg(length(key_hash)), 1) || ' / ' || round(avg(length(fingerprint)), 1)
       || ' / ' || round(avg(length(CAST(pet_id AS TEXT))), 1) AS shape FROM idempotency_records`,
    )
    .first<{ shape: string }>();
  return shape?.shape ?? "?";
}

async function idempotencyRecords(db: D1Database, keyId: number, n: number): Promise<void> {
  // The shape the API writes (src/db/idempotency.ts): the SHA-256 of the client's key and
  // of the body (32 bytes each, as random as a digest); pet ids like the table's;
  // creation times rising over the 24 hours a record lives, in insertion order.
  const { maxId } = (await db
    .prepare("SELECT max(id) AS maxId FROM pets")
    .first<{ maxId: number }>()) ?? { maxId: 0 };
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO idempotency_records (scope, key_hash, fingerprint, pet_id, created_at)
       SELECT 'key:' || ?1, randomblob(32), randomblob(32), m.id - i, m.now - 86400 + i * 86400 / m.n
       FROM n, (SELECT CAST(?4 AS INTEGER) AS id, CAST(?3 AS INTEGER) AS now, CAST(?2 AS INTEGER) AS n) AS m`,
    )
    .bind(keyId, n, Math.floor(Date.now() / 1000), maxId)
    .run();
}

/** SQLite's page size and what each table and index holds, from the database file. */
function dbstat(stateDir: string) {
  const dir = path.join(stateDir, "v3", "d1", "miniflare-D1DatabaseObject");
  const file = readdirSync(dir).find((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  if (!file) throw new Error(`no D1 database file in ${dir}`);
  const sqlite = new DatabaseSync(path.join(dir, file), { readOnly: true });
  try {
    const pageSize = (sqlite.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
    const objects = sqlite
      .prepare(
        `SELECT name, sum(pgsize) AS bytes, 100.0 * sum(unused) / sum(pgsize) AS unusedPct
         FROM dbstat WHERE name IN ('pets', 'pets_status_id', 'idempotency_records', 'idempotency_records_created_at')
         GROUP BY name ORDER BY name`,
      )
      .all() as Array<{ name: string; bytes: number; unusedPct: number }>;
    return { pageSize, objects };
  } finally {
    sqlite.close();
  }
}

/**
 * Storage and rows read, on a fresh D1 in this process (the migrations applied): bytes per
 * row from D1's size before and after ROWS inserts of each kind, with the rows-read table
 * measured in between (over ROWS pets with short names).
 */
async function storageAndRowsRead(stateDir: string, bundle: string) {
  const api = apiWorkerOptions(bundle);
  const mf = localMiniflare(stateDir, { workers: [{ ...api, name: "probe" }] });
  try {
    const db = await mf.getD1Database("DB", "probe");
    const key = await issueApiKey(LOCAL_KEY_TAG_SECRET);
    const keyId = await addKey(db, await hashApiKey(key));
    const empty = await d1Size(db);
    log(`storage: ${f0(ROWS)} pets with short names`);
    await addPets(db, ROWS);
    const withPets = await d1Size(db);

    log("rows read per operation (the app over the same D1)");
    const operations = await rowsRead(db, key);
    const real = await recordShape(db);

    log(`storage: ${f0(ROWS)} pets with 100-character names, ${f0(ROWS)} idempotency records`);
    const beforeLong = await d1Size(db);
    await addPets(db, ROWS, "substr('pet-' || i || '-' || hex(zeroblob(60)), 1, 100)");
    const withLong = await d1Size(db);
    await db.prepare("DELETE FROM idempotency_records").run();
    const beforeRecords = await d1Size(db);
    await idempotencyRecords(db, keyId, ROWS);
    const withRecords = await d1Size(db);
    const storage = {
      emptyBytes: empty,
      shortPetBytes: (withPets - empty) / ROWS,
      longPetBytes: (withLong - beforeLong) / ROWS,
      recordBytes: (withRecords - beforeRecords) / ROWS,
      /** The probe's real record next to the generated ones: average column lengths. */
      recordShape: { real, generated: await recordShape(db) },
    };
    return { storage, operations };
  } finally {
    await mf.dispose();
  }
}

// ------------------------------------------------------------------ rows read
interface App {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
}
type Log = (line: Record<string, unknown>) => void;
interface AppOptions {
  log: Log;
  edgeCache: () => CacheLike;
}
type CreateApp = (options: AppOptions & { keyUse?: unknown }) => App;
type CreateKeyUseRecorder = (
  clock: () => number,
  log: Log,
  options: { sleep: (ms: number) => Promise<void> },
) => unknown;

/**
 * The app factory of src/app.ts, loaded at run time: it is worker code, type-checked by
 * tsconfig.json with the Workers types, not by this Node configuration.
 */
async function loadCreateApp(): Promise<(options: AppOptions) => App> {
  // The one Workers API the app uses that Node lacks (src/auth/verifier.ts): a
  // constant-time comparison, Node's own underneath.
  const subtle = crypto.subtle as SubtleCrypto & { timingSafeEqual?: unknown };
  subtle.timingSafeEqual ??= timingSafeEqual;
  const appModule = "../src/app.ts";
  const keyUseModule = "../src/auth/key-use.ts";
  const { createApp } = (await import(appModule)) as { createApp: CreateApp };
  const { createKeyUseRecorder } = (await import(keyUseModule)) as {
    createKeyUseRecorder: CreateKeyUseRecorder;
  };
  // Usage timers that wake at once: a key's first answer is written, the next ones of
  // its 10 s are not (the run takes less), so no request waits 10 s for its work.
  return (options) =>
    createApp({
      ...options,
      keyUse: createKeyUseRecorder(Date.now, options.log, { sleep: async () => {} }),
    });
}

/** The Cache API as one data center's: answers kept in memory, copies handed out. */
function memoryCache(): CacheLike {
  const kept = new Map<string, Response>();
  return {
    match: async (key) => kept.get(String(key))?.clone(),
    put: async (key, response) => {
      kept.set(String(key), response.clone());
    },
  };
}

/** Statements, rows read and rows written of one request per operation, by name. */
async function rowsRead(db: D1Database, key: string) {
  const createApp = await loadCreateApp();
  const recorder = new Recorder();
  const env = {
    DB: recorder.d1(db),
    RATE_LIMITER: { limit: async () => ({ success: true }) },
    ACCOUNT_RATE_LIMITER: { limit: async () => ({ success: true }) },
    INVALID_KEY_LIMITER: { limit: async () => ({ success: true }) },
    ENVIRONMENT: "local",
    CORS_ALLOWED_ORIGINS: "*",
  } as unknown as Env;
  const quiet = (line: Record<string, unknown>) => {
    if (line.level === "error") console.error(JSON.stringify(line));
  };
  // A fresh app is a fresh isolate: its auth cache is cold.
  const edge = memoryCache();
  const cached = createApp({ log: quiet, edgeCache: () => edge });
  const fromD1 = createApp({ log: quiet, edgeCache: () => NO_EDGE_CACHE });

  async function request(app: App, pathname: string, expected: number, init: RequestInit = {}) {
    recorder.reset();
    const pending: Array<Promise<unknown>> = [];
    const ctx = {
      waitUntil: (work: Promise<unknown>) => pending.push(work),
      passThroughOnException: () => {},
      props: {},
    } as unknown as ExecutionContext;
    const headers = { Authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) };
    const request = new Request(`https://petstore.bench${pathname}`, { ...init, headers });
    const response = await app.fetch(request, env, ctx);
    const body = await response.text();
    await Promise.all(pending); // the cache put and the usage write count too
    if (response.status !== expected) {
      throw new Error(`${pathname}: ${response.status}, expected ${expected}: ${body}`);
    }
    return { response, statements: recorder.statements() };
  }

  const op = (name: string, statements: Executed[], detail = "") => ({
    name,
    statements: statements.length,
    rowsRead: statements.reduce((n, s) => n + s.rowsRead, 0),
    rowsWritten: statements.reduce((n, s) => n + s.rowsWritten, 0),
    detail,
  });
  const ops: Array<ReturnType<typeof op>> = [];
  const add = (...args: Parameters<typeof op>) => ops.push(op(...args));
  const on = (table: string) => (s: Executed) => new RegExp(`\\b${table}\\b`).test(s.sql);
  const hit = (name: string, r: { response: Response; statements: Executed[] }) => {
    if (r.statements.length > 0 || r.response.headers.get("x-d1-bookmark") !== null) {
      throw new Error(`${name}: not a cache hit (${r.statements.length} statements)`);
    }
    add(name, r.statements, "served by the edge cache");
  };
  /** The request's own statements: not its key's usage, which any answer's work after it may write. */
  const statementsOf = async (pathname: string, status = 200, init: RequestInit = {}) =>
    (await request(fromD1, pathname, status, init)).statements.filter(
      (s) => !/\b(api_key_usage|last_used_at)\b/.test(s.sql),
    );

  // First request of the key in this "isolate": the key is looked up, its usage written.
  const first = await request(cached, "/v1/pets", 200);
  const authStatements = first.statements.filter(on("api_keys"));
  add(
    "auth, cold cache: key lookup (then kept 30 s per location)",
    authStatements.filter((s) => /^\s*SELECT/i.test(s.sql)),
  );
  add(
    "usage: last use and counts (after the answer; at most once per key per 10 s per isolate)",
    first.statements.filter((s) => /^\s*UPDATE/i.test(s.sql) || on("api_key_usage")(s)),
  );
  add("listPets page 1 (limit 20), from D1", first.statements.filter(on("pets")), "limit + 1");
  const again = await request(cached, "/v1/pets", 200);
  hit("listPets page 1, edge-cache hit", again);
  const tag = again.response.headers.get("ETag") ?? "";
  hit(
    "304 revalidation of page 1 (a hit)",
    await request(cached, "/v1/pets", 304, { headers: { "If-None-Match": tag } }),
  );

  await statementsOf("/v1/pets?limit=1"); // warms this app's auth cache
  const deepAfter = Math.floor(ROWS * 0.9);
  const pet = `/v1/pets/${Math.floor(ROWS / 2)}`;
  const deep = await encodeCursor(deepAfter, undefined, LOCAL_CURSOR_SECRET);
  const deepAvailable = await encodeCursor(deepAfter, "available", LOCAL_CURSOR_SECRET);
  const last = await encodeCursor(ROWS - 5, undefined, LOCAL_CURSOR_SECRET);
  add("listPets page 1, limit 100, from D1", await statementsOf("/v1/pets?limit=100"), "limit + 1");
  add(
    `listPets deep page (after id ${f0(deepAfter)}), from D1`,
    await statementsOf(`/v1/pets?cursor=${deep}`),
    "limit + 1",
  );
  add(
    "listPets deep page, status=available, from D1",
    await statementsOf(`/v1/pets?status=available&cursor=${deepAvailable}`),
    "limit + 1",
  );
  add(
    "listPets last page (5 pets; never kept, so a 304 for it reads this too)",
    await statementsOf(`/v1/pets?cursor=${last}`),
  );
  add("getPet, from D1", await statementsOf(pet));
  await request(cached, pet, 200);
  hit("getPet, edge-cache hit", await request(cached, pet, 200));
  add(
    "getPet of an id that does not exist (404, never kept)",
    (await request(cached, "/v1/pets/900000000", 404)).statements,
  );

  const body = JSON.stringify({ name: "Capacity", categoryId: 3, status: "pending" });
  const post = (headers: Record<string, string> = {}) => ({
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
  add("createPet", await statementsOf("/v1/pets", 201, post()));
  const keyed = post({ "Idempotency-Key": randomUUID() });
  add(
    "createPet with a new Idempotency-Key",
    await statementsOf("/v1/pets", 201, keyed),
    "one batch (one round trip): clear an expired record, insert, record, read back",
  );
  const replay = await request(fromD1, "/v1/pets", 201, keyed);
  if (replay.response.headers.get("Idempotent-Replayed") !== "true") {
    throw new Error("the second create with the same key was not a replay");
  }
  add(
    "createPet replay (same key, same body)",
    replay.statements,
    "the same batch: inserts nothing, reads the record and its pet back",
  );
  return ops;
}

// ----------------------------------------------------------------------- load
/**
 * Where a ramp saturates, as the report defines it: the knee, and the median rate from the
 * knee on (one noisy step does not move it, as it would a maximum).
 */
function saturation(steps: Step[]) {
  const i = steps.findIndex(
    (s, j) => j === steps.length - 1 || (steps[j + 1] as Step).rps < 1.1 * s.rps,
  );
  return {
    knee: steps[i] as Step,
    rate: median(steps.slice(i).map((s) => s.rps)),
    best: Math.max(...steps.map((s) => s.rps)),
  };
}

/** Creates (plain and keyed) and listPets from D1 at each step of RAMP connections. */
async function load(bundle: string, scratch: string) {
  const server = { bundle, state: path.join(scratch, "state-load"), pets: ROWS };
  return withServer(server, async (key, ready) => {
    log(`server ready: ${f0(ready.pets)} pets`);
    const auth = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
    const created: Check = (body) => assert.ok((JSON.parse(body) as Pet).id, "not created");
    const fresh: Check = (_, h) =>
      assert.equal(h.get("Idempotent-Replayed"), null, "a replay: a key was used twice");
    const create = {
      port: PORTS.api,
      path: "/v1/pets",
      method: "POST" as const,
      body: JSON.stringify({ name: "Capacity", categoryId: 3, status: "pending" }),
      status: 201,
      checks: [created],
      each: fresh,
    };
    const endpoints: Endpoint[] = [
      { ...create, id: "create", label: "createPet", headers: auth },
      {
        ...create,
        id: "create-keyed",
        label: "createPet with a unique Idempotency-Key",
        headers: { ...auth, "Idempotency-Key": "capacity-[<id>]" },
        uniqueIds: true,
      },
      {
        id: "list",
        label: "listPets page 1, from D1 (edge cache off)",
        port: PORTS.apiD1,
        path: "/v1/pets",
        headers: auth,
        checks: [(body) => assert.equal((JSON.parse(body) as Pet[]).length, 20, "not a page")],
        each: (_, h) => assert.ok(h.get("x-d1-bookmark"), "not read from D1"),
      },
    ];
    const ramps: Ramp[] = endpoints.map((e) => ({ id: e.id, label: e.label, steps: [] }));
    for (const e of endpoints) {
      await sample({ ...e, headers: { ...e.headers, "Idempotency-Key": randomUUID() } });
      await slice(e, 2, 8); // warm-up
    }
    for (const connections of RAMP) {
      // Alternate the order at each step, so drift does not favour one of them.
      const order = connections % 2 === 0 ? endpoints : [...endpoints].reverse();
      for (const e of order) {
        const s = await slice(e, STEP_S, connections);
        const sorted = s.latenciesMs.toSorted((a, b) => a - b);
        const step = {
          connections,
          rps: s.rps,
          p50: quantileSorted(sorted, 0.5),
          p99: quantileSorted(sorted, 0.99),
        };
        ramps.find((r) => r.id === e.id)?.steps.push(step);
        log(
          `${e.label}, ${connections} connections: ${f0(step.rps)} req/s, p50 ${ms(step.p50)} ms, p99 ${ms(step.p99)} ms`,
        );
      }
    }
    return ramps;
  });
}
type Step = { connections: number; rps: number; p50: number; p99: number };
type Ramp = { id: string; label: string; steps: Step[] };

// ---------------------------------------------------------------------- report
async function measure() {
  const { facts, scratch, bundle } = await begin("capacity");
  const stateDir = path.join(scratch, "state-storage");
  const { storage: measured, operations } = await storageAndRowsRead(stateDir, bundle.file);
  log("load: creates and reads at 1..32 connections");
  const ramps = await load(bundle.file, scratch);
  const storage = { ...measured, ...dbstat(stateDir) };
  rmSync(scratch, { recursive: true, force: true });
  return { machine: facts, storage, operations, ramps, seconds: seconds() };
}

function markdown(r: Awaited<ReturnType<typeof measure>>): string {
  const m = r.machine;
  const s = r.storage;
  const [plain, keyed, list] = r.ramps as [Ramp, Ramp, Ramp];
  const [p, k, l] = [saturation(plain.steps), saturation(keyed.steps), saturation(list.steps)];
  // Planning arithmetic from the figures above and D1's published 10 GB.
  const perCreate = s.shortPetBytes + s.recordBytes;
  const recordsLive = (rate: number) => rate * 25 * 3600; // kept 24 h, purged hourly
  const statementsOf = (name: string) =>
    r.operations.find((o) => o.name === name)?.statements ?? Number.NaN;
  const plainStatements = statementsOf("createPet");
  const keyedStatements = statementsOf("createPet with a new Idempotency-Key");
  const lines = [
    `Measured ${m.date} by \`npm run bench:capacity\` (bench/capacity.ts) in ${Math.round(r.seconds)} s: ${m.cpus} CPUs (${m.cpuModel}), load average before the run ${m.loadAverage}; Node ${m.node}, miniflare ${m.miniflare}, workerd ${m.workerd}. Server pinned to CPU ${SERVER_CPU}, load generator to CPU ${LOADGEN_CPU}: ${canPin ? "yes" : "NO"}. Local figures: one workerd thread runs the worker, the D1 emulation and the rate limiter's Durable Object; they are this machine's, not production's.`,
    "",
    "### Creates per second on one local D1 (the built bundle in workerd)",
    "",
    `${STEP_S} s of closed-loop load per step, connections doubled per step, every answer checked (201, and no \`Idempotent-Replayed\`: every key was new). listPets page 1 read from D1 (the API with the edge cache off) for comparison.`,
    "",
    "| connections | createPet req/s | p50 ms | p99 ms | with Idempotency-Key req/s | p50 ms | p99 ms | listPets from D1 req/s | p50 ms | p99 ms |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...RAMP.map((c, i) => {
      const cell = (x: Ramp) => {
        const step = x.steps[i];
        return step ? `${f0(step.rps)} | ${ms(step.p50)} | ${ms(step.p99)}` : "- | - | -";
      };
      return `| ${c} | ${cell(plain)} | ${cell(keyed)} | ${cell(list)} |`;
    }),
    "",
    `- **Saturation** (the knee: the first step after which doubling the connections adds less than 10%; the rate: the median of the steps from the knee on): createPet about ${f0(p.rate)} creates/s from ${p.knee.connections} connection(s) on (p99 there ${ms(p.knee.p99)} ms; best single step ${f0(p.best)}); with Idempotency-Key about ${f0(k.rate)} creates/s from ${k.knee.connections} (p99 ${ms(k.knee.p99)} ms; best step ${f0(k.best)}), ${f0((1 - k.rate / p.rate) * 100)}% fewer; listPets from D1 about ${f0(l.rate)} req/s from ${l.knee.connections}. Past the knee more connections only queue: latency grows with the connection count (Little's law) while throughput stays flat, within this machine's step-to-step noise.`,
    "",
    "### Bytes on disk",
    "",
    `D1's own database size (\`meta.size_after\`: SQLite page count x page size, ${s.pageSize}-byte pages) before and after inserting ${f0(ROWS)} rows of each kind into a fresh local D1 holding the migrations (${f0(s.emptyBytes)} bytes empty).`,
    "",
    "| rows | bytes per row |",
    "|---|---|",
    `| pet, short name (\`pet-<id>\`, 8-10 characters), with its (status, id) index entry | ${f1(s.shortPetBytes)} |`,
    `| pet, 100-character name (the maximum), with its index entry | ${f1(s.longPetBytes)} |`,
    `| idempotency record (SHA-256 of the key and of the body, the pet's id, the time), with its created_at index entry | ${f1(s.recordBytes)} |`,
    "",
    `Record shape (average bytes of key hash / fingerprint / digits of the pet id): the API's own record ${s.recordShape.real}; the generated ones ${s.recordShape.generated}. Where the bytes are (SQLite's dbstat, after all inserts: ${f0(2 * ROWS)} pets of both kinds, ${f0(ROWS)} records): ${s.objects.map((o) => `${o.name} ${f0(o.bytes)} bytes (${f0(o.unusedPct)}% unused)`).join("; ")}.`,
    "",
    "### Rows read per request (D1's meta.rows_read, every statement of the request)",
    "",
    `The real app (src/app.ts, run in Node) over the same local D1 with ${f0(ROWS)} pets; the edge cache is an in-memory Cache API where a row says hit. Rows written count too (D1 bills both).`,
    "",
    "| operation | statements | rows read | rows written | note |",
    "|---|---|---|---|---|",
    ...r.operations.map(
      (o) => `| ${o.name} | ${o.statements} | ${o.rowsRead} | ${o.rowsWritten} | ${o.detail} |`,
    ),
    "",
    "### What one database holds (arithmetic on the figures above and D1's published limits)",
    "",
    "D1 publishes a 10 GB maximum per database and that a database runs one query at a time, so its throughput is about 1 / query duration (1 ms a query: about 1,000 queries a second). Statements per create come from the rows-read table; the write duration of production D1 is not published, so the 1 ms is the published rule of thumb, not a measurement.",
    "",
    "| | figure |",
    "|---|---|",
    `| pets in 10 GB (short names, no idempotency records) | ${f0(D1_MAX_BYTES / s.shortPetBytes)} |`,
    `| pets in 10 GB (100-character names) | ${f0(D1_MAX_BYTES / s.longPetBytes)} |`,
    `| bytes a keyed create adds (pet + record; the record goes after 24 h) | ${f1(perCreate)} |`,
    `| statements per create: plain / with Idempotency-Key | ${plainStatements} / ${keyedStatements} |`,
    `| one database's create ceiling at 1 ms a statement: plain / with Idempotency-Key | ${f0(1000 / plainStatements)} / ${f0(1000 / keyedStatements)} creates/s |`,
    "",
    `Load multiples of the measured keyed create rate (${f0(k.rate)}/s, its saturation rate above), sustained; pets are never deleted, idempotency records live 24 h (plus up to an hour until the hourly purge):`,
    "",
    "| load | keyed creates/s | primary busy at 1 ms a statement (writer databases needed) | idempotency records alive | one database full after | 10 GB databases filled a year | account's 250 GB full after |",
    "|---|---|---|---|---|---|---|",
    ...[1, 10, 100, 1000].map((multiple) => {
      const rate = multiple * k.rate;
      const busy = (rate * keyedStatements) / 1000;
      const records = recordsLive(rate);
      const recordBytes = records * s.recordBytes;
      const petBytesPerDay = rate * 86400 * s.shortPetBytes;
      const oneDb =
        recordBytes >= D1_MAX_BYTES
          ? "never fits: the records alone exceed 10 GB"
          : `${f1((D1_MAX_BYTES - recordBytes) / petBytesPerDay)} days`;
      const perYear = (petBytesPerDay * 365 + recordBytes) / D1_MAX_BYTES;
      const account =
        recordBytes >= ACCOUNT_BYTES
          ? "never fits: the records alone exceed 250 GB"
          : `${f1((ACCOUNT_BYTES - recordBytes) / petBytesPerDay)} days`;
      return `| ${multiple}x | ${f0(rate)} | ${f0(busy * 100)}% (${Math.ceil(busy)}) | ${f0(records)} (${f1(recordBytes / 1e9)} GB) | ${oneDb} | ${f0(perYear)} | ${account} |`;
    }),
  ];
  return lines.join("\n");
}

const section = markdown(await measure());
writeMeasured("docs/scaling.md", section);
