// The load harness shared by npm run bench (bench/run.ts) and npm run bench:capacity
// (bench/capacity.ts): the server process (bench/server.ts) and timed slices of load
// (autocannon) against one endpoint, on 127.0.0.1 only.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { createServer } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import { OUT, pinned, ROOT } from "./lib.ts";

export const HOST = "127.0.0.1";

/** One request the load generator repeats, and what every answer to it must be. */
export interface Endpoint {
  id: string;
  label: string;
  port: number;
  path: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** The status every answer must have; any 2xx when absent. */
  status?: number;
  /** Each request gets a fresh unique id wherever `[<id>]` stands (e.g. an Idempotency-Key). */
  uniqueIds?: boolean;
  /** Throws unless one sample answer (status, whole body, headers) is what this endpoint must answer. */
  check(status: number, body: string, headers: Headers): void;
  /**
   * Checked on every answer of a slice (headers with lower-case names): why the answer
   * is not what this endpoint measures (e.g. a cache miss on a hit row), or undefined.
   */
  each?(headers: Record<string, string>): string | undefined;
}

export function url(e: Endpoint): string {
  return `http://${HOST}:${e.port}${e.path}`;
}

/** One answer of `e`, checked; throws with the status and the start of the body. */
export async function sample(e: Endpoint): Promise<{ body: string; headers: Headers }> {
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
  return { body, headers: response.headers };
}

export interface Slice {
  endpoint: string;
  rps: number;
  latenciesMs: number[];
}

/** A slice whose answers were not all what the endpoint measures; says what they were. */
export class BadAnswers extends Error {}

function lowerCased(headers: IncomingHttpHeaders = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = [value].flat().join(", ");
  }
  return out;
}

/**
 * `seconds` of closed-loop load on `e` with `connections` connections. Rejects with
 * BadAnswers when any answer has another status than the endpoint's, fails its `each`
 * check, or errs or times out: the message counts them by status and quotes the first
 * few bodies, with the time, so a failure says what it was.
 */
export function slice(e: Endpoint, seconds: number, connections: number): Promise<Slice> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const bad = new Map<string, number>();
    const examples: string[] = [];
    const expected = (status: number) =>
      e.status === undefined ? status >= 200 && status <= 299 : status === e.status;
    let begun = 0;
    const instance = autocannon(
      {
        url: url(e),
        requests: [
          {
            method: e.method ?? "GET",
            headers: e.headers ?? {},
            ...(e.body ? { body: e.body } : {}),
            onResponse: (status, body, _context, headers) => {
              const wrong = expected(status) ? e.each?.(lowerCased(headers)) : `status ${status}`;
              if (wrong === undefined) return;
              bad.set(wrong, (bad.get(wrong) ?? 0) + 1);
              if (examples.length < 3) examples.push(`${status} ${body.slice(0, 600)}`);
            },
          },
        ],
        ...(e.uniqueIds ? { idReplacement: true } : {}),
        connections,
        pipelining: 1,
        duration: seconds,
        timeout: 10,
      },
      (err, result) => {
        if (err) return reject(err);
        const elapsed = (performance.now() - begun) / 1000;
        if (bad.size > 0 || result.errors > 0 || result.timeouts > 0) {
          const counts = [...bad].map(([what, n]) => `${n} x ${what}`).join(", ");
          return reject(
            new BadAnswers(
              `${e.label}: ${counts || "no bad answer"}; connection errors ${result.errors}, timeouts ${result.timeouts} (slice ended ${new Date().toISOString()})${examples.map((x) => `\n    ${x}`).join("")}`,
            ),
          );
        }
        resolve({ endpoint: e.id, rps: latencies.length / elapsed, latenciesMs: latencies });
      },
    );
    begun = performance.now();
    instance.on("response", (_client, _status, _bytes, ms) => {
      latencies.push(ms);
    });
  });
}

// --------------------------------------------------------------------- server
/** The ports of `ports` that something already listens on (127.0.0.1). */
export async function busyPorts(ports: number[]): Promise<number[]> {
  const busy: number[] = [];
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(port, HOST, () => probe.close(() => resolve(true)));
    });
    if (!free) busy.push(port);
  }
  return busy;
}

/**
 * Refuses to go on while another run holds the benchmark's ports: its server's D1 and
 * rate-limiter files must not be touched (see docs/performance.md's notes).
 */
export async function requireFreePorts(ports: number[]): Promise<void> {
  const busy = await busyPorts(ports);
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

export interface ServerOptions {
  bundle: string;
  state: string;
  keyHash: string;
  pets: number;
  ports: { api: number; apiD1: number; static: number; raw: number };
  cpu: number;
  canPin: boolean;
}

export interface Ready {
  pets: number;
  maxId: number;
  seedMs: number;
}

/** Starts bench/server.ts (pinned to `cpu` when possible) and waits for its ready line. */
export async function startServer(
  o: ServerOptions,
): Promise<{ child: ChildProcess; ready: Ready }> {
  const server = path.join(ROOT, "bench", "server.ts");
  const command = pinned(o.cpu, [process.execPath, server, JSON.stringify(o)], o.canPin);
  const child = spawn(command[0] as string, command.slice(1), {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
    const timer = setTimeout(() => reject(new Error("server not ready in 120 s")), 120_000);
    lines.on("line", (line) => {
      if (line.startsWith('{"ready"')) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}) before ready`)));
  });
  return { child, ready };
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
