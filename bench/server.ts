// The benchmark's server: one Node process, one workerd, three workers, each on
// its own direct socket (miniflare's unsafeDirectSockets: as fast as `workerd serve`,
// without miniflare's front-end worker or wrangler dev's logging):
//   api    - the built bundle (wrangler deploy --dry-run), wrangler.toml's top-level bindings
//   static - bare fetch handler answering a static 20-pet JSON array        (baseline a)
//   raw    - bare fetch handler running listPets' SQL on the same D1, no    (baseline b)
//            validation, auth or extra headers
// The D1 database (persisted under --state) is created here: migrations, then
// --pets pets from one recursive-CTE INSERT, then the bench API key's hash.
// Prints one JSON line {"ready":...} on stdout, and serves until SIGTERM/SIGINT.
// Run pinned: `taskset -c 1 node bench/server.ts ...` (bench/run.ts does it).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_splitSqlQuery } from "wrangler";
import { ROOT } from "./lib.ts";
import { apiWorkerOptions, CF, rawD1WorkerScript, staticWorkerScript } from "./workers.ts";

const { values } = parseArgs({
  options: {
    bundle: { type: "string" },
    state: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    "api-port": { type: "string", default: "8781" },
    "static-port": { type: "string", default: "8782" },
    "raw-port": { type: "string", default: "8783" },
    pets: { type: "string", default: "100000" },
    "key-hash": { type: "string" },
  },
});
if (!values.bundle || !values.state || !values["key-hash"]) {
  console.error("usage: server.ts --bundle FILE --state DIR --key-hash HEX [--pets N]");
  process.exit(2);
}
const HOST = values.host;
if (HOST !== "127.0.0.1") throw new Error("the benchmark only ever serves on 127.0.0.1");
const PETS = Number(values.pets);

async function main() {
  const api = apiWorkerOptions(path.resolve(values.bundle as string));
  const d1Databases = api.d1Databases;
  const compatibilityDate = api.compatibilityDate;
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: HOST,
      port: 0,
      cf: CF,
      resourcePersistencePath: path.join(path.resolve(values.state as string), "v3"),
      // Drop the worker's per-request console lines here: printing them would put
      // Node on the server core for every request (production ships them to Workers Logs).
      handleStructuredLogs: () => {},
      logRequests: false,
      workers: [
        {
          ...api,
          name: "api",
          unsafeDirectSockets: [{ host: HOST, port: Number(values["api-port"]) }],
        },
        {
          name: "static",
          compatibilityDate,
          modules: true,
          script: staticWorkerScript(),
          unsafeDirectSockets: [{ host: HOST, port: Number(values["static-port"]) }],
        },
        {
          name: "raw",
          compatibilityDate,
          modules: true,
          script: rawD1WorkerScript(),
          d1Databases,
          ratelimits: api.ratelimits,
          unsafeDirectSockets: [{ host: HOST, port: Number(values["raw-port"]) }],
        },
      ],
    }),
  );
  await mf.ready;

  const started = performance.now();
  const db = await mf.getD1Database("DB", "raw");
  const existing = await db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'pets'")
    .first();
  if (!existing) {
    const dir = path.join(ROOT, "migrations");
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort()) {
      const statements = unstable_splitSqlQuery(readFileSync(path.join(dir, file), "utf8"));
      await db.batch(statements.map((sql) => db.prepare(sql)));
    }
  }
  const count = (await db.prepare("SELECT count(*) AS n FROM pets").first<{ n: number }>())?.n ?? 0;
  if (count < PETS) {
    await db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT CAST(?1 AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
         INSERT INTO pets (name, category_id, status, created_at)
         SELECT 'pet-' || i, 1 + i % 7,
                CASE i % 3 WHEN 0 THEN 'sold' WHEN 1 THEN 'available' ELSE 'pending' END,
                1700000000 + i
         FROM n`,
      )
      .bind(count + 1, PETS)
      .run();
  }
  await db
    .prepare(
      `INSERT INTO api_keys (key_hash, prefix, label, created_at) VALUES (?1, 'psk_bench', 'bench', unixepoch())
       ON CONFLICT (key_hash) DO UPDATE SET revoked_at = NULL`,
    )
    .bind(values["key-hash"])
    .run();
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
