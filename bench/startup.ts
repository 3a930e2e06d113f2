// Start-up cost of the API bundle over a raw worker, as `workerd serve` sees it: time from
// spawning workerd (one worker, one socket, pinned to the server's CPU) to the first 200 on
// GET /, alternating raw worker and API (ABBA) so drift cancels out. Both workers get the
// same compatibility date and plain-text bindings; GET / touches neither D1 nor the rate
// limiter, so those bindings are left out. Measured by bench/run.ts after the load.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { median } from "simple-statistics";
import { HOST, OUT, pinned, ROOT, SERVER_CPU } from "./lib.ts";
import { apiWorkerOptions } from "./workers.ts";

const WORKERD = path.join(ROOT, "node_modules", ".bin", "workerd");
const RAW_SCRIPT = `export default { fetch() { return new Response("ok"); } };\n`;
type Kind = "api" | "raw";

/** A workerd config serving `bundle` (or the raw worker) on `port`; its file. */
function writeConfig(kind: Kind, bundle: string, port: number): string {
  const options = apiWorkerOptions(bundle);
  const texts = Object.entries(options.bindings ?? {})
    .filter(([, v]) => typeof v === "string")
    .map(([name, v]) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(v)})`);
  const dir = path.join(OUT, "startup", kind);
  mkdirSync(dir, { recursive: true });
  if (kind === "api") copyFileSync(bundle, path.join(dir, "worker.js"));
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

/** Milliseconds from spawning `workerd serve config` to its first 200 on GET /. */
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
      if (response?.status === 200) return performance.now() - started;
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

/** Start-up of the API and of the raw worker (medians of `pairs` ABBA pairs), and the extra. */
export async function measureStartup(bundle: string, port: number, pairs: number) {
  const configs = { api: writeConfig("api", bundle, port), raw: writeConfig("raw", bundle, port) };
  const first = (kind: Kind) => firstResponseMs(kind, configs[kind], port);
  await first("raw"); // warm the page cache: workerd's binary, the bundle
  await first("api");
  const samples = { api: [] as number[], raw: [] as number[], extra: [] as number[] };
  for (let i = 0; i < pairs; i++) {
    const order: Kind[] = i % 2 === 0 ? ["raw", "api"] : ["api", "raw"];
    const ms = { api: 0, raw: 0 };
    for (const kind of order) ms[kind] = await first(kind);
    samples.api.push(ms.api);
    samples.raw.push(ms.raw);
    samples.extra.push(ms.api - ms.raw);
  }
  const { api, raw, extra } = samples;
  const [apiMs, rawMs, extraMs] = [median(api), median(raw), median(extra)];
  return {
    apiMs,
    rawMs,
    extraMs,
    extraMinMs: Math.min(...extra),
    extraMaxMs: Math.max(...extra),
    pairs,
  };
}
