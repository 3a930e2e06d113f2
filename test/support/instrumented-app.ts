// The real app over instrumented platform calls (instrumentation.ts): every D1 statement
// and Cache API call is a recorded trip. Authentication can be stubbed with a real key's
// id, so the database sees only the operation's work.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createApp } from "../../src/app.ts";
import { createKeyUseRecorder } from "../../src/auth/key-use.ts";
import { type ApiKeyVerifier, KEY_CACHE_NAME } from "../../src/auth/verifier.ts";
import type { EdgeCache } from "../../src/cache/edge-cache.ts";
import { type Clock, systemClock } from "../../src/clock.ts";
import type { LogLine } from "../../src/log.ts";
import type { Operation } from "../../src/operations/index.ts";
import { SCOPES } from "../../src/scopes.ts";
import { type CallOptions, makeRequest } from "../helpers.ts";
import { assertConforms } from "./conformance.ts";
import { Recorder } from "./instrumentation.ts";

export { NO_EDGE_CACHE } from "./instrumentation.ts";

/** A verifier that accepts exactly `key` as the key with id `keyId` (all scopes), without D1. */
export function fixedVerifier(key: string, keyId: number): ApiKeyVerifier {
  return {
    verify: async (token) =>
      token === key
        ? { ok: true, key: { id: keyId, owner: `key:${keyId}`, scopes: SCOPES, audience: null } }
        : { ok: false, reason: "unknown" },
  };
}

export type InstrumentedApp = ReturnType<typeof instrumentedApp>;

/**
 * The real app (one isolate: its memory lives as long as this object) over `db` (the
 * test D1 by default), with `cache` as the location's edge cache (`caches.default` by
 * default) and the service's named cache of API key records, which apps made here share
 * as the isolates of one location do. Every D1 statement and cache call is recorded;
 * responses are checked against the OpenAPI document after the trips are read.
 */
export function instrumentedApp(
  options: {
    db?: D1Database;
    verifier?: ApiKeyVerifier;
    cache?: EdgeCache;
    clock?: Clock;
    /** The app's operations: the table of src/operations/ unless a test gives its own. */
    operations?: readonly Operation[];
  } = {},
) {
  const logs: LogLine[] = [];
  const recorder = new Recorder();
  const cache = recorder.cache((options.cache ?? caches.default) as Cache);
  const keyCache = (async () => recorder.cache(await caches.open(KEY_CACHE_NAME)))();
  const log = (line: LogLine) => logs.push(line);
  const clock = options.clock ?? systemClock;
  const app = createApp({
    log,
    clock,
    edgeCache: () => cache,
    keyCache: () => keyCache,
    // Its timers wake at once, whatever the clock says (tests move Date, not timers):
    // usage counts are written when the clock says their interval is over, never sooner.
    keyUse: createKeyUseRecorder(clock, log, { sleep: async () => {} }),
    ...(options.verifier ? { verifier: options.verifier } : {}),
    ...(options.operations ? { operations: options.operations } : {}),
  });
  const appEnv: Env = { ...env, DB: recorder.d1(options.db ?? env.DB) };
  /**
   * One request: its response, the trips that had finished when the response was handed
   * back, those counted by place, and how many of them ran one after another; its
   * waitUntil work then runs to the end.
   */
  const exchangeRequest = async (request: Request) => {
    recorder.reset();
    const ctx = createExecutionContext();
    const response = await app.fetch(request, appEnv, ctx);
    const trips = recorder.finished();
    await waitOnExecutionContext(ctx);
    await assertConforms(request, response);
    return {
      response,
      trips,
      counts: recorder.counts(trips),
      inSequence: recorder.inSequence(trips),
    };
  };
  const fetchRequest = async (request: Request) => (await exchangeRequest(request)).response;
  /** `count` identical requests at once; every trip of them all, waitUntil work included. */
  const burst = async (count: number, path: string, callOptions: CallOptions = {}) => {
    recorder.reset();
    const requests = Array.from({ length: count }, () => makeRequest(path, callOptions));
    const contexts = requests.map(() => createExecutionContext());
    const responses = await Promise.all(requests.map((r, i) => app.fetch(r, appEnv, contexts[i])));
    await Promise.all(contexts.map(waitOnExecutionContext));
    await Promise.all(requests.map((r, i) => assertConforms(r, responses[i] as Response)));
    return { responses, trips: [...recorder.trips] };
  };
  return {
    recorder,
    logs,
    /** The SQL of every statement D1 ran since the last request began (waitUntil work too). */
    get statements(): string[] {
      return recorder.sql();
    },
    fetch: (path: string, callOptions: CallOptions = {}) =>
      fetchRequest(makeRequest(path, callOptions)),
    exchange: (path: string, callOptions: CallOptions = {}) =>
      exchangeRequest(makeRequest(path, callOptions)),
    burst,
  };
}
