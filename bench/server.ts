// The benchmark's server: one Node process, one workerd, four workers, each on
// its own direct socket (miniflare's unsafeDirectSockets: as fast as `workerd serve`,
// without miniflare's front-end worker or wrangler dev's logging):
//   api    - the built bundle (wrangler deploy --dry-run), wrangler.toml's top-level bindings,
//            with miniflare's Cache API (a Durable Object on SQLite): the edge cache works
//   api-d1 - the same bundle with miniflare's no-op Cache API (as on a workers.dev host):
//            every read goes to D1, as before the edge cache
//   static - bare fetch handler answering a static 20-pet JSON array        (baseline a)
//   raw    - bare fetch handler running listPets' SQL on the same D1, no    (baseline b)
//            validation, auth or extra headers; flags add the API's platform calls
//            (rate limiter, D1 session, Cache API match): see bench/workers.ts
// The D1 database (persisted under o.state) is created here: migrations (wrangler), then
// o.pets pets from one recursive-CTE INSERT, then the bench API key's hash.
// Prints one JSON line {"ready":...} on stdout, and serves until SIGTERM/SIGINT.
// Started pinned to one CPU by harness.ts's startServer, its options as one JSON argument.
import path from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { addKey, migrate, seedPets } from "./database.ts";
import type { ServerOptions } from "./harness.ts";
import { apiWorkerOptions, CF, rawD1WorkerScript, staticWorkerScript } from "./workers.ts";

/** The options of harness.ts's startServer, passed as one JSON argument. */
const o = JSON.parse(process.argv[2] ?? "{}") as ServerOptions;
const HOST = "127.0.0.1";

let problemMinute = -1;
let problemsThisMinute = 0;
function reportProblems(log: { timestamp: number; level: string; message: string }): void {
  const problem =
    log.level === "error" || log.level === "warn" || /"level":"(error|warn)"/.test(log.message);
  if (!problem) return;
  const minute = Math.floor(Date.now() / 60_000);
  if (minute !== problemMinute) {
    if (problemsThisMinute > 5) {
      process.stderr.write(`[server] ... and ${problemsThisMinute - 5} more that minute\n`);
    }
    problemMinute = minute;
    problemsThisMinute = 0;
  }
  if (++problemsThisMinute <= 5) {
    process.stderr.write(
      `[server ${new Date(log.timestamp).toISOString()}] ${log.level}: ${log.message}\n`,
    );
  }
}

async function main() {
  const api = apiWorkerOptions(path.resolve(o.bundle));
  const d1Databases = api.d1Databases;
  const compatibilityDate = api.compatibilityDate;
  migrate(path.resolve(o.state));
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: HOST,
      port: 0,
      cf: CF,
      resourcePersistencePath: path.join(path.resolve(o.state), "v3"),
      // Drop the worker's per-request console lines here: printing them would put
      // Node on the server core for every request (production ships them to Workers Logs).
      // Errors and warnings (workerd's own, the API's "level":"error"/"warn" lines, the
      // raw worker's console.error) go to stderr, the first few of each minute in full.
      handleStructuredLogs: reportProblems,
      // An error thrown inside miniflare's own Durable Objects (the D1, rate-limiter and
      // Cache API emulations) reaches this process, not the worker's logs: say it too.
      handleUncaughtError: (error: Error) =>
        reportProblems({
          timestamp: Date.now(),
          level: "error",
          message: `miniflare: ${error.stack ?? error.message}`,
        }),
      logRequests: false,
      workers: [
        {
          ...api,
          name: "api",
          unsafeDirectSockets: [{ host: HOST, port: o.ports.api }],
        },
        {
          ...api,
          name: "api-d1",
          cacheAPI: false,
          unsafeDirectSockets: [{ host: HOST, port: o.ports.apiD1 }],
        },
        {
          name: "static",
          compatibilityDate,
          modules: true,
          script: staticWorkerScript(),
          unsafeDirectSockets: [{ host: HOST, port: o.ports.static }],
        },
        {
          name: "raw",
          compatibilityDate,
          modules: true,
          script: rawD1WorkerScript(),
          d1Databases,
          ratelimits: api.ratelimits,
          unsafeDirectSockets: [{ host: HOST, port: o.ports.raw }],
        },
      ],
    }),
  );
  await mf.ready;

  const started = performance.now();
  const db = await mf.getD1Database("DB", "raw");
  await seedPets(db, o.pets);
  await addKey(db, o.keyHash);
  const stats = await db
    .prepare("SELECT count(*) AS pets, max(id) AS maxId FROM pets")
    .first<{ pets: number; maxId: number }>();

  console.log(
    JSON.stringify({
      ready: true,
      pid: process.pid,
      pets: stats?.pets,
      maxId: stats?.maxId,
      seedMs: Math.round(performance.now() - started),
    }),
  );

  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await mf.dispose();
    process.exit(0);
  };
  process.on("SIGTERM", close);
  process.on("SIGINT", close);
  // Exit with the parent: bench/run.ts holds our stdin open.
  process.stdin.on("end", close);
  process.stdin.resume();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
