// What the benches share: ports, budgets, the built bundle, miniflare over a local D1 with its
// workerd pinned, checked slices of load (autocannon), the machine's facts, and the generated
// sections of docs/ (docs/performance.md, "What it measures").
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import autocannon from "autocannon";
import { convertV4MiniflareOptions, Miniflare, type V4WorkerOptionsShape } from "miniflare";
import { median } from "simple-statistics";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { wrangler } from "../scripts/wrangler.ts";
import { hashApiKey, issueApiKey, LOCAL_KEY_TAG_SECRET } from "../src/auth/keys.ts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const HOST = "127.0.0.1";
export const WORKERD = path.join(ROOT, "node_modules/.bin/workerd");
/** BENCH_PORT (8781) and the six after it: the served workers' sockets (bench:edge: its six isolates', from BENCH_PORT on). */
const BASE = Number(process.env.BENCH_PORT ?? 8781);
export const PORTS = {
  api: BASE,
  static: BASE + 1,
  raw: BASE + 2,
  startup: BASE + 3,
  apiD1: BASE + 4,
  rawD1: BASE + 5,
  mcpFloor: BASE + 6,
};
/** workerd runs on one CPU, this process (the load generator) on the other. */
export const SERVER_CPU = 1;
export const LOADGEN_CPU = 0;
/**
 * Budgets: the minified bundle in KiB gzip (issue 20; 32 until updatePet and deletePet, which
 * with If-Match and the pet's tag in SQL added 2.1 KiB), start-up over a raw worker in ms (issue 4).
 */
export const BUNDLE_BUDGET_KIB = 33;
export const STARTUP_BUDGET_MS = 40;

const startedAt = performance.now();
export const seconds = () => (performance.now() - startedAt) / 1000;
export const log = (message: string) =>
  console.log(`[${seconds().toFixed(0).padStart(4)}s] ${message}`);
export const f0 = (n: number) => Math.round(n).toLocaleString("en");
export const f1 = (n: number) => n.toFixed(1);
export const f2 = (n: number) => n.toFixed(2);
export const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
export const sleep = (n: number) => new Promise((resolve) => setTimeout(resolve, n));

/** Median and range of `xs`, and `median (min-max)` written with `f`. */
export function spread(xs: number[], f = ms) {
  const [m, min, max] = [median(xs), Math.min(...xs), Math.max(...xs)];
  return { median: m, min, max, text: `${f(m)} (${f(min)}-${f(max)})` };
}

/** `pairs` pairs of `a(i)` and `b(i)` back to back, in ABBA order so drift cancels. */
export async function abba<T>(pairs: number, a: (i: number) => Promise<T>, b: typeof a) {
  const out: Array<[T, T]> = [];
  for (let i = 0; i < pairs; i++) {
    const [x, y] = i % 2 === 0 ? [await a(i), await b(i)] : [await b(i), await a(i)].reverse();
    out.push([x as T, y as T]);
  }
  return out;
}

/** A Markdown table: its header (`| a | b |`), the rule under it, its rows. */
export const table = (header: string, rows: string[]) =>
  [header, header.replace(/[^|]+/g, "---"), ...rows].join("\n");

/** `wrangler deploy --dry-run` of the top level (or of `entry`) into `outdir`, and its size. */
export function buildBundle(outdir: string, entry?: string) {
  const args = ["deploy", "--dry-run", "--env=", "--outdir", outdir, ...(entry ? [entry] : [])];
  const output = wrangler(args, { capture: true, ci: true });
  const file = path.join(outdir, entry ? `${path.basename(entry, ".ts")}.js` : "index.js");
  return { file, ...sizeOf(file), wranglerSays: /Total Upload:[^\n]*/.exec(output)?.[0].trim() };
}

/** Minified bytes and KiB gzip (zlib level 9). */
export function sizeOf(file: string) {
  const code = readFileSync(file);
  return { bytes: code.byteLength, gzipKiB: gzipSync(code, { level: 9 }).byteLength / 1024 };
}
export const sizeText = (s: { bytes: number; gzipKiB: number }) =>
  `${f1(s.bytes / 1024)} KiB minified, ${f1(s.gzipKiB)} KiB gzip`;

