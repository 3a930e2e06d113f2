// npm run bench:capacity (issue 10): bytes per row, rows read per request and creates per
// second on one local D1, and what one database holds; rewrites "Measured" of docs/scaling.md.
// Knobs: CAPACITY_STEP_SECONDS (4), CAPACITY_ROWS (100000), BENCH_PORT (8781).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { median, quantile } from "simple-statistics";
import { encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
import type { Pet } from "../src/pets/schemas.ts";
import type { Executed } from "../test/support/instrumentation.ts";
import * as lib from "./lib.ts";

const { f0, f1, log, ms } = lib;
const STEP_S = Number(process.env.CAPACITY_STEP_SECONDS ?? 4);
const ROWS = Number(process.env.CAPACITY_ROWS ?? 100_000);
const RAMP = [1, 2, 4, 8, 16, 32];
/** D1's maximum database size and an account's storage on Workers Paid before a limit increase (developers.cloudflare.com/d1/platform/limits/). */
const D1_MAX_BYTES = 10e9;
const ACCOUNT_BYTES = 250e9;

/** D1's own size of the database (page count x page size), from a query's meta. */
const d1Size = async (db: D1Database) => (await db.prepare("SELECT 1").all()).meta.size_after;

/** Average bytes of key hash / fingerprint / digits of the pet id, over the idempotency records. */
const recordShape = async (db: D1Database) =>
  (
    await db
      .prepare(
        `SELECT round(avg(length(key_hash)), 1) || ' / ' || round(avg(length(fingerprint)), 1)
         || ' / ' || round(avg(length(CAST(pet_id AS TEXT))), 1) AS shape FROM idempotency_records`,
      )
      .first<{ shape: string }>()
  )?.shape ?? "?";

/** `n` idempotency records shaped as the API writes them (src/db/idempotency.ts), over 24 h. */
async function idempotencyRecords(db: D1Database, keyId: number, n: number): Promise<void> {
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO idempotency_records (scope, key_hash, fingerprint, pet_id, created_at)
       SELECT 'key:' || ?1, randomblob(32), randomblob(32), m.id - i, m.now - 86400 + i * 86400 / m.n
       FROM n, (SELECT (SELECT max(id) FROM pets) AS id, CAST(?3 AS INTEGER) AS now, CAST(?2 AS INTEGER) AS n) AS m`,
    )
    .bind(keyId, n, Math.floor(Date.now() / 1000))
    .run();
}

/** SQLite's page size and what each table and index holds (dbstat), from the database file. */
function dbstat(state: string) {
  const dir = path.join(state, "v3", "d1", "miniflare-D1DatabaseObject");
  const file = readdirSync(dir).find((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  assert.ok(file, `no D1 database file in ${dir}`);
  using sqlite = new DatabaseSync(path.join(dir, file), { readOnly: true });
  const { page_size } = sqlite.prepare("PRAGMA page_size").get() as { page_size: number };
  const objects = sqlite
    .prepare(
      `SELECT name, sum(pgsize) AS bytes, 100.0 * sum(unused) / sum(pgsize) AS unusedPct
       FROM dbstat WHERE name IN ('pets', 'pets_status_id', 'idempotency_records', 'idempotency_records_created_at')
       GROUP BY name ORDER BY name`,
    )
    .all() as Array<{ name: string; bytes: number; unusedPct: number }>;
  return { pageSize: page_size, objects };
}

/** On a fresh D1: bytes per row (its size before and after ROWS inserts), rows read per request. */
async function storageAndRowsRead(state: string, probe: string) {
  const workers = lib.cachedAndNot(lib.apiWorkerOptions(probe), "probe");
  const mf = await lib.serve(state, { workers }, false);
  try {
    const db = await mf.getD1Database("DB", "probe");
    const { key, id } = await lib.newKey(db);
    const empty = await d1Size(db);
    log(`storage: ${f0(ROWS)} pets with short names`);
    await lib.addPets(db, ROWS);
    const withPets = await d1Size(db);
    log("rows read per operation (the app over the same D1)");
    const operations = await rowsRead(key);
    const real = await recordShape(db);
    log(`storage: ${f0(ROWS)} pets with 100-character names, ${f0(ROWS)} idempotency records`);
    const beforeLong = await d1Size(db);
    await lib.addPets(db, ROWS, "substr('pet-' || i || '-' || hex(zeroblob(60)), 1, 100)");
    const withLong = await d1Size(db);
    await db.prepare("DELETE FROM idempotency_records").run();
    const beforeRecords = await d1Size(db);
    await idempotencyRecords(db, id, ROWS);
    const storage = {
      emptyBytes: empty,
      shortPetBytes: (withPets - empty) / ROWS,
      longPetBytes: (withLong - beforeLong) / ROWS,
      recordBytes: ((await d1Size(db)) - beforeRecords) / ROWS,
      /** The API's own record next to the generated ones: average column lengths. */
      recordShape: { real, generated: await recordShape(db) },
    };
    return { storage, operations };
  } finally {
    await mf.dispose();
  }
}

/** Statements, rows read and written of one request per operation, edge cache (`cached`) or not. */
async function rowsRead(key: string) {
  const [cached, fromD1] = [lib.PORTS.api, lib.PORTS.apiD1];
  /** One request and every statement it made, with the work after the response (`afterMs`). */
  async function request(
    port: number,
    url: string,
    status: number,
    init: RequestInit = {},
    afterMs = 100,
  ) {
    const headers = {
      ...{ Host: "api.petstore.test", Authorization: `Bearer ${key}` },
      ...(init.headers as Record<string, string>),
    };
    const response = await fetch(`http://${lib.HOST}:${port}${url}`, { ...init, headers });
    assert.equal(response.status, status, `${url}: ${await response.text()}`);
    await lib.sleep(afterMs);
    const list = await fetch(`http://${lib.HOST}:${port}/__bench/statements`);
    return { response, statements: (await list.json()) as Executed[] };
  }
  const ops: Array<
    { name: string; detail: string } & Record<"statements" | "rowsRead" | "rowsWritten", number>
  > = [];
  const sum = (statements: Executed[], of: "rowsRead" | "rowsWritten") =>
    statements.reduce((n, s) => n + s[of], 0);
  const add = (name: string, statements: Executed[], detail = "") => {
    const [rowsRead, rowsWritten] = [sum(statements, "rowsRead"), sum(statements, "rowsWritten")];
    ops.push({ name, statements: statements.length, rowsRead, rowsWritten, detail });
  };
  const on = (table: string) => (s: Executed) => new RegExp(`\\b${table}\\b`).test(s.sql);
  /** Its key's usage, which any response's work after it may write. */
  const usage = (s: Executed) => /\b(api_key_usage|last_used_at)\b/.test(s.sql);
  const hit = (name: string, r: Awaited<ReturnType<typeof request>>) => {
    const statements = r.statements.filter((s) => !usage(s));
    const bookmark = r.response.headers.has("x-d1-bookmark");
    assert.ok(statements.length === 0 && !bookmark, `${name}: not a hit`);
    add(name, statements, "served by the edge cache");
  };
  /** The request's own statements (without the key's usage), from D1. */
  const own = async (url: string, status = 200, init: RequestInit = {}) =>
    (await request(fromD1, url, status, init)).statements.filter((s) => !usage(s));

  // The key's first request in this isolate: it is looked up, its usage written within 10 s.
  const first = await request(cached, "/v1/pets", 200, {}, 11_000);
  add(
    "auth, cold cache: key lookup (then cached 30 s per location)",
    first.statements.filter((s) => on("api_keys")(s) && /^\s*SELECT/i.test(s.sql)),
  );
  add(
    "usage: last use and counts (after the response; at most once per key per 10 s per isolate)",
    first.statements.filter((s) => /^\s*UPDATE/i.test(s.sql) || on("api_key_usage")(s)),
  );
  add("listPets page 1 (limit 20), from D1", first.statements.filter(on("pets")), "limit + 1");
  const again = await request(cached, "/v1/pets", 200);
  hit("listPets page 1, edge-cache hit", again);
  const etag = again.response.headers.get("ETag") ?? "";
  hit(
    "304 revalidation of page 1 (a hit)",
    await request(cached, "/v1/pets", 304, { headers: { "If-None-Match": etag } }),
  );
  await own("/v1/pets?limit=1"); // warms this app's auth cache
  const deepAfter = Math.floor(ROWS * 0.9);
  const page = async (after: number, status?: "available") => {
    const cursor = await encodeCursor(after, status, LOCAL_CURSOR_SECRET);
    return own(`/v1/pets?${status ? `status=${status}&` : ""}cursor=${cursor}`);
  };
  const limit = "limit + 1";
  add("listPets page 1, limit 100, from D1", await own("/v1/pets?limit=100"), limit);
  add(`listPets deep page (after id ${f0(deepAfter)}), from D1`, await page(deepAfter), limit);
  add("listPets deep page, status=available, from D1", await page(deepAfter, "available"), limit);
  const last = "listPets last page (5 pets; never cached, so a 304 for it reads this too)";
  add(last, await page(ROWS - 5));
  const pet = `/v1/pets/${Math.floor(ROWS / 2)}`;
  add("getPet, from D1", await own(pet));
  await request(cached, pet, 200);
  hit("getPet, edge-cache hit", await request(cached, pet, 200));
  add(
    "getPet of an id that does not exist (404, never cached)",
    (await request(cached, "/v1/pets/900000000", 404)).statements,
  );
  const post = (headers: Record<string, string> = {}) => ({
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ name: "Capacity", categoryId: 3, status: "pending" }),
  });
  add("createPet", await own("/v1/pets", 201, post()));
  const keyed = post({ "Idempotency-Key": randomUUID() });
  add(
    "createPet with a new Idempotency-Key",
    await own("/v1/pets", 201, keyed),
    "one batch (one round trip): clear an expired record, insert, record, read back",
  );
  const replay = await request(fromD1, "/v1/pets", 201, keyed);
  assert.equal(replay.response.headers.get("Idempotent-Replayed"), "true", "not a replay");
  add(
    "createPet replay (same key, same body)",
    replay.statements,
    "the same batch: inserts nothing, reads the record and its pet back",
  );
  return ops;
}

