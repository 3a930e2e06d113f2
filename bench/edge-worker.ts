// The worker of npm run bench:edge and bench:capacity: the app as it deploys, its D1 and
// Cache API calls wrapped by the tests' instrumentation (test/support/instrumentation.ts), each
// trip delayed by EDGE_DELAYS (ms by place); `x-edge-trips` says what the answer waited for.
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
    // For npm run bench:capacity: every statement since the last request, its work after the
    // answer included, with D1's rows read and written.
    if (new URL(request.url).pathname === "/__bench/statements") {
      return Response.json(recorder.statements());
    }
    recorder.delays = JSON.parse(String((env as { EDGE_DELAYS?: string }).EDGE_DELAYS ?? "{}"));
    recorder.reset();
    const response = await app.fetch(request, { ...env, DB: recorder.d1(env.DB) }, ctx);
    const headers = new Headers(response.headers);
    // A key's usage is written by a timer an earlier answer left (src/auth/key-use.ts): it may
    // finish during this request, but no answer waits for it.
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
