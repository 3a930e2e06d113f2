// npm run bench: the benchmark of issues 4 and 10 (how it measures, and why so:
// docs/performance.md, "What it measures"). Builds the worker as it deploys, serves it
// with the baselines from bench/server.ts pinned to one CPU, measures each comparison in
// ABBA slices of load from the other CPU, then start-up (bench/startup.ts), and rewrites
// the measured section of docs/performance.md. Exits 1 when a comparison could not be
// measured or an answer was wrong after the load.
// Knobs (environment): BENCH_PAIRS (6), BENCH_SLICE_SECONDS (2), BENCH_CONNECTIONS (10),
// BENCH_STARTUP_PAIRS (20).
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import path from "node:path";
import { median, quantileSorted } from "simple-statistics";
import { buildMcpWorker } from "../scripts/mcp-worker.ts";
import { encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
import type { Pet } from "../src/pets/schemas.ts";
import {
  BadAnswers,
  BUNDLE_BUDGET_KIB,
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
  type Slice,
  STARTUP_BUDGET_MS,
  sample,
  seconds,
  sizeOf,
  slice,
  withServer,
  writeMeasured,
} from "./lib.ts";
import { measureStartup } from "./startup.ts";
import { BENCH_PET_ID } from "./workers.ts";

const PAIRS = Number(process.env.BENCH_PAIRS ?? 6);
const SLICE_S = Number(process.env.BENCH_SLICE_SECONDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const STARTUP_PAIRS = Number(process.env.BENCH_STARTUP_PAIRS ?? 20);
const PETS = 100_000;
const DEEP_AFTER = 90_000;

// ------------------------------------------------------------------ endpoints
/** Whether the API read D1 for this answer: its D1 session handed out a bookmark. */
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
const apiHit: Check = (_, h) => {
  assert.ok(!readD1(h), "not a cache hit: the answer read D1 (x-d1-bookmark)");
  assert.ok(h.get("ETag"), "no ETag");
};
const rawHit: Check = (_, h) =>
  assert.equal(h.get("x-raw-cache"), "hit", `raw cache ${h.get("x-raw-cache") ?? "not used"}`);
const deprecated: Check = (_, h) => assert.ok(h.get("Deprecation"), "no Deprecation header");

/** What each endpoint is, as the tables name it. */
const LABELS: Record<string, string> = {
  a: "(a) static 20-pet JSON, bare worker",
  b: "(b) listPets SQL, raw D1 worker",
  bp: "(b+) raw D1 worker + rate limiter + D1 session (diagnostic)",
  bl: "(b+l) raw D1 worker + rate-limiter call only (diagnostic)",
  bs: "(b+s) raw D1 worker + D1 session only (diagnostic)",
  bh: "(b+h) raw worker + rate limiter + D1 session + Cache API match and body read (page 1)",
  bhf: "(b+hf) raw worker + rate limiter + D1 session + Cache API match and body read (one pet)",
  bn: "(b+n) raw worker + rate limiter + D1 session + Cache API match and body read, 304 on its ETag (page 1)",
  c: "(c) listPets page 1, from D1",
  cs: "(c') listPets page 1, status=available, from D1",
  d: `(d) listPets deep page (after id ${f0(DEEP_AFTER)}), from D1`,
  ds: "(d') listPets deep page, status=available, from D1",
  e: "(e) createPet",
  f: "(f) getPet, from D1",
  ch: "(c hit) listPets page 1, edge-cache hit",
  fh: "(f hit) getPet, edge-cache hit",
  cn: "(c 304) listPets page 1, If-None-Match with the current ETag (a cache hit)",
};

/** One endpoint: where it is, and what every sample answer of it must pass. */
const row = (id: string, where: Omit<Endpoint, "id" | "label">, ...checks: Check[]): Endpoint => ({
  id,
  label: LABELS[id] ?? id,
  ...where,
  checks,
});

async function endpoints(key: string): Promise<Record<string, Endpoint>> {
  const headers = { Authorization: `Bearer ${key}` };
  const deep = await encodeCursor(DEEP_AFTER, undefined, LOCAL_CURSOR_SECRET);
  const deepAvailable = await encodeCursor(DEEP_AFTER, "available", LOCAL_CURSOR_SECRET);
  const raw = (query: string) => ({ port: PORTS.raw, path: `/?${query}` });
  const rawHits = (query: string) => ({ ...raw(`platform&hit=${query}`), each: rawHit });
  const fromApi = (path: string) => ({ port: PORTS.apiD1, path, headers });
  const hits = (path: string) => ({ port: PORTS.api, path, headers, each: apiHit });
  const created: Check = (body, h) => {
    const pet = JSON.parse(body) as Pet;
    assert.ok(pet.name === "Bench" && pet.id > PETS, `unexpected pet ${body}`);
    assert.equal(h.get("Location"), `/v1/pets/${pet.id}`);
  };
  const create = {
    port: PORTS.api,
    path: "/v1/pets",
    method: "POST" as const,
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "Bench", categoryId: 7, status: "pending" }),
    status: 201,
  };
  const rows = [
    row("a", { port: PORTS.static, path: "/" }, page(1)),
    row("b", raw(""), page(1)),
    row("bp", raw("platform"), page(1)),
    row("bl", raw("limiter"), page(1)),
    row("bs", raw("session"), page(1)),
    row("bh", rawHits("list"), page(1)),
    row("bhf", rawHits("pet"), benchPet),
    row("bn", { ...rawHits("list&inm"), status: 304 }, empty),
    row("c", fromApi("/v1/pets"), page(1), next, fromD1),
    row("cs", fromApi("/v1/pets?status=available"), page(1, "available")),
    row("d", fromApi(`/v1/pets?cursor=${deep}`), page(DEEP_AFTER + 1)),
    row(
      "ds",
      fromApi(`/v1/pets?status=available&cursor=${deepAvailable}`),
      page(DEEP_AFTER + 1, "available"),
    ),
    row("e", create, created),
    row("f", fromApi(`/v1/pets/${BENCH_PET_ID}`), benchPet, fromD1),
    row("ch", hits("/v1/pets"), page(1), next),
    row("fh", hits(`/v1/pets/${BENCH_PET_ID}`), benchPet, deprecated),
    // If-None-Match is filled in by prime() once the page's tag is known.
    row("cn", { ...hits("/v1/pets"), status: 304 }, empty, next),
  ];
  return Object.fromEntries(rows.map((e) => [e.id, e]));
}

