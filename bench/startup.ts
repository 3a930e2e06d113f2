// Start-up cost of a bundle (the API's, the MCP worker's) over a raw worker, as `workerd
// serve` sees it: time from spawning workerd (one worker, one socket, pinned to the
// server's CPU) to the first answer to GET / (the API's 200; the MCP worker's 404, as it
// answers only the API's RPC), alternating raw worker and bundle (ABBA) so drift cancels
// out. Both workers get the same compatibility date and plain-text bindings; GET / touches
// neither D1 nor the rate limiter, so those bindings are left out. Measured by
// bench/run.ts after the load.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { median } from "simple-statistics";
import { mcpWorkerOptions } from "../scripts/mcp-worker.ts";
import { HOST, OUT, pinned, ROOT, SERVER_CPU } from "./lib.ts";
import { apiWorkerOptions } from "./workers.ts";

const WORKERD = path.join(ROOT, "node_modules", ".bin", "workerd");
const RAW_SCRIPT = `export default { fetch() { return new Response("ok"); } };\n`;
type Kind = "api" | "mcp" | "raw";
/** What each worker answers GET / with. */
const STATUS: Record<Kind, number> = { api: 200, mcp: 404, raw: 200 };

/** A workerd config serving `bundle` (or the raw worker) on `port`; its file. */
function writeConfig(kind: Kind, bundle: string, port: number): string {
  const options = kind === "mcp" ? mcpWorkerOptions(bundle) : apiWorkerOptions(bundle);
  const texts = Object.entries(options.bindings ?? {})
    .filter(([, v]) => typeof v === "string")
    .map(([name, v]) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(v)})`);
  const dir = path.join(OUT, "startup", kind);
  mkdirSync(dir, { recursive: true });
  if (kind !== "raw") copyFileSync(bundle, path.join(dir, "worker.js"));
  else writeFileSync(path.join(dir, "worker.js"), RAW_SCRIPT);
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "${HOST}:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = ${JSON.stringify(options.compatibilityDate)},
  compatibilityFlags = ${JSON.stringify(options.compatibilityFlags ?? [])},
  bindings = [${texts.join(", ")}],
);
`;
  const file = path.join(dir, "config.capnp");
  writeFileSync(file, config);
  return file;
}

/** Milliseconds from spawning `workerd serve config` to its first answer to GET /. */
async function firstResponseMs(kind: Kind, config: string, port: number): Promise<number> {
  const started = performance.now();
  const [file = "", ...args] = pinned(SERVER_CPU, [WORKERD, "serve", config]);
  const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`workerd exited: ${stderr}`);
      if (performance.now() - started > 20_000) throw new Error(`no answer in 20 s: ${stderr}`);
      const response = await fetch(`http://${HOST}:${port}/`).catch(() => undefined);
      const body = await response?.text();
      if (response?.status === STATUS[kind]) return performance.now() - started;
      if (response) throw new Error(`${kind}: ${response.status} ${body}`);
      await new Promise((r) => setTimeout(r, 1)); // not listening yet
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
  }
}

/**
 * Start-up of `kind`'s bundle and of the raw worker (medians of `pairs` ABBA pairs), and
 * the extra.
 */
export async function measureStartup(
  bundle: string,
  port: number,
  pairs: number,
  kind: "api" | "mcp" = "api",
) {
  const configs = {
    [kind]: writeConfig(kind, bundle, port),
    raw: writeConfig("raw", bundle, port),
  };
  const first = (k: Kind) => firstResponseMs(k, configs[k] as string, port);
  await first("raw"); // warm the page cache: workerd's binary, the bundle
  await first(kind);
  const samples = { worker: [] as number[], raw: [] as number[], extra: [] as number[] };
  for (let i = 0; i < pairs; i++) {
    const order: Kind[] = i % 2 === 0 ? ["raw", kind] : [kind, "raw"];
    const ms: Partial<Record<Kind, number>> = {};
    for (const k of order) ms[k] = await first(k);
    const [worker = 0, raw = 0] = [ms[kind], ms.raw];
    samples.worker.push(worker);
    samples.raw.push(raw);
    samples.extra.push(worker - raw);
  }
  const { worker, raw, extra } = samples;
  return {
    workerMs: median(worker),
    rawMs: median(raw),
    extraMs: median(extra),
    extraMinMs: Math.min(...extra),
    extraMaxMs: Math.max(...extra),
    pairs,
  };
}
