// npm run bench — issue 4's benchmark. See docs/performance.md (written by this script).
//  1. builds the worker as it deploys (wrangler deploy --dry-run, minified) and weighs it;
//  2. starts bench/server.ts pinned to CPU 1: one workerd serving the API bundle and two
//     baselines on direct sockets, over a fresh local D1 holding 100,000 pets;
//  3. pins itself (the load generator, autocannon) to CPU 0 and measures, on 127.0.0.1,
//     each comparison in alternating slices (ABBA) after a warm-up slice per endpoint;
//  4. measures start-up (bench/startup.ts, pinned to CPU 1);
//  5. prints the tables and rewrites docs/performance.md (keeping its notes section).
// Knobs (environment): BENCH_PAIRS (default 6), BENCH_SLICE_SECONDS (2),
// BENCH_CONNECTIONS (10), BENCH_STARTUP_PAIRS (20).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import { generateApiKey, hashApiKey } from "../src/auth/keys.ts";
import { encodeCursor } from "../src/pets/cursor.ts";
import {
  BUNDLE_BUDGET_KIB,
  type Bundle,
  buildBundle,
  hasTaskset,
  type Machine,
  machine,
  median,
  OUT,
  percentile,
  pinned,
  pinSelf,
  ROOT,
  STARTUP_BUDGET_MS,
} from "./lib.ts";