/**
 * Makes the hit rows hits before anything is measured: asks each until its answer came
 * from the cache (the first one misses and puts, after the answer), then hands the
 * tags to the 304 rows and checks that a hit is byte-identical to the same answer read
 * from D1 (body and ETag).
 */
async function prime(eps: Record<string, Endpoint>): Promise<void> {
  /** The first answer of `e` that passes its checks (a hit), asked up to 50 times. */
  const untilHit = async (e: Endpoint) => {
    for (let i = 1; ; i++) {
      const answer = await sample(e).catch((err: Error) => {
        if (i === 50) throw new Error(`still not a cache hit after 50 requests: ${err.message}`);
      });
      if (answer) return { body: answer.body, etag: answer.headers.get("ETag") ?? "" };
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const ch = await untilHit(eps.ch as Endpoint);
  const fh = await untilHit(eps.fh as Endpoint);
  const bh = await untilHit(eps.bh as Endpoint);
  await untilHit(eps.bhf as Endpoint);
  (eps.cn as Endpoint).headers = { ...eps.cn?.headers, "If-None-Match": ch.etag };
  (eps.bn as Endpoint).headers = { "If-None-Match": bh.etag };
  for (const [hit, fromD1] of [
    [ch, await sample(eps.c as Endpoint)],
    [fh, await sample(eps.f as Endpoint)],
  ] as const) {
    if (hit.body !== fromD1.body || hit.etag !== fromD1.headers.get("ETag")) {
      throw new Error(
        `a cache hit differs from the answer read from D1:\n${hit.etag} ${hit.body.slice(0, 200)}\n${fromD1.headers.get("ETag")} ${fromD1.body.slice(0, 200)}`,
      );
    }
  }
}

/**
 * The comparisons, each measured in its own ABBA pairs: [target, baseline], and for the
 * targets of issues 4 and 10, the least median ratio it must reach and what the target is.
 */
const COMPARISONS: Array<[string, string, number?, string?]> = [
  ["c", "b", 0.85, "listPets from D1 >= 0.85x raw D1 worker (c/b)"],
  ["c", "a"],
  ["d", "b"],
  ["ds", "b"],
  // Depth alone: each deep page against page 1 of the same listing (same filter, same index).
  ["d", "c", 0.9, "deep page within 10% of page 1 (d/c)"],
  ["ds", "cs", 0.9, "deep page with status=available within 10% of its page 1 (d'/c')"],
  ["e", "b"],
  ["f", "b"],
  // Diagnostic: what the rate-limiter call and the D1 session cost, together and each
  // alone, and what the API costs over a raw worker making the same two calls.
  ["bp", "b"],
  ["bl", "b"],
  ["bs", "b"],
  [
    "c",
    "bp",
    0.85,
    "(diagnostic) listPets from D1 >= 0.85x raw D1 worker making the same limiter and session calls (c/b+)",
  ],
  // The edge cache (issue 10): hits and a 304, each against a raw worker making the same
  // platform calls (limiter, session, Cache API match and body read); and a hit against
  // the same answer read from D1.
  [
    "ch",
    "bh",
    0.85,
    "(diagnostic) listPets cache hit >= 0.85x raw worker making the same limiter, session and Cache API calls (c hit/b+h)",
  ],
  [
    "fh",
    "bhf",
    0.85,
    "(diagnostic) getPet cache hit >= 0.85x raw worker making the same calls (f hit/b+hf)",
  ],
  [
    "cn",
    "bn",
    0.85,
    "(diagnostic) 304 revalidation >= 0.85x raw worker making the same calls (c 304/b+n)",
  ],
  ["ch", "c"],
];

// ---------------------------------------------------------------- measuring
type Pair = { target: string; base: string };
type Ratio = Pair & {
  median: number;
  min: number;
  max: number;
  extraUs: number;
  retried: string[];
};
type Comparison = Ratio | (Pair & { notMeasured: string });

const firstLine = (text: string) => text.split("\n").slice(0, 2).join(" ").trim();

/**
 * One comparison: PAIRS pairs of slices in ABBA order; its throughput ratios (median,
 * range) and the extra server time per request (median over pairs of 1e6/rps(target) -
 * 1e6/rps(base)), or why it was not measured. A pair with a bad answer is said (with the
 * answers), the two endpoints are checked again, and the pair runs once more (`retried`
 * says what failed); a second failure ends the comparison.
 */
async function compare(target: Endpoint, base: Endpoint, all: Slice[]): Promise<Comparison> {
  const [t, b] = [target.id, base.id];
  const pairs: Array<{ t: Slice; b: Slice }> = [];
  const retried: string[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const order = i % 2 === 0 ? [base, target] : [target, base];
    for (let attempt = 1; ; attempt++) {
      try {
        const got: Record<string, Slice> = {};
        for (const e of order) got[e.id] = await slice(e, SLICE_S, CONNECTIONS);
        pairs.push({ t: got[t] as Slice, b: got[b] as Slice });
        all.push(got[b] as Slice, got[t] as Slice);
        break;
      } catch (err) {
        if (!(err instanceof BadAnswers)) throw err;
        log(`${t}/${b} pair ${i + 1}, attempt ${attempt}: ${err.message}`);
        const recheck = await Promise.allSettled([sample(target), sample(base)]);
        const still = recheck.flatMap((x) => (x.status === "rejected" ? [x.reason.message] : []));
        if (still.length > 0) log(`  answers right after it: ${still.join("; ")}`);
        if (attempt === 2) return { target: t, base: b, notMeasured: firstLine(err.message) };
        retried.push(firstLine(err.message));
      }
    }
  }
  const rs = pairs.map((p) => p.t.rps / p.b.rps);
  return {
    target: t,
    base: b,
    median: median(rs),
    min: Math.min(...rs),
    max: Math.max(...rs),
    extraUs: median(pairs.map((p) => 1e6 / p.t.rps - 1e6 / p.b.rps)),
    retried,
  };
}

/** The whole run: every figure of the document. */
async function measure() {
  log(
    `plan: ${COMPARISONS.length} comparisons x ${PAIRS} pairs x 2 slices x ${SLICE_S} s = ~${Math.round(COMPARISONS.length * PAIRS * 2 * SLICE_S)} s of load, plus a warm-up slice per endpoint`,
  );
  const { facts, scratch, bundle } = await begin("run");

  log(`starting the server on CPU ${SERVER_CPU}, seeding ${f0(PETS)} pets`);
  const all: Slice[] = [];
  const comparisons: Comparison[] = [];
  /** Endpoints whose answer was wrong when checked again after all the load. */
  const afterLoad: string[] = [];
  const state = path.join(scratch, "state");
  const eps = await withServer({ bundle: bundle.file, state, pets: PETS }, async (key, ready) => {
    log(
      `server ready: ${f0(ready.pets)} pets (max id ${ready.maxId}), seeded in ${ready.seedMs} ms`,
    );
    if (ready.pets < PETS) throw new Error("the database was not seeded");
    const eps = await endpoints(key);
    await prime(eps);
    for (const e of Object.values(eps)) await sample(e);
    log("warm-up");
    for (const e of Object.values(eps)) {
      // A bad warm-up answer is said; the comparisons that use the endpoint deal with it.
      await slice(e, SLICE_S, CONNECTIONS).catch((err: Error) => log(`warm-up: ${err.message}`));
    }
    for (const [t, b] of COMPARISONS) {
      const x = await compare(eps[t] as Endpoint, eps[b] as Endpoint, all);
      comparisons.push(x);
      if ("notMeasured" in x) log(`${t}/${b}: NOT MEASURED (${x.notMeasured})`);
      else log(`${t}/${b}: ${f2(x.median)} (${f2(x.min)}-${f2(x.max)}), ${us(x.extraUs)}/request`);
    }
    // The answers are still right after the load (e.g. no 429, no 503, hits still hits).
    for (const e of Object.values(eps)) {
      await sample(e).catch((err: Error) => afterLoad.push(firstLine(err.message)));
    }
    return eps;
  });

  log("start-up: workerd serve -> first response, API vs raw worker");
  const startupMs = await measureStartup(bundle.file, PORTS.startup, STARTUP_PAIRS);
  log("the MCP worker: its bundle, and its start-up vs raw worker");
  const mcpFile = buildMcpWorker(path.join(scratch, "mcp"));
  const mcp = {
    bundle: sizeOf(mcpFile),
    startup: await measureStartup(mcpFile, PORTS.startup, STARTUP_PAIRS, "mcp"),
  };
  rmSync(scratch, { recursive: true, force: true });
  return {
    machine: facts,
    bundle,
    startup: startupMs,
    mcp,
    comparisons,
    afterLoad,
    endpoints: Object.values(eps).map((e) => {
      const slices = all.filter((s) => s.endpoint === e.id);
      const latencies = slices.flatMap((s) => s.latenciesMs).sort((a, b) => a - b);
      const rps = slices.map((s) => s.rps);
      return {
        label: e.label,
        rps: rps.length ? median(rps) : Number.NaN,
        rpsMin: Math.min(...rps),
        rpsMax: Math.max(...rps),
        p50: latencies.length ? quantileSorted(latencies, 0.5) : Number.NaN,
        p99: latencies.length ? quantileSorted(latencies, 0.99) : Number.NaN,
        n: latencies.length,
      };
    }),
    seconds: seconds(),
  };
}
type Results = Awaited<ReturnType<typeof measure>>;

// -------------------------------------------------------------------- figures
const f2 = (n: number) => n.toFixed(2);
const us = (n: number) => `${n >= 0 ? "+" : ""}${f0(n)} us`;

/** The targets table: name, budget, what was measured, met (undefined: not measured). */
type TargetRow = [string, string, string, boolean | undefined];
function targets(r: Results): TargetRow[] {
  const ratios = r.comparisons.flatMap((x, i): TargetRow[] => {
    const [, , least, name] = COMPARISONS[i] ?? [];
    if (name === undefined || least === undefined) return [];
    if ("notMeasured" in x)
      return [[name, `>= ${f2(least)}`, `not measured: ${x.notMeasured}`, undefined]];
    return [
      [name, `>= ${f2(least)}`, `${f2(x.median)} (${f2(x.min)}-${f2(x.max)})`, x.median >= least],
    ];
  });
  const { gzipKiB } = r.bundle;
  const { extraMs, extraMinMs, extraMaxMs } = r.startup;
  return [
    ...ratios,
    [
      "auth adds no D1 query in steady state",
      "0 queries",
      "0 (test/perf-auth-cache.test.ts, npm test)",
      true,
    ],
    [
      "a cache hit reads no D1 row",
      "0 rows",
      "0 (test/conditional-read.test.ts, npm test; here: no bookmark on any hit answer)",
      true,
    ],
    [
      `bundle <= ${BUNDLE_BUDGET_KIB} KiB gzip`,
      `<= ${BUNDLE_BUDGET_KIB}`,
      `${gzipKiB.toFixed(1)} KiB`,
      gzipKiB <= BUNDLE_BUDGET_KIB,
    ],
    [
      `start-up <= +${STARTUP_BUDGET_MS} ms over a raw worker`,
      `<= +${STARTUP_BUDGET_MS}`,
      `+${ms(extraMs)} ms (${ms(extraMinMs)} to ${ms(extraMaxMs)})`,
      extraMs <= STARTUP_BUDGET_MS,
    ],
  ];
}

const verdict = (pass: boolean | undefined) =>
  pass === undefined ? "**not measured**" : pass ? "met" : "**missed**";

function markdown(r: Results): string {
  const m = r.machine;
  const problems = [
    ...r.comparisons.flatMap((x) =>
      "notMeasured" in x ? [`- **${x.target}/${x.base} not measured**: ${x.notMeasured}`] : [],
    ),
    ...r.comparisons.flatMap((x) =>
      "notMeasured" in x
        ? []
        : x.retried.map(
            (why) => `- ${x.target}/${x.base}: one pair failed and was run again: ${why}`,
          ),
    ),
    ...r.afterLoad.map((why) => `- **wrong answer after the load**: ${why}`),
  ];
  return [
    `Run ${m.date}: ${m.cpus} CPUs (${m.cpuModel}), ${m.os}, load average before the run ${m.loadAverage}; Node ${m.node}, wrangler ${m.wrangler}, miniflare ${m.miniflare}, workerd ${m.workerd}, autocannon ${m.autocannon}.`,
    `Server pinned to CPU ${SERVER_CPU}, load generator to CPU ${LOADGEN_CPU}: ${canPin ? "yes" : "NO (taskset unavailable): figures are less reliable"}. ${PAIRS} ABBA pairs of ${SLICE_S} s slices per comparison, ${CONNECTIONS} connections, ${f0(PETS)} pets; whole run ${Math.round(r.seconds)} s.`,
    `Every comparison measured, no pair run again, every answer right after the load: ${problems.length === 0 ? "yes" : "**no**, see below"}.`,
    ...(problems.length > 0 ? ["", ...problems] : []),
    "",
    "### Targets",
    "",
    "| target | budget | measured | |",
    "|---|---|---|---|",
    ...targets(r).map(
      ([name, budget, got, pass]) => `| ${name} | ${budget} | ${got} | ${verdict(pass)} |`,
    ),
    "",
    "### Ratios (throughput, medians over back-to-back pairs)",
    "",
    "| ratio | median | range | extra server time per request |",
    "|---|---|---|---|",
    ...r.comparisons.map((x) =>
      "notMeasured" in x
        ? `| ${x.target}/${x.base} | **not measured** | | |`
        : `| ${x.target}/${x.base} | ${f2(x.median)} | ${f2(x.min)}-${f2(x.max)} | ${us(x.extraUs)} |`,
    ),
    "",
    "### Endpoints",
    "",
    "| endpoint | req/s (median of slices) | range | p50 ms | p99 ms | requests |",
    "|---|---|---|---|---|---|",
    ...r.endpoints.map((e) =>
      e.n === 0
        ? `| ${e.label} | not measured | | | | 0 |`
        : `| ${e.label} | ${f0(e.rps)} | ${f0(e.rpsMin)}-${f0(e.rpsMax)} | ${ms(e.p50)} | ${ms(e.p99)} | ${f0(e.n)} |`,
    ),
    "",
    `p50/p99: exact percentiles of every response's latency as autocannon timed it (no histogram, no coordinated-omission padding), pooled over the endpoint's slices.`,
    "",
    "### Bundle and start-up",
    "",
    `- Bundle (\`wrangler deploy --dry-run\`, minified; the OpenAPI document and the docs page's files are static assets, not in it): ${(r.bundle.bytes / 1024).toFixed(1)} KiB, **${r.bundle.gzipKiB.toFixed(1)} KiB gzip** (zlib level 9; wrangler says "${r.bundle.wranglerSays ?? "?"}"). Budget ${BUNDLE_BUDGET_KIB} KiB gzip, enforced by \`npm run bench:size\`.`,
    `- Start-up (spawn \`workerd serve\` to first 200 on GET /, median of ${r.startup.pairs} ABBA pairs): API ${ms(r.startup.workerMs)} ms, raw worker ${ms(r.startup.rawMs)} ms, **extra +${ms(r.startup.extraMs)} ms** (pairs ranged ${ms(r.startup.extraMinMs)} to ${ms(r.startup.extraMaxMs)} ms). Budget +${STARTUP_BUDGET_MS} ms.`,
    `- The MCP worker (\`mcp/\`, a worker of its own behind the API's MCP binding, outside the API's budget): ${(r.mcp.bundle.bytes / 1024).toFixed(1)} KiB, **${r.mcp.bundle.gzipKiB.toFixed(1)} KiB gzip**; start-up to its first answer ${ms(r.mcp.startup.workerMs)} ms, raw worker ${ms(r.mcp.startup.rawMs)} ms, **extra +${ms(r.mcp.startup.extraMs)} ms** (pairs ${ms(r.mcp.startup.extraMinMs)} to ${ms(r.mcp.startup.extraMaxMs)} ms). The API pays it on its first \`/mcp\` request in a location only.`,
  ].join("\n");
}

const results = await measure();
const table = markdown(results);
writeMeasured("docs/performance.md", table);
const notMeasured = results.comparisons.filter((x) => "notMeasured" in x).length;
if (notMeasured > 0 || results.afterLoad.length > 0) {
  console.error(
    `${notMeasured} comparison(s) not measured, ${results.afterLoad.length} wrong answer(s) after the load: see above and docs/performance.md`,
  );
  process.exitCode = 1;
}