/** Prints `section` and puts it between `doc`'s NAME markers, formatted as `npm run lint` wants. */
export function writeMeasured(doc: string, section: string, name = "measured"): void {
  console.log(`\n${section}\n`);
  const file = path.join(ROOT, doc);
  const text = readFileSync(file, "utf8");
  const start = text.indexOf("\n", text.indexOf(`<!-- ${name}:start`));
  const end = text.indexOf(`<!-- ${name}:end -->`);
  if (!text.includes(`<!-- ${name}:start`) || end < start)
    throw new Error(`${doc}: no ${name} markers`);
  writeFileSync(file, `${text.slice(0, start)}\n\n${section}\n\n${text.slice(end)}`);
  const biome = path.join(ROOT, "node_modules/.bin/biome");
  spawnSync(biome, ["format", "--write", file], { stdio: "ignore" });
  log(`wrote ${doc} (${name} section)`);
}

/** Whether `taskset` is here; `[command, ...args]` pinned to `cpu` when it is. */
export const canPin = spawnSync("taskset", ["-V"], { stdio: "ignore" }).status === 0;
export const pinned = (cpu: number, command: string[]) =>
  canPin ? ["taskset", "-c", String(cpu), ...command] : command;
/** Pins process `pid` (all its threads) to `cpu`; false when it could not. */
const pin = (pid: number | string, cpu: number) =>
  canPin &&
  spawnSync("taskset", ["-a", "-p", "-c", `${cpu}`, `${pid}`], { stdio: "ignore" }).status === 0;

const versionOf = (pkg: string): string => createRequire(ROOT)(`${pkg}/package.json`).version;

/** A run's start: its ports free, a scratch directory, the machine's facts, pinned (`pinSelf`). */
export async function begin(name: string, ports: number[], pinSelf = true) {
  const free = (port: number) =>
    new Promise((resolve) => {
      const probe = createServer().once("error", () => resolve(false));
      probe.listen(port, HOST, () => probe.close(() => resolve(true)));
    });
  const busy = [];
  for (const port of ports) if (!(await free(port))) busy.push(port);
  if (busy.length > 0) {
    throw new Error(
      `port(s) ${busy.join(", ")} on ${HOST} in use: another bench is running (or its server was left behind); stop it, or move this run with BENCH_PORT`,
    );
  }
  mkdirSync(path.join(ROOT, "bench/.out"), { recursive: true });
  const scratch = mkdtempSync(path.join(ROOT, "bench/.out", `${name}-`));
  const workerd = spawnSync(WORKERD, ["--version"], { encoding: "utf8" });
  const load = os.loadavg().map((l) => l.toFixed(2));
  const facts = {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    line: `${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? "unknown"}), ${os.type()} ${os.release()} ${os.arch()}, load average before the run ${load.join(", ")}; Node ${process.version}, wrangler ${versionOf("wrangler")}, miniflare ${versionOf("miniflare")}, workerd ${versionOf("workerd")} (${workerd.stdout?.trim() || "?"}), autocannon ${versionOf("autocannon")}`,
  };
  if (pinSelf && !pin(process.pid, LOADGEN_CPU)) log("warning: the load generator is not pinned");
  return { facts, scratch };
}

type Database = Pick<D1Database, "prepare">;

