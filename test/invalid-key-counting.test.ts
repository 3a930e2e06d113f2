// The invalid-key limiter as the verifier uses it, over a limiter binding the test controls
// (docs/keys.md, "Hostile tokens and the invalid-key limiter"): what it counts (every refused
// token, wherever its refusal comes from, and every lookup), a limiter that refuses (429) or
// fails (open, logged), and a location cache that hangs (given up after 50 ms).
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import type { EdgeCache } from "../src/cache/edge-cache.ts";
import { RATE_LIMIT_RETRY_AFTER_SECONDS } from "../src/config.ts";
import type { LogLine } from "../src/log.ts";
import { createCheckedApp, createKey, expectError, makeRequest, unknownKey } from "./helpers.ts";

const ADDRESS = "203.0.113.7";

/** A limiter binding returning `success` (or throwing), and every key it was asked about. */
function limiter(response: () => boolean) {
  const asked: string[] = [];
  const binding: RateLimit = {
    limit: async ({ key }) => {
      asked.push(key);
      return { success: response() };
    },
  };
  return { asked, env: { ...env, INVALID_KEY_LIMITER: binding } as Env };
}

/** The location's key cache, shared by the isolates below; its puts, to wait for. */
const location = () => caches.open("invalid-key-counting");
const puts: Promise<unknown>[] = [];
const sharedKeyCache: EdgeCache = {
  match: async (request) => (await location()).match(request),
  put: (request, response) => {
    const put = location().then((cache) => cache.put(request, response));
    puts.push(put);
    return put;
  },
};

/**
 * An isolate of the app: its own memory, the location's key cache shared with the others
 * unless it is given another. A request's response comes once the key cache holds what it
 * learnt, as a later request from another isolate would find it.
 */
function isolate(keyCache: EdgeCache = sharedKeyCache) {
  const logs: LogLine[] = [];
  const app = createCheckedApp({ log: (line) => logs.push(line), keyCache: () => keyCache });
  const get = async (key: string, appEnv: Env) => {
    const headers = { "CF-Connecting-IP": ADDRESS };
    const response = await app.fetch(makeRequest("/v1/pets?limit=1", { key, headers }), appEnv);
    await Promise.all(puts.splice(0));
    return response;
  };
  return { get, logs };
}

async function expectLimited(response: Response) {
  await expectError(response, 429, "rate_limited", /invalid API keys/);
  expect(response.headers.get("Retry-After")).toBe(String(RATE_LIMIT_RETRY_AFTER_SECONDS));
}

it("counts every refused token against its address, from the format, D1, isolate memory or the location's cache; a known valid key never", async () => {
  const counting = limiter(() => true);
  const first = isolate();
  /** The response's status and how many times the limiter counted the address for it. */
  const counted = async (app: ReturnType<typeof isolate>, key: string) => {
    counting.asked.length = 0;
    const response = await app.get(key, counting.env);
    await response.body?.cancel();
    for (const asked of counting.asked) expect(asked).toBe(`ip:${ADDRESS}`);
    return [response.status, counting.asked.length];
  };
  expect(await counted(first, "not-a-key")).toEqual([401, 1]);
  // A well-formed unknown key: its lookup counts (once: its refusal is the same event)...
  const unknown = await unknownKey();
  expect(await counted(first, unknown)).toEqual([401, 1]);
  // ...and so does every refusal after it, from memory and from the location's cache.
  expect(await counted(first, unknown)).toEqual([401, 1]);
  expect(await counted(isolate(), unknown)).toEqual([401, 1]);
  const now = Math.floor(Date.now() / 1000);
  const expired = await createKey("limiter-expired", { expiresAt: now - 1, now: now - 60 });
  expect(await counted(first, expired.key)).toEqual([401, 1]);
  expect(await counted(first, expired.key)).toEqual([401, 1]);
  expect(await counted(isolate(), expired.key)).toEqual([401, 1]);
  // A valid key: its lookup counts, its uses from memory or the location's cache do not.
  const { key } = await createKey("limiter-valid");
  expect(await counted(first, key)).toEqual([200, 1]);
  expect(await counted(first, key)).toEqual([200, 0]);
  expect(await counted(isolate(), key)).toEqual([200, 0]);
});

it("a limiter that refuses: 429 for any refused token, wherever it is refused, and for a key that needs a lookup; a key the location knows still passes", async () => {
  const allowing = limiter(() => true);
  const refusing = limiter(() => false);
  const warm = isolate();
  const unknown = await unknownKey();
  const known = await createKey("limiter-known");
  for (const key of [unknown, known.key]) await (await warm.get(key, allowing.env)).body?.cancel();

  await expectLimited(await warm.get("not-a-key", refusing.env));
  await expectLimited(await warm.get(await unknownKey(), refusing.env));
  await expectLimited(await warm.get((await createKey("limiter-new")).key, refusing.env));
  // Refused from memory and from the location's cache: 429 too, not 401.
  await expectLimited(await warm.get(unknown, refusing.env));
  await expectLimited(await isolate().get(unknown, refusing.env));
  expect(new Set(refusing.asked)).toEqual(new Set([`ip:${ADDRESS}`]));
  expect(refusing.asked).toHaveLength(5);

  refusing.asked.length = 0;
  for (const app of [warm, isolate()]) {
    const response = await app.get(known.key, refusing.env);
    expect(response.status).toBe(200);
    await response.body?.cancel();
  }
  expect(refusing.asked).toEqual([]);
});

it("a limiter that fails lets valid keys through and refuses invalid ones with 401, never 429; each failure is logged", async () => {
  const failing = limiter(() => {
    throw new TypeError("limiter exploded");
  });
  const app = isolate();
  const { key } = await createKey("limiter-failing");
  const valid = await app.get(key, failing.env);
  expect(valid.status).toBe(200);
  await valid.body?.cancel();
  const invalid = await app.get("not-a-key", failing.env);
  await expectError(invalid, 401, "unauthorized", /invalid or revoked/);
  expect(failing.asked).toEqual([`ip:${ADDRESS}`, `ip:${ADDRESS}`]);
  const warnings = app.logs.filter((l) => l.level === "warn");
  expect(warnings).toEqual([
    expect.objectContaining({
      msg: "invalid-key limiter failed",
      error: "TypeError: limiter exploded",
    }),
    expect.objectContaining({ msg: "invalid-key limiter failed" }),
  ]);
});

it("a location key cache that never responds is given up within 50 ms: a new key and an unknown one get a response at once", async () => {
  const never = new Promise<never>(() => {});
  const app = isolate({ match: () => never, put: () => never });
  const { key } = await createKey("hanging-cache");
  for (const [token, status] of [
    [key, 200],
    [await unknownKey(), 401],
  ] as const) {
    const started = Date.now();
    const response = await app.get(token, env);
    const took = Date.now() - started;
    expect(response.status).toBe(status);
    await response.body?.cancel();
    // The match and (for the unknown key) the put before the response: 50 ms each at most.
    expect(took).toBeGreaterThanOrEqual(50);
    expect(took).toBeLessThan(1_000);
  }
});
