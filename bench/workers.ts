// The workers the benchmark serves: the API (built bundle, wrangler.toml's
// top-level bindings) and the two baselines, written here as plain modules.
import path from "node:path";
import type { V4WorkerOptionsShape } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { LIST_PETS_SQL } from "../src/db/pets.ts";
import { ROOT } from "./lib.ts";

/** A fixed request.cf, so miniflare never fetches one from the network. */
export const CF = {
  colo: "LHR",
  country: "GB",
  city: "London",
  asn: 64512,
  httpProtocol: "HTTP/1.1",
  tlsVersion: "TLSv1.3",
};

export function staticWorkerScript(): string {
  const statuses = ["available", "pending", "sold"];
  const pets = Array.from({ length: 20 }, (_, i) => ({
    id: i + 1,
    name: `pet-${i + 1}`,
    categoryId: 1 + ((i + 1) % 7),
    status: statuses[(i + 1) % 3],
  }));
  return `const BODY = ${JSON.stringify(JSON.stringify(pets))};
export default {
  fetch() {
    return new Response(BODY, { headers: { "content-type": "application/json" } });
  },
};`;
}

export function rawD1WorkerScript(): string {
  return `const SQL = ${JSON.stringify(LIST_PETS_SQL)};
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname !== "/") return new Response("raw worker: ok");
    // Diagnostic variants: the two binding calls the API makes per request besides its
    // query, together (?platform) or alone (?limiter, ?session): the rate limiter, and a
    // D1 session with its bookmark.
    const both = url.searchParams.has("platform");
    const limiter = both || url.searchParams.has("limiter");
    const session = both || url.searchParams.has("session");
    if (limiter) await env.RATE_LIMITER.limit({ key: "key:1" });
    const db = session ? env.DB.withSession("first-unconstrained") : env.DB;
    const { results } = await db.prepare(SQL).bind(0, 21).all();
    const response = Response.json(
      results.slice(0, 20).map((r) => ({ id: r.id, name: r.name, categoryId: r.category_id, status: r.status })),
    );
    if (session) response.headers.set("x-d1-bookmark", db.getBookmark() ?? "");
    return response;
  },
};`;
}

/** wrangler.toml's top-level worker options (bindings, compatibility), for the built bundle. */
export function apiWorkerOptions(bundle: string) {
  const workerOptions = unstable_getMiniflareWorkerOptions(path.join(ROOT, "wrangler.toml"))
    .workerOptions as V4WorkerOptionsShape;
  return {
    ...workerOptions,
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