type Step = { connections: number; rps: number; p50: number; p99: number };

/** Where a ramp saturates: the knee (the next doubling adds < 10%), the median rate from it on. */
function saturation(steps: Step[]) {
  const i = steps.findIndex(
    (s, j) => j === steps.length - 1 || (steps[j + 1] as Step).rps < 1.1 * s.rps,
  );
  const [knee, best] = [steps[i] as Step, Math.max(...steps.map((s) => s.rps))];
  return { knee, rate: median(steps.slice(i).map((s) => s.rps)), best };
}

/** Creates (plain and keyed) and listPets from D1 at each step of RAMP connections. */
async function load(bundle: string, state: string) {
  const mf = await lib.serve(state, {
    workers: lib.cachedAndNot(lib.apiWorkerOptions(bundle), "api"),
  });
  try {
    const db = await mf.getD1Database("DB", "api");
    await lib.addPets(db, ROWS);
    const { key } = await lib.newKey(db);
    log(`server ready: ${f0(ROWS)} pets`);
    const auth = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
    const create = {
      ...{ port: lib.PORTS.api, path: "/v1/pets", method: "POST" as const, status: 201 },
      body: JSON.stringify({ name: "Capacity", categoryId: 3, status: "pending" }),
      checks: [(body: string) => assert.ok((JSON.parse(body) as Pet).id, "not created")],
      each: (_: string, h: Headers) =>
        assert.equal(h.get("Idempotent-Replayed"), null, "a replay: a key was used twice"),
    };
    const endpoints: lib.Endpoint[] = [
      { ...create, id: "create", label: "createPet", headers: auth },
      {
        ...{ ...create, id: "create-keyed", label: "createPet with a unique Idempotency-Key" },
        ...{ headers: { ...auth, "Idempotency-Key": "capacity-[<id>]" }, uniqueIds: true },
      },
      {
        ...{ id: "list", label: "listPets page 1, from D1 (edge cache off)" },
        ...{ port: lib.PORTS.apiD1, path: "/v1/pets", headers: auth },
        checks: [(body) => assert.equal((JSON.parse(body) as Pet[]).length, 20, "not a page")],
        each: (_, h) => assert.ok(h.get("x-d1-bookmark"), "not read from D1"),
      },
    ];
    const steps = new Map<string, Step[]>(endpoints.map((e) => [e.id, []]));
    for (const e of endpoints) {
      await lib.sample({ ...e, headers: { ...e.headers, "Idempotency-Key": randomUUID() } });
      await lib.slice(e, 2, 8); // warm-up
    }
    for (const connections of RAMP) {
      // The order alternates at each step, so drift does not favour one of them.
      for (const e of connections % 2 === 0 ? endpoints : endpoints.toReversed()) {
        const s = await lib.slice(e, STEP_S, connections);
        const [p50 = 0, p99 = 0] = quantile(s.latenciesMs, [0.5, 0.99]);
        steps.get(e.id)?.push({ connections, rps: s.rps, p50, p99 });
        log(
          `${e.label}, ${connections} connections: ${f0(s.rps)} req/s, p50 ${ms(p50)} ms, p99 ${ms(p99)} ms`,
        );
      }
    }
    return endpoints.map((e) => steps.get(e.id) as Step[]);
  } finally {
    await mf.dispose();
  }
}

