// Shared by the benchmarks: paths, ports and budgets, the bundle build and its gzip size,
// CPU pinning, machine facts, the benchmark's local D1, the server process
// (bench/server.ts), and timed slices of load (autocannon) against one endpoint, on
// 127.0.0.1 only.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import autocannon from "autocannon";
import { wrangler } from "../scripts/wrangler.ts";
import { hashApiKey, issueApiKey, LOCAL_KEY_TAG_SECRET } from "../src/auth/keys.ts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const OUT = path.join(ROOT, "bench", ".out");
export const HOST = "127.0.0.1";
/** The sockets of bench/server.ts, and the one bench/startup.ts serves on. */
export const PORTS = { api: 8781, static: 8782, raw: 8783, startup: 8784, apiD1: 8785 };
/** The server runs on one CPU, the load generator on the other. */
export const SERVER_CPU = 1;
export const LOADGEN_CPU = 0;

/** Budget of issue 20: the minified bundle, gzip, in KiB. */
export const BUNDLE_BUDGET_KIB = 32;
/** Budget of issue 4: start-up time over a raw worker, in ms. */
export const STARTUP_BUDGET_MS = 40;

const startedAt = performance.now();
/** Seconds since the run began. */
export const seconds = () => (performance.now() - startedAt) / 1000;
/** A line of progress, after the seconds since the run began. */
export function log(message: string): void {
  console.log(`[${seconds().toFixed(0).padStart(4)}s] ${message}`);
}

export const f0 = (n: number) => Math.round(n).toLocaleString("en");
export const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));

/**
 * `wrangler deploy --dry-run` of the top-level (local) configuration into `outdir`: the
 * worker, or `entry` instead of wrangler.toml's main.
 */
export function buildBundle(outdir: string, entry?: string) {
  const args = ["deploy", "--dry-run", "--env=", "--outdir", outdir, ...(entry ? [entry] : [])];
  const output = wrangler(args, { capture: true, ci: true });
  const file = path.join(outdir, entry ? `${path.basename(entry, ".ts")}.js` : "index.js");
  return {
    file,
    ...sizeOf(file),
    /** wrangler's own "Total Upload: ... / gzip: ..." line, for reference. */
    wranglerSays: /Total Upload:[^\n]*/.exec(output)?.[0].trim(),
  };
}

/** A bundle's size: minified bytes, and KiB gzip (zlib level 9). */
export function sizeOf(file: string) {
  const code = readFileSync(file);
  return { bytes: code.byteLength, gzipKiB: gzipSync(code, { level: 9 }).byteLength / 1024 };
}
export type Bundle = ReturnType<typeof buildBundle>;

/**
 * Prints `section` and rewrites with it a generated section of `doc` (a path in the
 * repository): from the line holding `<!-- NAME:start` to `<!-- NAME:end -->`, NAME
 * `measured` unless given. Keeps the rest as written by hand, and leaves the file as
 * `npm run lint` wants it (the project's formatter owns markdown too).
 */
export function writeMeasured(doc: string, section: string, name = "measured"): void {
  console.log(`\n${section}\n`);
  const file = path.join(ROOT, doc);
  const text = readFileSync(file, "utf8");
  const marker = text.indexOf(`<!-- ${name}:start`);
  const start = text.indexOf("\n", marker);
  const end = text.indexOf(`<!-- ${name}:end -->`);
  if (marker < 0 || start < 0 || end < start) {
    throw new Error(`${doc} has no ${name}:start/end markers`);
  }
  writeFileSync(file, `${text.slice(0, start)}\n\n${section}\n\n${text.slice(end)}`);
  const biome = path.join(ROOT, "node_modules", ".bin", "biome");
  spawnSync(biome, ["format", "--write", file], { stdio: "ignore" });
  log(`wrote ${doc} (${name} section)`);
}

/** Whether `taskset` (util-linux) is here to pin processes to CPUs. */
export const canPin = spawnSync("taskset", ["-V"], { stdio: "ignore" }).status === 0;

/** Pins this process (all its threads) to `cpu`; false when it could not. */
function pinSelf(cpu: number): boolean {
  const args = ["-a", "-p", "-c", String(cpu), String(process.pid)];
  return spawnSync("taskset", args, { stdio: "ignore" }).status === 0;
}

/** `[command, ...args]` prefixed with `taskset -c cpu` when pinning is possible. */
export function pinned(cpu: number, command: string[]): string[] {
  return canPin ? ["taskset", "-c", String(cpu), ...command] : command;
}

const versionOf = (pkg: string): string => createRequire(ROOT)(`${pkg}/package.json`).version;

