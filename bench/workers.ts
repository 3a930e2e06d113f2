// The workers the benchmark serves: the API (built bundle, wrangler.toml's
// top-level bindings) and the two baselines, written here as plain modules.
import path from "node:path";
import { convertV4MiniflareOptions, Miniflare, type V4WorkerOptionsShape } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { wrangler } from "../scripts/wrangler.ts";
import { GET_PET_SQL, LIST_PETS_SQL } from "../src/db/pets.ts";
import { HOST, ROOT } from "./lib.ts";

/** A fixed request.cf, so miniflare never fetches one from the network. */
const CF = {
  colo: "LHR",
  country: "GB",
  city: "London",
  asn: 64512,
  httpProtocol: "HTTP/1.1",
  tlsVersion: "TLSv1.3",
};

const STATUSES = ["available", "pending", "sold"];
const PAGE = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  name: `pet-${i + 1}`,
  categoryId: 1 + ((i + 1) % 7),
  status: STATUSES[(i + 1) % 3],
}));

/** Baseline (a): a bare fetch handler answering a static page of 20 pets. */
export const STATIC_WORKER_SCRIPT = `const BODY = ${JSON.stringify(JSON.stringify(PAGE))};
export default {
  fetch() {
    return new Response(BODY, { headers: { "content-type": "application/json" } });
  },
};`;

/** The pet that getPet's rows ask for (in the middle of the seeded 100,000). */
export const BENCH_PET_ID = 50_000;

/**
 * The raw baseline: a bare fetch handler on the same D1 with no validation, auth or
 * extra headers. `GET /` runs listPets' SQL (page 1). Query flags add, one by one, the
 * platform calls the API makes per request, so a comparison can match them:
 *   limiter  - the rate-limiter call (its own counter, `raw-baseline`, so a baseline
 *              never counts against the API key's `key:1` window);
 *   session  - a D1 session ("first-unconstrained") and its bookmark;
 *   platform - both;
 *   hit=list|pet - instead of the query, a Cache API match and a read of the kept body
 *              (what the API does on an edge-cache hit): page 1, or pet BENCH_PET_ID.
 *              The first request misses, queries D1 and puts; `x-raw-cache` says which;
 *   inm      - with hit: 304 when If-None-Match equals the kept entry's ETag.
 * A failure answers 500 with the step and the error, and logs it (the host prints it).
 */
export function rawD1WorkerScript(): string {
  return `const LIST_SQL = ${JSON.stringify(LIST_PETS_SQL)};
const PET_SQL = ${JSON.stringify(GET_PET_SQL)};
const PET_ID = ${BENCH_PET_ID};
const toPet = (r) => ({ id: r.id, name: r.name, categoryId: r.category_id, status: r.status });
const JSON_TYPE = { "content-type": "application/json" };

async function fromD1(db, what) {
  if (what === "pet") return toPet(await db.prepare(PET_SQL).bind(PET_ID).first());
  const { results } = await db.prepare(LIST_SQL).bind(0, 21).all();
  return results.slice(0, 20).map(toPet);
}

async function tagOf(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return '"' + btoa(String.fromCharCode(...new Uint8Array(digest).slice(0, 16))) + '"';
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname !== "/") return new Response("raw worker: ok");
    const q = url.searchParams;
    const both = q.has("platform");
    const limiter = both || q.has("limiter");
    const session = both || q.has("session");
    const hit = q.get("hit");
    let step = "start";
    try {
      step = "RATE_LIMITER.limit";
      if (limiter) await env.RATE_LIMITER.limit({ key: "raw-baseline" });
      step = "DB.withSession";
      const db = session ? env.DB.withSession("first-unconstrained") : env.DB;
      let response;
      if (hit === null) {
        step = "query";
        response = Response.json(await fromD1(db, "list"));
      } else {
        const key = "https://raw.bench/_edge/" + hit;
        step = "caches.default.match";
        const kept = await caches.default.match(key);
        if (kept) {
          step = "body read";
          const body = await kept.arrayBuffer();
          const etag = kept.headers.get("ETag");
          response = q.has("inm") && request.headers.get("If-None-Match") === etag
            ? new Response(null, { status: 304, headers: { ETag: etag } })
            : new Response(body, { headers: { ...JSON_TYPE, ETag: etag } });
          response.headers.set("x-raw-cache", "hit");
        } else {
          step = "query (cache miss)";
          const text = JSON.stringify(await fromD1(db, hit));
          const etag = await tagOf(text);
          step = "caches.default.put";
          ctx.waitUntil(caches.default.put(key, new Response(text, {
            headers: { ...JSON_TYPE, ETag: etag, "Cache-Control": "public, max-age=86400" },
          })));
          response = new Response(text, { headers: { ...JSON_TYPE, ETag: etag, "x-raw-cache": "miss" } });
        }
      }
      step = "getBookmark";
      if (session) response.headers.set("x-d1-bookmark", db.getBookmark() ?? "");
      return response;
    } catch (err) {
      const text = "raw worker failed at " + step + ": " + (err && err.stack ? err.stack : String(err)) +
        (err && err.cause ? "\\ncause: " + (err.cause.stack ?? String(err.cause)) : "");
      console.error(text);
      return new Response(text, { status: 500 });
    }
  },
};`;
}

/**
 * wrangler.toml's top-level worker options (bindings, compatibility), for the built bundle;
 * the MCP binding only with `mcp` (then serve the MCP worker too: scripts/mcp-worker.ts).
 */
export function apiWorkerOptions(bundle: string, { mcp = false } = {}) {
  const {
    assets: _assets,
    serviceBindings,
    ...workerOptions
  } = unstable_getMiniflareWorkerOptions(path.join(ROOT, "wrangler.toml"))
    .workerOptions as V4WorkerOptionsShape;
  return {
    // Without [assets]: with it, miniflare puts its asset router worker (assets:router) in
    // front of every request, an emulation of what the platform does before a worker
    // runs; the baselines have none, and no measured endpoint is a docs file.
    ...workerOptions,
    ...(mcp ? { serviceBindings } : {}),
    // The rate limiter stays in the path, with a limit a load test cannot reach
    // (wrangler.toml's local limit is 10,000 a minute per key).
    ratelimits: Object.fromEntries(
      Object.entries(workerOptions.ratelimits ?? {}).map(([name, config]) => [
        name,
        { ...config, simple: { limit: 1_000_000_000, period: 60 as const } },
      ]),
    ),
    cronTriggers: [],
    modulesRoot: path.dirname(bundle),
    modules: [{ type: "ESModule" as const, path: bundle }],
  };
}

/**
 * Miniflare in this process on 127.0.0.1 with a fixed request.cf, over the local D1
 * persisted under `state`, which the tool every other database uses (`wrangler d1
 * migrations apply`) migrates first.
 */
export function localMiniflare(
  state: string,
  options: Parameters<typeof convertV4MiniflareOptions>[0],
): Miniflare {
  const migrate = ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state];
  wrangler(migrate, { capture: true, ci: true });
  const persistence = { resourcePersistencePath: path.join(state, "v3") };
  return new Miniflare(
    convertV4MiniflareOptions({ host: HOST, port: 0, cf: CF, ...persistence, ...options }),
  );
}