const PAIRS = Number(process.env.BENCH_PAIRS ?? 6);
const SLICE_S = Number(process.env.BENCH_SLICE_SECONDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const STARTUP_PAIRS = Number(process.env.BENCH_STARTUP_PAIRS ?? 20);
const PETS = 100_000;
const DEEP_AFTER = 90_000;
const HOST = "127.0.0.1";
const PORTS = { api: 8781, static: 8782, raw: 8783, startup: 8784 };
const SERVER_CPU = 1;
const LOADGEN_CPU = 0;
const DOC = path.join(ROOT, "docs", "performance.md");
const NOTES_START = "<!-- notes:start (kept by npm run bench) -->";
const NOTES_END = "<!-- notes:end -->";
const startedAt = performance.now();

function log(message: string) {
  const s = ((performance.now() - startedAt) / 1000).toFixed(0).padStart(4);
  console.log(`[${s}s] ${message}`);
}

// ------------------------------------------------------------------ endpoints
interface Endpoint {
  id: string;
  label: string;
  port: number;
  path: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Throws unless one sample answer is what this endpoint must answer. */
  check(status: number, body: string, headers: Headers): void;
}

type Pet = { id: number; name: string; categoryId: number; status: string };

function expectPage(body: string, first: number, status?: string): void {
  const pets = JSON.parse(body) as Pet[];
  if (pets.length !== 20) throw new Error(`expected 20 pets, got ${pets.length}`);
  const start = pets[0]?.id ?? 0;
  if (status ? start < first : start !== first) {
    throw new Error(`expected the page to start at id ${first}, got ${pets[0]?.id}`);
  }
  if (status && pets.some((p) => p.status !== status)) throw new Error(`a pet is not ${status}`);
}

async function endpoints(key: string): Promise<Record<string, Endpoint>> {
  const auth = { Authorization: `Bearer ${key}` };
  const deep = await encodeCursor(DEEP_AFTER, undefined);
  const deepAvailable = await encodeCursor(DEEP_AFTER, "available");
  const ok = (status: number, expected = 200) => {
    if (status !== expected) throw new Error(`status ${status}, expected ${expected}`);
  };
  return {
    a: {
      id: "a",
      label: "(a) static 20-pet JSON, bare worker",
      port: PORTS.static,
      path: "/",
      check: (s, b) => {
        ok(s);
        expectPage(b, 1);
      },
    },
    b: {
      id: "b",
      label: "(b) listPets SQL, raw D1 worker",
      port: PORTS.raw,
      path: "/",
      check: (s, b) => {
        ok(s);
        expectPage(b, 1);
      },
    },
    bp: {
      id: "bp",
      label: "(b+) raw D1 worker + rate limiter + D1 session (diagnostic)",
      port: PORTS.raw,
      path: "/?platform=1",
      check: (s, b) => {
        ok(s);
        expectPage(b, 1);
      },
    },
    bl: {
      id: "bl",
      label: "(b+l) raw D1 worker + rate-limiter call only (diagnostic)",
      port: PORTS.raw,
      path: "/?limiter=1",
      check: (s, b) => {
        ok(s);
        expectPage(b, 1);
      },
    },
    bs: {
      id: "bs",
      label: "(b+s) raw D1 worker + D1 session only (diagnostic)",
      port: PORTS.raw,
      path: "/?session=1",
      check: (s, b) => {
        ok(s);
        expectPage(b, 1);
      },
    },
    c: {
      id: "c",
      label: "(c) listPets page 1",
      port: PORTS.api,
      path: "/v1/pets",
      headers: auth,
      check: (s, b, h) => {
        ok(s);
        expectPage(b, 1);
        if (!/rel="next"/.test(h.get("Link") ?? "")) throw new Error("no next link");
        if (!h.get("x-d1-bookmark")) throw new Error("no bookmark");
      },
    },
    cs: {
      id: "cs",
      label: "(c') listPets page 1, status=available",
      port: PORTS.api,
      path: "/v1/pets?status=available",
      headers: auth,
      check: (s, b) => {
        ok(s);
        expectPage(b, 1, "available");
      },
    },
    d: {
      id: "d",
      label: `(d) listPets deep page (after id ${DEEP_AFTER.toLocaleString("en")})`,
      port: PORTS.api,
      path: `/v1/pets?cursor=${deep}`,
      headers: auth,
      check: (s, b) => {
        ok(s);
        expectPage(b, DEEP_AFTER + 1);
      },
    },
    ds: {
      id: "ds",
      label: `(d') listPets deep page, status=available`,
      port: PORTS.api,
      path: `/v1/pets?status=available&cursor=${deepAvailable}`,
      headers: auth,
      check: (s, b) => {
        ok(s);
        expectPage(b, DEEP_AFTER + 1, "available");
      },
    },
    e: {
      id: "e",
      label: "(e) createPet",
      port: PORTS.api,
      path: "/v1/pets",
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Bench", categoryId: 7, status: "pending" }),
      check: (s, b, h) => {
        ok(s, 201);
        const pet = JSON.parse(b) as Pet;
        if (pet.name !== "Bench" || !(pet.id > PETS)) throw new Error(`unexpected pet ${b}`);
        if (h.get("Location") !== `/v1/pets/${pet.id}`) throw new Error("no Location");
      },
    },
    f: {
      id: "f",
      label: "(f) getPet",
      port: PORTS.api,
      path: "/v1/pets/50000",
      headers: auth,
      check: (s, b) => {
        ok(s);
        if ((JSON.parse(b) as Pet).id !== 50_000) throw new Error(`unexpected pet ${b}`);
      },
    },
  };
}

/** The comparisons, each measured in its own ABBA pairs: [target, baseline]. */
const COMPARISONS: Array<[string, string]> = [
  ["c", "b"],
  ["c", "a"],
  ["d", "b"],
  ["ds", "b"],
  // Depth alone: each deep page against page 1 of the same listing (same filter, same index).
  ["d", "c"],
  ["ds", "cs"],
  ["e", "b"],
  ["f", "b"],
  // Diagnostic: what the rate-limiter call and the D1 session cost, together and each
  // alone, and what the API costs over a raw worker making the same two calls.
  ["bp", "b"],
  ["bl", "b"],
  ["bs", "b"],
  ["c", "bp"],
];

// --------------------------------------------------------------------- slices
interface Slice {
  endpoint: string;
  rps: number;
  latenciesMs: number[];
}

function url(e: Endpoint): string {
  return `http://${HOST}:${e.port}${e.path}`;
}

async function sample(e: Endpoint): Promise<void> {
  const response = await fetch(url(e), {
    method: e.method ?? "GET",
    headers: e.headers ?? {},
    body: e.body ?? null,
  });
  const body = await response.text();
  try {
    e.check(response.status, body, response.headers);
  } catch (err) {
    throw new Error(
      `${e.label}: ${(err as Error).message}\n${response.status} ${body.slice(0, 500)}`,
    );
  }
}

function slice(e: Endpoint, seconds: number): Promise<Slice> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const bad = new Map<number, number>();
    let begun = 0;
    const instance = autocannon(
      {
        url: url(e),
        method: e.method ?? "GET",
        headers: e.headers ?? {},
        ...(e.body ? { body: e.body } : {}),
        connections: CONNECTIONS,
        pipelining: 1,
        duration: seconds,
        timeout: 10,
      },
      (err, result) => {
        if (err) return reject(err);
        const elapsed = (performance.now() - begun) / 1000;
        if (bad.size > 0 || result.errors > 0 || result.timeouts > 0) {
          const codes = [...bad].map(([code, n]) => `${n} x ${code}`).join(", ");
          return reject(
            new Error(
              `${e.label}: non-2xx answers or errors (${codes || "none"}; errors ${result.errors}, timeouts ${result.timeouts}): stopping`,
            ),
          );
        }
        resolve({ endpoint: e.id, rps: latencies.length / elapsed, latenciesMs: latencies });
      },
    );
    begun = performance.now();
    instance.on("response", (_client, status, _bytes, ms) => {
      if (status < 200 || status > 299) bad.set(status, (bad.get(status) ?? 0) + 1);
      latencies.push(ms);
    });
  });
}