const { facts, scratch } = await lib.begin("capacity", Object.values(lib.PORTS));
log("building the worker (wrangler deploy --dry-run)");
const bundle = lib.buildBundle(path.join(scratch, "build")).file;
const probe = lib.buildBundle(path.join(scratch, "probe"), "bench/edge-worker.ts").file;
const storageState = path.join(scratch, "state-storage");
const { storage: measured, operations } = await storageAndRowsRead(storageState, probe);
const s = { ...measured, ...dbstat(storageState) };
log("load: creates and reads at 1..32 connections");
const [plain = [], keyed = [], list = []] = await load(bundle, path.join(scratch, "state-load"));
rmSync(scratch, { recursive: true, force: true });

const [p, k, l] = [saturation(plain), saturation(keyed), saturation(list)];
const perCreate = s.shortPetBytes + s.recordBytes;
const statementsOf = (name: string) => operations.find((o) => o.name === name)?.statements ?? NaN;
const plainStatements = statementsOf("createPet");
const keyedStatements = statementsOf("createPet with a new Idempotency-Key");
const cells = (x: Step | undefined) =>
  x ? `${f0(x.rps)} | ${ms(x.p50)} | ${ms(x.p99)}` : "- | - | -";
const section = [
  `Measured ${facts.date} by \`npm run bench:capacity\` (bench/capacity.ts) in ${Math.round(lib.seconds())} s: ${facts.line}. workerd pinned to CPU ${lib.SERVER_CPU}, load generator to CPU ${lib.LOADGEN_CPU}: ${lib.canPin ? "yes" : "NO"}. Local figures: one workerd thread runs the worker, the D1 emulation and the rate limiter's Durable Object; they are this machine's, not production's.`,
  "",
  "### Creates per second on one local D1 (the built bundle in workerd)",
  "",
  `${STEP_S} s of closed-loop load per step, connections doubled per step, every response checked (201, and no \`Idempotent-Replayed\`: every key was new). listPets page 1 read from D1 (the API with the edge cache off) for comparison.`,
  "",
  lib.table(
    "| connections | createPet req/s | p50 ms | p99 ms | with Idempotency-Key req/s | p50 ms | p99 ms | listPets from D1 req/s | p50 ms | p99 ms |",
    RAMP.map((c, i) => `| ${c} | ${cells(plain[i])} | ${cells(keyed[i])} | ${cells(list[i])} |`),
  ),
  "",
  `- **Saturation** (the knee: the first step after which doubling the connections adds less than 10%; the rate: the median of the steps from the knee on): createPet about ${f0(p.rate)} creates/s from ${p.knee.connections} connection(s) on (p99 there ${ms(p.knee.p99)} ms; best single step ${f0(p.best)}); with Idempotency-Key about ${f0(k.rate)} creates/s from ${k.knee.connections} (p99 ${ms(k.knee.p99)} ms; best step ${f0(k.best)}), ${f0((1 - k.rate / p.rate) * 100)}% fewer; listPets from D1 about ${f0(l.rate)} req/s from ${l.knee.connections}. Past the knee more connections only queue: latency grows with the connection count (Little's law) while throughput stays flat, within this machine's step-to-step noise.`,
  "",
  "### Bytes on disk",
  "",
  `D1's own database size (\`meta.size_after\`: SQLite page count x page size, ${s.pageSize}-byte pages) before and after inserting ${f0(ROWS)} rows of each kind into a fresh local D1 holding the migrations (${f0(s.emptyBytes)} bytes empty).`,
  "",
  lib.table("| rows | bytes per row |", [
    `| pet, short name (\`pet-<id>\`, 8-10 characters), with its (status, id) index entry | ${f1(s.shortPetBytes)} |`,
    `| pet, 100-character name (the maximum), with its index entry | ${f1(s.longPetBytes)} |`,
    `| idempotency record (SHA-256 of the key and of the body, the pet's id, the time), with its created_at index entry | ${f1(s.recordBytes)} |`,
  ]),
  "",
  `Record shape (average bytes of key hash / fingerprint / digits of the pet id): the API's own record ${s.recordShape.real}; the generated ones ${s.recordShape.generated}. Where the bytes are (SQLite's dbstat, after all inserts: ${f0(2 * ROWS)} pets of both kinds, ${f0(ROWS)} records): ${s.objects.map((o) => `${o.name} ${f0(o.bytes)} bytes (${f0(o.unusedPct)}% unused)`).join("; ")}.`,
  "",
  "### Rows read per request (D1's meta.rows_read, every statement of the request)",
  "",
  `The app as it deploys (bench/edge-worker.ts: its D1 calls recorded, no delay) in workerd over the same local D1 with ${f0(ROWS)} pets, with the local Cache API where a row says hit and without it elsewhere. Rows written count too (D1 bills both).`,
  "",
  lib.table(
    "| operation | statements | rows read | rows written | note |",
    operations.map(
      (o) => `| ${o.name} | ${o.statements} | ${o.rowsRead} | ${o.rowsWritten} | ${o.detail} |`,
    ),
  ),
  "",
  "### What one database holds (arithmetic on the figures above and D1's published limits)",
  "",
  "D1 publishes a 10 GB maximum per database and that a database runs one query at a time, so its throughput is about 1 / query duration (1 ms a query: about 1,000 queries a second). Statements per create come from the rows-read table; the write duration of production D1 is not published, so the 1 ms is the published rule of thumb, not a measurement.",
  "",
  lib.table("| | figure |", [
    `| pets in 10 GB (short names, no idempotency records) | ${f0(D1_MAX_BYTES / s.shortPetBytes)} |`,
    `| pets in 10 GB (100-character names) | ${f0(D1_MAX_BYTES / s.longPetBytes)} |`,
    `| bytes a keyed create adds (pet + record; the record goes after 24 h) | ${f1(perCreate)} |`,
    `| statements per create: plain / with Idempotency-Key | ${plainStatements} / ${keyedStatements} |`,
    `| one database's create ceiling at 1 ms a statement: plain / with Idempotency-Key | ${f0(1000 / plainStatements)} / ${f0(1000 / keyedStatements)} creates/s |`,
  ]),
  "",
  `Load multiples of the measured keyed create rate (${f0(k.rate)}/s, its saturation rate above), sustained; pets are never deleted, idempotency records live 24 h (plus up to an hour until the hourly purge):`,
  "",
  lib.table(
    "| load | keyed creates/s | primary busy at 1 ms a statement (writer databases needed) | idempotency records alive | one database full after | 10 GB databases filled a year | account's 250 GB full after |",
    [1, 10, 100, 1000].map((multiple) => {
      const rate = multiple * k.rate;
      const busy = (rate * keyedStatements) / 1000;
      const records = rate * 25 * 3600; // kept 24 h, purged hourly
      const recordBytes = records * s.recordBytes;
      const petBytesPerDay = rate * 86400 * s.shortPetBytes;
      const fullAfter = (limit: number, what: string) =>
        recordBytes >= limit
          ? `never fits: the records alone exceed ${what}`
          : `${f1((limit - recordBytes) / petBytesPerDay)} days`;
      const perYear = (petBytesPerDay * 365 + recordBytes) / D1_MAX_BYTES;
      return `| ${multiple}x | ${f0(rate)} | ${f0(busy * 100)}% (${Math.ceil(busy)}) | ${f0(records)} (${f1(recordBytes / 1e9)} GB) | ${fullAfter(D1_MAX_BYTES, "10 GB")} | ${f0(perYear)} | ${fullAfter(ACCOUNT_BYTES, "250 GB")} |`;
    }),
  ),
].join("\n");
lib.writeMeasured("docs/scaling.md", section);
