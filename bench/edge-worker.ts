// The worker npm run bench:edge serves: the service's own app (createApp, the worker's
// code as it deploys, bundled by wrangler) with its D1 binding and both of its Cache API
// caches wrapped by the one instrumentation (test/support/instrumentation.ts). Every trip
// to the primary, a replica or the Cache API first waits for the distance to it
// (EDGE_DELAYS, JSON: milliseconds by place), and each answer carries `x-edge-trips`:
// the trips it waited for, by place, and how many of them ran one after another
// (`inSequence`; trips still running when it is handed back, the work after the
// answer, are not counted). Each worker of the benchmark is one isolate;
// requests to one isolate are sent one at a time, so one Recorder per isolate is enough.
import { createApp } from "../src/app.ts";
import { KEY_CACHE_NAME } from "../src/auth/verifier.ts";
import { Recorder } from "../test/support/instrumentation.ts";

const recorder = new Recorder();

const app = createApp({
  log: () => {},
  edgeCache: () => recorder.cache(caches.default),
  keyCache: async () => recorder.cache(await caches.open(KEY_CACHE_NAME)),
});

export default {
  async fetch(request, env, ctx) {
    recorder.delays = JSON.parse(String((env as { EDGE_DELAYS?: string }).EDGE_DELAYS ?? "{}"));
    recorder.reset();
    const response = await app.fetch(request, { ...env, DB: recorder.d1(env.DB) }, ctx);
    const headers = new Headers(response.headers);
    const waited = recorder.finished();
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
