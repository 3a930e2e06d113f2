// The benchmark's server (docs/performance.md, "What it measures"): one Node process, one
// workerd, four workers on direct sockets (miniflare's unsafeDirectSockets): the built API
// with the edge cache (api) and with a no-op Cache API (api-d1), and the baselines of
// bench/workers.ts (static, raw), over a fresh local D1 with o.pets pets and the bench key.
// Prints one JSON line {"ready":...} on stdout, and serves until SIGTERM, SIGINT or the
// end of its stdin. Started pinned to one CPU by lib.ts's withServer.
import path from "node:path";
import { addKey, addPets, HOST, PORTS, type ServerOptions } from "./lib.ts";
import {
  apiWorkerOptions,
  localMiniflare,
  rawD1WorkerScript,
  STATIC_WORKER_SCRIPT,
} from "./workers.ts";

const o = JSON.parse(process.argv[2] ?? "{}") as ServerOptions;
const state = path.resolve(o.state);

/** Problems shown per minute; the rest of that minute's are counted. */
const shown = new Map<number, number>();
function reportProblem(level: string, message: string): void {
  const minute = Math.floor(Date.now() / 60_000);
  const n = (shown.get(minute) ?? 0) + 1;
  shown.set(minute, n);
  if (n <= 5) process.stderr.write(`[server ${new Date().toISOString()}] ${level}: ${message}\n`);
  if (n === 6) process.stderr.write("[server] ... and more this minute, not shown\n");
}

const api = apiWorkerOptions(path.resolve(o.bundle));
const { compatibilityDate, d1Databases } = api;
const socket = (port: number) => ({ unsafeDirectSockets: [{ host: HOST, port }] });
const mf = localMiniflare(state, {
  // Drop the worker's per-request console lines here: printing them would put
  // Node on the server core for every request (production ships them to Workers Logs).
  // Errors and warnings (workerd's own, the API's "level":"error"/"warn" lines, the
  // raw worker's console.error) go to stderr, the first few of each minute in full.
  handleStructuredLogs: ({ level, message }) => {
    if (/^(error|warn)$/.test(level) || /"level":"(error|warn)"/.test(message)) {
      reportProblem(level, message);
    }
  },
  // An error thrown inside miniflare's own Durable Objects (the D1, rate-limiter and
  // Cache API emulations) reaches this process, not the worker's logs: say it too.
  handleUncaughtError: (error: Error) =>
    reportProblem("error", `miniflare: ${error.stack ?? error.message}`),
  logRequests: false,
  workers: [
    { ...api, name: "api", ...socket(PORTS.api) },
    { ...api, name: "api-d1", cacheAPI: false, ...socket(PORTS.apiD1) },
    {
      name: "static",
      compatibilityDate,
      modules: true,
      script: STATIC_WORKER_SCRIPT,
      ...socket(PORTS.static),
    },
    {
      name: "raw",
      compatibilityDate,
      modules: true,
      script: rawD1WorkerScript(),
      d1Databases,
      ratelimits: api.ratelimits,
      ...socket(PORTS.raw),
    },
  ],
});
await mf.ready;

const started = performance.now();
const db = await mf.getD1Database("DB", "raw");
await addPets(db, o.pets);
await addKey(db, o.keyHash);
const stats = await db
  .prepare("SELECT count(*) AS pets, max(id) AS maxId FROM pets")
  .first<{ pets: number; maxId: number }>();
const seedMs = Math.round(performance.now() - started);
console.log(JSON.stringify({ ready: true, pid: process.pid, ...stats, seedMs }));

const close = () => mf.dispose().finally(() => process.exit(0));
process.once("SIGTERM", close).once("SIGINT", close);
process.stdin.once("end", close).resume();