/** What a run was measured on (call it before pinning: CPUs are counted by affinity). */
function machine() {
  const bin = path.join(ROOT, "node_modules", ".bin", "workerd");
  const workerd = spawnSync(bin, ["--version"], { encoding: "utf8" });
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    wrangler: versionOf("wrangler"),
    miniflare: versionOf("miniflare"),
    workerd: `${versionOf("workerd")} (${workerd.stdout?.trim() || "?"})`,
    autocannon: versionOf("autocannon"),
    loadAverage: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", "),
  };
}

// ---------------------------------------------------------------- the local D1
/** What the preparation needs of a D1 database (miniflare's, seen from Node). */
type Database = Pick<D1Database, "prepare">;

/**
 * Inserts `n` more pets (one recursive-CTE statement), the i-th pet of the table named
 * `pet-<i>`, category 1 + i % 7, statuses in turn. `nameOf` replaces the name expression
 * (SQL over `i`).
 */
export async function addPets(db: Database, n: number, nameOf = "'pet-' || i") {
  const count = (await db.prepare("SELECT count(*) AS n FROM pets").first<{ n: number }>())?.n ?? 0;
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT CAST(?1 AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO pets (name, category_id, status, created_at)
       SELECT ${nameOf}, 1 + i % 7,
              CASE i % 3 WHEN 0 THEN 'sold' WHEN 1 THEN 'available' ELSE 'pending' END,
              1700000000 + i
       FROM n`,
    )
    .bind(count + 1, count + n)
    .run();
}

/** Makes the key with this SHA-256 hash (hex) a valid key with every scope; returns its id. */
export async function addKey(db: Database, keyHash: string): Promise<number> {
  const row = await db
    .prepare(
      `INSERT INTO api_keys (key_hash, prefix, label, created_at) VALUES (?1, 'psk_bench', 'bench', unixepoch())
       RETURNING id`,
    )
    .bind(keyHash)
    .first<{ id: number }>();
  if (!row) throw new Error("the key was not stored");
  return row.id;
}

// ------------------------------------------------------------------------ load
/** Throws (node:assert) unless one answer's body and headers are what they must be. */
export type Check = (body: string, headers: Headers) => void;

/** One request the load generator repeats, and what every answer to it must be. */
export interface Endpoint {
  id: string;
  label: string;
  port: number;
  path: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** The status every answer must have: 200 unless given. */
  status?: number;
  /** Each request gets a fresh unique id wherever `[<id>]` stands (e.g. an Idempotency-Key). */
  uniqueIds?: boolean;
  /** What a sample answer's whole body and headers must be. */
  checks?: Check[];
  /** What every answer must be, in slices too: a cheap check (e.g. no cache miss on a hit row). */
  each?: Check;
}

const url = (e: Endpoint) => `http://${HOST}:${e.port}${e.path}`;

/** One answer of `e`, checked; throws with the status and the start of the body. */
export async function sample(e: Endpoint): Promise<{ body: string; headers: Headers }> {
  const { method = "GET", headers = {}, body = null } = e;
  const response = await fetch(url(e), { method, headers, body });
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

/** A slice whose answers were not all what the endpoint measures; says what they were. */
export class BadAnswers extends Error {}

const headersOf = (raw: IncomingHttpHeaders = {}) =>
  new Headers(
    Object.entries(raw).flatMap(([name, v]) => (v === undefined ? [] : [[name, `${v}`]])),
  );

/**
 * `seconds` of closed-loop load on `e` with `connections` connections: its throughput and
 * every latency. Rejects with BadAnswers when any answer has another status than the
 * endpoint's, fails its `each` check, or errs or times out: the message counts them by
 * status and quotes the first few bodies, with the time, so a failure says what it was.
 */
export async function slice(e: Endpoint, seconds: number, connections: number) {
  const latencies: number[] = [];
  const bad = new Map<string, number>();
  const examples: string[] = [];
  const done = Promise.withResolvers<autocannon.Result>();
  const instance = autocannon(
    {
      url: url(e),
      requests: [
        {
          method: e.method ?? "GET",
          headers: e.headers ?? {},
          ...(e.body ? { body: e.body } : {}),
          onResponse: (status, body, _context, headers) => {
            let wrong: string;
            try {
              assert.equal(status, e.status ?? 200, `status ${status}`);
              return e.each?.(body, headersOf(headers));
            } catch (err) {
              wrong = (err as Error).message;
            }
            bad.set(wrong, (bad.get(wrong) ?? 0) + 1);
            if (examples.length < 3) examples.push(`${status} ${body.slice(0, 600)}`);
          },
        },
      ],
      idReplacement: e.uniqueIds ?? false,
      connections,
      pipelining: 1,
      duration: seconds,
      timeout: 10,
    },
    (err, result) => (err ? done.reject(err) : done.resolve(result)),
  );
  const begun = performance.now();
  instance.on("response", (_client, _status, _bytes, ms) => {
    latencies.push(ms);
  });
  const result = await done.promise;
  const elapsed = (performance.now() - begun) / 1000;
  if (bad.size > 0 || result.errors > 0 || result.timeouts > 0) {
    const counts = [...bad].map(([what, n]) => `${n} x ${what}`).join(", ");
    throw new BadAnswers(
      `${e.label}: ${counts || "no bad answer"}; connection errors ${result.errors}, timeouts ${result.timeouts} (slice ended ${new Date().toISOString()})${examples.map((x) => `\n    ${x}`).join("")}`,
    );
  }
  return { endpoint: e.id, rps: latencies.length / elapsed, latenciesMs: latencies };
}
export type Slice = Awaited<ReturnType<typeof slice>>;

// ---------------------------------------------------------------------- server
/**
 * Refuses to go on while another run holds the benchmark's ports: its server's D1 and
 * rate-limiter files must not be touched (docs/performance.md, "How to run").
 */
export async function requireFreePorts(ports: number[]): Promise<void> {
  const inUse = (port: number) =>
    new Promise<boolean>((resolve) => {
      const probe = createServer().once("error", () => resolve(true));
      probe.listen(port, HOST, () => probe.close(() => resolve(false)));
    });
  const taken = await Promise.all(ports.map(inUse));
  const busy = ports.filter((_, i) => taken[i]);
  if (busy.length > 0) {
    throw new Error(
      `port(s) ${busy.join(", ")} on ${HOST} in use: another npm run bench or bench:capacity is running (or its server was left behind); stop it first`,
    );
  }
}

/**
 * A fresh scratch directory of this run under bench/.out (`<name>-XXXXXX`): no other run
 * deletes or reuses it, so a server's SQLite files never disappear under it.
 */
export function runDirectory(name: string): string {
  mkdirSync(OUT, { recursive: true });
  return mkdtempSync(path.join(OUT, `${name}-`));
}

/**
 * The start of npm run bench and bench:capacity: the machine's facts (before pinning),
 * this process pinned to LOADGEN_CPU, the ports checked free, the run's own scratch
 * directory (the server's D1 and rate-limiter files live there, and no other run can
 * delete them), and in it the worker built as it deploys.
 */
export async function begin(name: string) {
  const facts = machine();
  if (!canPin) log("warning: taskset not found; running unpinned");
  else if (!pinSelf(LOADGEN_CPU)) log("warning: could not pin the load generator");
  await requireFreePorts(Object.values(PORTS));
  const scratch = runDirectory(name);
  log("building the worker (wrangler deploy --dry-run)");
  const bundle = buildBundle(path.join(scratch, "build"));
  log(`bundle: ${(bundle.bytes / 1024).toFixed(1)} KiB, ${bundle.gzipKiB.toFixed(1)} KiB gzip`);
  return { facts, scratch, bundle };
}

/** What bench/server.ts is started with, as one JSON argument. */
export type ServerOptions = { bundle: string; state: string; keyHash: string; pets: number };

/**
 * Runs `work` while bench/server.ts (pinned to SERVER_CPU when possible) serves `bundle`
 * over a fresh D1 under `state` holding `pets` pets and a new API key, which `work` gets.
 */
export async function withServer<T>(
  options: Omit<ServerOptions, "keyHash">,
  work: (key: string, ready: { pets: number; maxId: number; seedMs: number }) => Promise<T>,
): Promise<T> {
  const key = await issueApiKey(LOCAL_KEY_TAG_SECRET);
  const argument = JSON.stringify({ ...options, keyHash: await hashApiKey(key) });
  const server = path.join(ROOT, "bench", "server.ts");
  const [file = "", ...args] = pinned(SERVER_CPU, [process.execPath, server, argument]);
  // Its stdin stays open: the server exits when this process does.
  const child = spawn(file, args, { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  try {
    let ready: Parameters<typeof work>[1] | undefined;
    for await (const line of createInterface({ input: child.stdout })) {
      if (line.startsWith('{"ready"')) {
        ready = JSON.parse(line);
        break;
      }
    }
    clearTimeout(timer);
    child.stdout.resume(); // nothing more is read from it
    if (!ready) throw new Error(`the server was not ready in 120 s (exit ${child.exitCode})`);
    return await work(key, ready);
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(kill);
    }
  }
}