// --------------------------------------------------------------------- server
async function startServer(bundle: string, state: string, keyHash: string, canPin: boolean) {
  const command = pinned(
    SERVER_CPU,
    [
      process.execPath,
      path.join(ROOT, "bench", "server.ts"),
      "--bundle",
      bundle,
      "--state",
      state,
      "--key-hash",
      keyHash,
      "--pets",
      String(PETS),
      "--api-port",
      String(PORTS.api),
      "--static-port",
      String(PORTS.static),
      "--raw-port",
      String(PORTS.raw),
    ],
    canPin,
  );
  const child = spawn(command[0] as string, command.slice(1), {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const ready = await new Promise<{ pets: number; maxId: number; seedMs: number }>(
    (resolve, reject) => {
      const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
      const timer = setTimeout(() => reject(new Error("server not ready in 120 s")), 120_000);
      lines.on("line", (line) => {
        if (line.startsWith('{"ready"')) {
          clearTimeout(timer);
          resolve(JSON.parse(line));
        }
      });
      child.once("exit", (code) => reject(new Error(`server exited (${code}) before ready`)));
    },
  );
  return { child, ready };
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

// -------------------------------------------------------------------- figures
interface Ratio {
  target: string;
  base: string;
  median: number;
  min: number;
  max: number;
  /** Median over pairs of 1e6/rps(target) - 1e6/rps(base): server time per request. */
  extraUs: number;
}

interface Results {
  machine: Machine;
  pinned: boolean;
  bundle: Bundle;
  startup: {
    apiMs: number;
    rawMs: number;
    extraMs: number;
    extraMinMs: number;
    extraMaxMs: number;
    pairs: number;
  };
  endpoints: Array<{
    id: string;
    label: string;
    rps: number;
    rpsMin: number;
    rpsMax: number;
    p50: number;
    p99: number;
    n: number;
  }>;
  ratios: Ratio[];
  settings: { pairs: number; sliceSeconds: number; connections: number; pets: number };
  seconds: number;
}

const f0 = (n: number) => Math.round(n).toLocaleString("en");
const f2 = (n: number) => n.toFixed(2);
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));

function targets(r: Results) {
  const ratio = (t: string, b: string) => r.ratios.find((x) => x.target === t && x.base === b);
  const cb = ratio("c", "b");
  const dc = ratio("d", "c");
  const dsc = ratio("ds", "cs");
  const rows: Array<[string, string, string, boolean]> = [];
  if (cb) {
    rows.push([
      "listPets throughput >= 0.85x raw D1 worker (c/b)",
      ">= 0.85",
      `${f2(cb.median)} (${f2(cb.min)}-${f2(cb.max)})`,
      cb.median >= 0.85,
    ]);
  }
  const cbp = ratio("c", "bp");
  if (cbp) {
    rows.push([
      "(diagnostic) listPets >= 0.85x raw D1 worker making the same limiter and session calls (c/b+)",
      ">= 0.85",
      `${f2(cbp.median)} (${f2(cbp.min)}-${f2(cbp.max)})`,
      cbp.median >= 0.85,
    ]);
  }
  if (dc && dsc) {
    const worst = Math.min(dc.median, dsc.median);
    rows.push([
      "deep pages within 10% of page 1 (d/c, d'/c')",
      ">= 0.90",
      `${f2(dc.median)}, ${f2(dsc.median)}`,
      worst >= 0.9,
    ]);
  }
  rows.push([
    "auth adds no D1 query in steady state",
    "0 queries",
    "0 (test/perf-auth-cache.test.ts, npm test)",
    true,
  ]);
  rows.push([
    `bundle <= ${BUNDLE_BUDGET_KIB} KiB gzip`,
    `<= ${BUNDLE_BUDGET_KIB}`,
    `${r.bundle.gzipKiB.toFixed(1)} KiB`,
    r.bundle.gzipKiB <= BUNDLE_BUDGET_KIB,
  ]);
  rows.push([
    `start-up <= +${STARTUP_BUDGET_MS} ms over a raw worker`,
    `<= +${STARTUP_BUDGET_MS}`,
    `+${ms(r.startup.extraMs)} ms (${ms(r.startup.extraMinMs)} to ${ms(r.startup.extraMaxMs)})`,
    r.startup.extraMs <= STARTUP_BUDGET_MS,
  ]);
  return rows;
}

function markdown(r: Results): string {
  const m = r.machine;
  const lines: string[] = [];
  lines.push(
    `Run ${m.date}: ${m.cpus} CPUs (${m.cpuModel}), ${m.os}, load average before the run ${m.loadAverage}; Node ${m.node}, wrangler ${m.wrangler}, miniflare ${m.miniflare}, workerd ${m.workerd}, autocannon ${m.autocannon}.`,
    `Server pinned to CPU ${SERVER_CPU}, load generator to CPU ${LOADGEN_CPU}: ${r.pinned ? "yes" : "NO (taskset unavailable): figures are less reliable"}. ${r.settings.pairs} ABBA pairs of ${r.settings.sliceSeconds} s slices per comparison, ${r.settings.connections} connections, ${f0(r.settings.pets)} pets; whole run ${Math.round(r.seconds)} s.`,
    "",
    "### Targets",
    "",
    "| target | budget | measured | |",
    "|---|---|---|---|",
    ...targets(r).map(
      ([name, budget, got, pass]) =>
        `| ${name} | ${budget} | ${got} | ${pass ? "met" : "**missed**"} |`,
    ),
    "",
    "### Ratios (throughput, medians over back-to-back pairs)",
    "",
    "| ratio | median | range | extra server time per request |",
    "|---|---|---|---|",
    ...r.ratios.map(
      (x) =>
        `| ${x.target}/${x.base} | ${f2(x.median)} | ${f2(x.min)}-${f2(x.max)} | ${x.extraUs >= 0 ? "+" : ""}${f0(x.extraUs)} us |`,
    ),
    "",
    "### Endpoints",
    "",
    "| endpoint | req/s (median of slices) | range | p50 ms | p99 ms | requests |",
    "|---|---|---|---|---|---|",
    ...r.endpoints.map(
      (e) =>
        `| ${e.label} | ${f0(e.rps)} | ${f0(e.rpsMin)}-${f0(e.rpsMax)} | ${ms(e.p50)} | ${ms(e.p99)} | ${f0(e.n)} |`,
    ),
    "",
    `p50/p99: exact percentiles of every response's latency as autocannon timed it (no histogram, no coordinated-omission padding), pooled over the endpoint's slices.`,
    "",
    "### Bundle and start-up",
    "",
    `- Bundle (\`wrangler deploy --dry-run\`, minified, OpenAPI document and docs page included): ${(r.bundle.bytes / 1024).toFixed(1)} KiB, **${r.bundle.gzipKiB.toFixed(1)} KiB gzip** (zlib level 9; wrangler says "${r.bundle.wranglerSays ?? "?"}"). Budget ${BUNDLE_BUDGET_KIB} KiB gzip, enforced by \`npm run bench:size\`.`,
    `- Start-up (spawn \`workerd serve\` to first 200 on GET /, median of ${r.startup.pairs} ABBA pairs): API ${ms(r.startup.apiMs)} ms, raw worker ${ms(r.startup.rawMs)} ms, **extra +${ms(r.startup.extraMs)} ms** (pairs ranged ${ms(r.startup.extraMinMs)} to ${ms(r.startup.extraMaxMs)} ms). Budget +${STARTUP_BUDGET_MS} ms.`,
  );
  return lines.join("\n");
}

function writeDoc(r: Results): void {
  const previous = existsSync(DOC) ? readFileSync(DOC, "utf8") : "";
  const a = previous.indexOf(NOTES_START);
  const b = previous.indexOf(NOTES_END);
  const notes =
    a >= 0 && b > a
      ? previous.slice(a, b + NOTES_END.length)
      : `${NOTES_START}\n## Notes\n\n(Hand-written analysis goes here; npm run bench keeps this section.)\n${NOTES_END}`;
  const doc = `# Performance at the edge

This file is rewritten by \`npm run bench\` (bench/run.ts); only the Notes section at the
end is kept from one run to the next. The figures are local: workerd with a local D1
(SQLite on this machine), so they compare the API with baselines on the same runtime;
they do not predict production latency.

## How to run

\`\`\`sh
npm install
npm run bench          # about 6 minutes on 2 cores; writes this file
npm run bench:size     # the bundle-size check alone (CI): fails above ${BUNDLE_BUDGET_KIB} KiB gzip
\`\`\`

Knobs: \`BENCH_PAIRS\` (${6}), \`BENCH_SLICE_SECONDS\` (${2}), \`BENCH_CONNECTIONS\` (${10}),
\`BENCH_STARTUP_PAIRS\` (${20}). Needs Linux \`taskset\` for pinning (util-linux); without it
the run still completes and says it was not pinned. Ports 8781-8784 on 127.0.0.1;
scratch files in \`bench/.out/\` (git-ignored).

## What it measures

- **Server**: \`bench/server.ts\`, pinned to CPU ${SERVER_CPU}: one Node process running miniflare
  (the version wrangler uses), one workerd, three workers on direct sockets
  (\`unsafeDirectSockets\`: no front-end worker, no \`wrangler dev\`, which is 13-45x slower):
  the API as deployed (\`wrangler deploy --dry-run\` bundle, wrangler.toml's top-level
  bindings, rate limiter kept in the path with an unreachable limit, per-request log lines
  discarded by the host), (a) a bare worker answering a static 20-pet JSON array, and
  (b) a bare worker running listPets' SQL (\`LIST_PETS_SQL\` from src/db/pets.ts) on the
  same D1 with no validation, auth or headers; its diagnostic variants add only the
  per-request platform calls the API makes: (b+) the rate-limiter call and the D1 session
  (with its bookmark), (b+l) the limiter alone, (b+s) the session alone. Locally both are
  emulated by miniflare (the limiter is a Durable Object writing SQLite on every call), so
  their cost here says little about production. D1 is created fresh with ${f0(PETS)} pets
  (one recursive-CTE INSERT) and one API key.
- **Load**: autocannon (npm), in bench/run.ts pinned to CPU ${LOADGEN_CPU}, ${CONNECTIONS} connections, no
  compression. Each comparison X/Y runs as pairs of slices back to back, alternating
  the order (Y X, X Y, ...), after one warm-up slice per endpoint; a ratio is the median
  of the pairs' throughput ratios, with its range. Any non-2xx answer stops the run.
- (c) \`GET /v1/pets\`; (c') \`GET /v1/pets?status=available\`; (d) \`GET /v1/pets?cursor=…\` after
  id ${f0(DEEP_AFTER)}; (d') the same with \`status=available\`, compared with (c'); (e) \`POST /v1/pets\`; (f) \`GET /v1/pets/50000\`, all with a valid key.
- Absolute figures on a shared machine drift 15-30% between runs; ratios taken back to
  back repeat within a few percent. Read the ratios.

## Latest run

${markdown(r)}

${notes}
`;
  mkdirSync(path.dirname(DOC), { recursive: true });
  writeFileSync(DOC, doc);
  // The project's formatter owns markdown too: leave the file as `npm run lint` wants it.
  spawnSync(path.join(ROOT, "node_modules", ".bin", "biome"), ["format", "--write", DOC], {
    stdio: "ignore",
  });
}

// ----------------------------------------------------------------------- main
async function main() {
  const canPin = hasTaskset();
  const facts = machine();
  if (canPin && !pinSelf(LOADGEN_CPU)) log("warning: could not pin the load generator");
  if (!canPin) log("warning: taskset not found; running unpinned");
  const plannedS = COMPARISONS.length * PAIRS * 2 * SLICE_S + 7 * SLICE_S;
  log(
    `plan: ${COMPARISONS.length} comparisons x ${PAIRS} pairs x 2 slices x ${SLICE_S} s = ~${Math.round(plannedS)} s of load`,
  );

  const buildDir = path.join(OUT, "build");
  const state = path.join(OUT, "state");
  rmSync(buildDir, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
  log("building the worker (wrangler deploy --dry-run)");
  const bundle = buildBundle(buildDir);
  log(`bundle: ${(bundle.bytes / 1024).toFixed(1)} KiB, ${bundle.gzipKiB.toFixed(1)} KiB gzip`);

  const key = generateApiKey();
  log(`starting the server on CPU ${SERVER_CPU}, seeding ${f0(PETS)} pets`);
  const { child, ready } = await startServer(bundle.file, state, await hashApiKey(key), canPin);
  const all: Slice[] = [];
  const ratios: Ratio[] = [];
  try {
    log(
      `server ready: ${f0(ready.pets)} pets (max id ${ready.maxId}), seeded in ${ready.seedMs} ms`,
    );
    if (ready.pets < PETS) throw new Error("the database was not seeded");
    const eps = await endpoints(key);
    for (const e of Object.values(eps)) await sample(e);
    log("warm-up");
    for (const e of Object.values(eps)) await slice(e, SLICE_S);

    for (const [t, b] of COMPARISONS) {
      const target = eps[t] as Endpoint;
      const base = eps[b] as Endpoint;
      const pairs: Array<{ t: Slice; b: Slice }> = [];
      for (let i = 0; i < PAIRS; i++) {
        const order = i % 2 === 0 ? [base, target] : [target, base];
        const got: Record<string, Slice> = {};
        for (const e of order) {
          const s = await slice(e, SLICE_S);
          got[e.id] = s;
          all.push(s);
        }
        pairs.push({ t: got[t] as Slice, b: got[b] as Slice });
      }
      const rs = pairs.map((p) => p.t.rps / p.b.rps);
      const ratio: Ratio = {
        target: t,
        base: b,
        median: median(rs),
        min: Math.min(...rs),
        max: Math.max(...rs),
        extraUs: median(pairs.map((p) => 1e6 / p.t.rps - 1e6 / p.b.rps)),
      };
      ratios.push(ratio);
      log(
        `${t}/${b}: ${f2(ratio.median)} (${f2(ratio.min)}-${f2(ratio.max)}), ${ratio.extraUs >= 0 ? "+" : ""}${f0(ratio.extraUs)} us/request`,
      );
    }
    // The answers are still right after the load (e.g. no 429, no 503).
    for (const e of Object.values(eps)) await sample(e);
  } finally {
    await stopServer(child);
  }

  log("start-up: workerd serve -> first response, API vs raw worker");
  const startupCmd = pinned(
    SERVER_CPU,
    [
      process.execPath,
      path.join(ROOT, "bench", "startup.ts"),
      "--bundle",
      bundle.file,
      "--port",
      String(PORTS.startup),
      "--pairs",
      String(STARTUP_PAIRS),
    ],
    canPin,
  );
  const su = spawnSync(startupCmd[0] as string, startupCmd.slice(1), { encoding: "utf8" });
  if (su.status !== 0) throw new Error(`startup measurement failed:\n${su.stdout}${su.stderr}`);
  const startup = JSON.parse(su.stdout.trim().split("\n").at(-1) as string) as Results["startup"];

  const eps = await endpoints(key);
  const results: Results = {
    machine: facts,
    pinned: canPin,
    bundle,
    startup,
    ratios,
    endpoints: Object.values(eps).map((e) => {
      const slices = all.filter((s) => s.endpoint === e.id);
      const latencies = Float64Array.from(slices.flatMap((s) => s.latenciesMs)).sort();
      const rps = slices.map((s) => s.rps);
      return {
        id: e.id,
        label: e.label,
        rps: median(rps),
        rpsMin: Math.min(...rps),
        rpsMax: Math.max(...rps),
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        n: latencies.length,
      };
    }),
    settings: { pairs: PAIRS, sliceSeconds: SLICE_S, connections: CONNECTIONS, pets: PETS },
    seconds: (performance.now() - startedAt) / 1000,
  };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(path.join(OUT, "results.json"), JSON.stringify(results, null, 2));
  const table = markdown(results);
  writeFileSync(path.join(OUT, "results.md"), `${table}\n`);
  writeDoc(results);
  console.log(`\n${table}\n`);
  log(`wrote ${path.relative(ROOT, DOC)} and bench/.out/results.{md,json}`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
