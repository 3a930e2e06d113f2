// The worker of npm run bench:edge and bench:capacity: the app as it deploys, its D1 and
// Cache API calls wrapped by the tests' instrumentation (test/support/instrumentation.ts), each
// trip delayed by EDGE_DELAYS (ms by place); `x-edge-trips` says what the response waited for.
// EDGE_LOCATION names the location the worker stands in: its caches are that location's.
import { createApp } from "../src/app.ts";
import { KEY_CACHE_NAME } from "../src/auth/verifier.ts";
import type { EdgeCache } from "../src/cache/edge-cache.ts";
import { Recorder } from "../test/support/instrumentation.ts";

const recorder = new Recorder();
/**
 * miniflare gives every worker one cache of each name, so a location's caches carry its name:
 * its isolates share them, another location's never do. Without one, the names as deployed.
 */
let location: string | undefined;
const named = (name: string) => caches.open(location ? `${name}@${location}` : name);
let edgeCache: EdgeCache | undefined;

const app = createApp({
  log: () => {},
  edgeCache: () => edgeCache ?? recorder.cache(caches.default),
  keyCache: async () => recorder.cache(await named(KEY_CACHE_NAME)),
});

export default {
  async fetch(request, env, ctx) {
    // For npm run bench:capacity: every statement since the last request, its work after the
    // response included, with D1's rows read and written.
    if (new URL(request.url).pathname === "/__bench/statements") {
      return Response.json(recorder.statements());
    }
    const bench = env as { EDGE_DELAYS?: string; EDGE_LOCATION?: string };
    recorder.delays = JSON.parse(bench.EDGE_DELAYS ?? "{}");
    location = bench.EDGE_LOCATION;
    if (location) edgeCache ??= recorder.cache(await named("edge"));
    recorder.reset();
    const response = await app.fetch(request, { ...env, DB: recorder.d1(env.DB) }, ctx);
    const headers = new Headers(response.headers);
    // A key's usage is written by a timer an earlier response left (src/auth/key-use.ts): it may
    // finish during this request, but no response waits for it.
    const waited = recorder
      .finished()
      .filter((t) => !/\b(api_key_usage|last_used_at)\b/.test(t.what));
    const trips = { ...recorder.counts(waited), inSequence: recorder.inSequence(waited) };
    headers.set("x-edge-trips", JSON.stringify(trips));
    // What they were, for a row that does not hold (the SQL, or the cache call and URL).
    headers.set(
      "x-edge-trip-list",
      encodeURIComponent(JSON.stringify(waited.map((t) => `${t.place}: ${t.what}`))),
    );
    return new Response(response.body, { status: response.status, headers });
  },
} satisfies ExportedHandler<Env>;
