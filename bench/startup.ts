// Start-up cost of the API bundle over a raw worker, as `workerd serve` sees it:
// time from spawning workerd (one worker, one socket) to the first 200 on GET /,
// alternating raw worker and API (ABBA) so drift cancels out. Both workers get the
// same compatibility date and plain-text bindings; GET / touches neither D1 nor the
// rate limiter, so those bindings are left out. Prints one JSON line.
// Run pinned to the server's CPU by bench/run.ts.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { median } from "simple-statistics";
import { HOST, OUT, ROOT } from "./lib.ts";
import { apiWorkerOptions } from "./workers.ts";

/** Started by bench/run.ts, its options as one JSON argument. */
const values = JSON.parse(process.argv[2] ?? "{}") as {
  bundle: string;
  port: number;
  pairs: number;
};
const PORT = values.port;
const WORKERD = path.join(ROOT, "node_modules", ".bin", "workerd");
const DIR = path.join(OUT, "startup");
const RAW_SCRIPT = `export default { fetch() { return new Response("ok"); } };\n`;

function writeConfig(kind: "api" | "raw"): string {
  const options = apiWorkerOptions(values.bundle);
  const texts = Object.entries(options.bindings ?? {})
    .filter(([, v]) => typeof v === "string")
    .map(([name, v]) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(v)})`);
  const dir = path.join(DIR, kind);
  mkdirSync(dir, { recursive: true });
  if (kind === "api") copyFileSync(values.bundle, path.join(dir, "worker.js"));
  else writeFileSync(path.join(dir, "worker.js"), RAW_SCRIPT);
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "${HOST}:${PORT}", http = (), service = "main")],
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

const CONFIGS = { api: writeConfig("api"), raw: writeConfig("raw") };

async function firstResponseMs(kind: "api" | "raw"): Promise<number> {
  const started = performance.now();
  const child = spawn(WORKERD, ["serve", CONFIGS[kind]], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`workerd exited: ${stderr}`);
      if (performance.now() - started > 20_000) throw new Error(`no answer in 20 s: ${stderr}`);
      const response = await fetch(`http://${HOST}:${PORT}/`).catch(() => undefined);
      const body = await response?.text();
      if (response?.status === 200) return performance.now() - started;
      if (response) throw new Error(`${kind}: ${response.status} ${body}`);
      await new Promise((r) => setTimeout(r, 1)); // not listening yet
    }
  } finally {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
}

const samples = { api: [] as number[], raw: [] as number[], extra: [] as number[] };
await firstResponseMs("raw"); // warm the page cache: workerd's binary, the bundle
await firstResponseMs("api");
for (let i = 0; i < values.pairs; i++) {
  const order: Array<"api" | "raw"> = i % 2 === 0 ? ["raw", "api"] : ["api", "raw"];
  const ms = { api: 0, raw: 0 };
  for (const kind of order) ms[kind] = await firstResponseMs(kind);
  samples.api.push(ms.api);
  samples.raw.push(ms.raw);
  samples.extra.push(ms.api - ms.raw);
}
const { api, raw, extra } = samples;
const [apiMs, rawMs, extraMs] = [median(api), median(raw), median(extra)];
const [extraMinMs, extraMaxMs] = [Math.min(...extra), Math.max(...extra)];
const result = { apiMs, rawMs, extraMs, extraMinMs, extraMaxMs, pairs: values.pairs };
/** What this prints, as one JSON line, for bench/run.ts. */
export type Startup = typeof result;
console.log(JSON.stringify(result));