/** Inserts `n` more pets (`pet-<i>` unless `nameOf`, SQL over i), categories and statuses in turn. */
export async function addPets(db: Database, n: number, nameOf = "'pet-' || i") {
  const count = (await db.prepare("SELECT count(*) AS n FROM pets").first<{ n: number }>())?.n ?? 0;
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT CAST(?1 AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO pets (name, category_id, status, created_at)
       SELECT ${nameOf}, 1 + i % 7,
              CASE i % 3 WHEN 0 THEN 'sold' WHEN 1 THEN 'available' ELSE 'pending' END, 1700000000 + i
       FROM n`,
    )
    .bind(count + 1, count + n)
    .run();
}

/** A new key with every scope, stored in `db`, and its id. */
export async function newKey(db: Database): Promise<{ key: string; id: number }> {
  const key = await issueApiKey(LOCAL_KEY_TAG_SECRET);
  const row = await db
    .prepare(
      `INSERT INTO api_keys (key_hash, prefix, label, created_at)
       VALUES (?1, 'psk_bench', 'bench', unixepoch()) RETURNING id`,
    )
    .bind(await hashApiKey(key))
    .first<{ id: number }>();
  assert.ok(row, "the key was not stored");
  return { key, id: row.id };
}

/**
 * wrangler.toml's top level for the built bundle, without [assets] (miniflare would put its
 * asset router before every request) and with limits a load cannot reach; the MCP binding
 * only with `mcp` (then serve scripts/mcp-worker.ts's worker too).
 */
export function apiWorkerOptions(bundle: string, { mcp = false } = {}) {
  const { assets, serviceBindings, ...options } = unstable_getMiniflareWorkerOptions(
    path.join(ROOT, "wrangler.toml"),
  ).workerOptions as V4WorkerOptionsShape;
  const limit = { limit: 1_000_000_000, period: 60 as const };
  return {
    ...options,
    ...(mcp ? { serviceBindings } : {}),
    ratelimits: Object.fromEntries(
      Object.entries(options.ratelimits ?? {}).map(([name, c]) => [name, { ...c, simple: limit }]),
    ),
    cronTriggers: [],
    modulesRoot: path.dirname(bundle),
    modules: [{ type: "ESModule" as const, path: bundle }],
  };
}

/** A worker's own socket on HOST. */
export const socket = (port: number) => ({ unsafeDirectSockets: [{ host: HOST, port }] });
/** `api` with its socket on `port`, which is then its address (API_ORIGINS: /mcp serves it alone). */
export const servedAt = (api: ReturnType<typeof apiWorkerOptions>, port: number) => ({
  ...api,
  bindings: { ...api.bindings, API_ORIGINS: `http://${HOST}:${port}` },
  ...socket(port),
});
/** `api` as `name` with the edge cache (PORTS.api) and as `name`-d1 without it (PORTS.apiD1). */
export const cachedAndNot = (api: ReturnType<typeof apiWorkerOptions>, name: string) => [
  { ...servedAt(api, PORTS.api), name },
  { ...servedAt(api, PORTS.apiD1), name: `${name}-d1`, cacheAPI: false },
];

/** Miniflare, fixed request.cf, over the migrated local D1 in `state`; pinned with `pinServer`. */
export async function serve(
  state: string,
  options: Parameters<typeof convertV4MiniflareOptions>[0],
  pinServer = true,
) {
  const migrate = ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state];
  wrangler(migrate, { capture: true, ci: true });
  let shown = 0;
  const problem = (level: string, message: string) => {
    if (++shown <= 20)
      process.stderr.write(`[server ${new Date().toISOString()}] ${level}: ${message}\n`);
  };
  const before = new Set(workerdChildren());
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      ...{ host: HOST, port: 0, logRequests: false },
      cf: { colo: "LHR", country: "GB", asn: 64512, httpProtocol: "HTTP/1.1" },
      resourcePersistencePath: path.join(state, "v3"),
      handleStructuredLogs: ({ level, message }) => {
        if (/^(error|warn)$/.test(level) || /"level":"(error|warn)"/.test(message))
          problem(level, message);
      },
      handleUncaughtError: (error: Error) =>
        problem("error", `miniflare: ${error.stack ?? error.message}`),
      ...options,
    }),
  );
  await mf.ready;
  const pid = workerdChildren().find((p) => !before.has(p));
  if (pid) workerds.set(mf, pid);
  if (pinServer) {
    const pids = workerdChildren();
    if (pids.length === 0 || !pids.every((p) => pin(p, SERVER_CPU)))
      log("warning: workerd is not pinned");
  }
  return mf;
}

const workerdChildren = () =>
  spawnSync("pgrep", ["-P", `${process.pid}`, "workerd"], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean);
/** Whether this machine counts each thread's CPU time (Linux's /proc): side by side needs it. */
export const canCountCpu = existsSync("/proc/self/task");
/** The workerd process of each miniflare that `serve` started. */
const workerds = new WeakMap<Miniflare, string>();

/**
 * The CPU time, in ms, that the workerd of `mf` (all its threads) has had so far: the
 * scheduler's own count (/proc/<pid>/task/<tid>/schedstat), which sharing the CPU does not change.
 */
export function cpuMs(mf: Miniflare): number {
  const pid = workerds.get(mf);
  if (pid === undefined) throw new Error("not a miniflare that serve() started");
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    // A thread may end between the listing and the read.
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {}
  }
  return ns / 1e6;
}

/** Throws (node:assert) unless one response's body and headers are what they must be. */
export type Check = (body: string, headers: Headers) => void;

/** One request the load repeats, and what every response to it must be. */
export interface Endpoint {
  id: string;
  label: string;
  port: number;
  path: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** 200 unless given. */
  status?: number;
  /** A fresh id in each request wherever `[<id>]` stands (e.g. an Idempotency-Key). */
  uniqueIds?: boolean;
  /** What a sample response must be; `each`: what every response must be, under load too. */
  checks?: Check[];
  each?: Check;
}

/** One response of `e`, checked; throws with the status and the start of the body. */
export async function sample(e: Endpoint) {
  const { method = "GET", headers = {}, body = null } = e;
  const response = await fetch(`http://${HOST}:${e.port}${e.path}`, { method, headers, body });
  const text = await response.text();
  try {
    assert.equal(response.status, e.status ?? 200, "status");
    for (const check of [...(e.checks ?? []), e.each]) check?.(text, response.headers);
  } catch (err) {
    throw new Error(
      `${e.label}: ${(err as Error).message}\n${response.status} ${text.slice(0, 500)}`,
    );
  }
  return { body: text, headers: response.headers };
}

/** A slice whose responses were not all right; says what they were. */
export class BadResponses extends Error {}

/** `seconds` of closed-loop load on `e`: its rate, every latency; BadResponses for a wrong response. */
export async function slice(e: Endpoint, seconds: number, connections: number) {
  const latencies: number[] = [];
  const bad = new Map<string, number>();
  const examples: string[] = [];
  const onResponse = (status: number, body: string, _: unknown, raw: Record<string, unknown>) => {
    try {
      assert.equal(status, e.status ?? 200, `status ${status}`);
      const headers = Object.entries(raw ?? {}).filter(([, v]) => v !== undefined);
      e.each?.(body, new Headers(headers.map(([name, v]) => [name, `${v}`])));
    } catch (err) {
      const wrong = (err as Error).message;
      bad.set(wrong, (bad.get(wrong) ?? 0) + 1);
      if (examples.length < 3) examples.push(`${status} ${body.slice(0, 600)}`);
    }
  };
  const request = { method: e.method ?? "GET", headers: e.headers ?? {}, body: e.body, onResponse };
  // Without a callback the instance is also a thenable of the result (its types omit one).
  const run = autocannon({
    url: `http://${HOST}:${e.port}${e.path}`,
    requests: [request as autocannon.Request],
    idReplacement: e.uniqueIds ?? false,
    ...{ connections, pipelining: 1, duration: seconds, timeout: 10 },
  }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
  const begun = performance.now();
  run.on("response", (_client, _status, _bytes, time) => latencies.push(time));
  const result = await run;
  const elapsed = (performance.now() - begun) / 1000;
  if (bad.size > 0 || result.errors > 0 || result.timeouts > 0) {
    const counts = [...bad].map(([what, n]) => `${n} x ${what}`).join(", ") || "no bad response";
    throw new BadResponses(
      `${e.label}: ${counts}; connection errors ${result.errors}, timeouts ${result.timeouts} (slice ended ${new Date().toISOString()})${examples.map((x) => `\n    ${x}`).join("")}`,
    );
  }
  return { endpoint: e.id, rps: latencies.length / elapsed, latenciesMs: latencies };
}
export type Slice = Awaited<ReturnType<typeof slice>>;
