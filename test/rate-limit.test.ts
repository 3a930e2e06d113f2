// Rate limits through the Workers rate-limiting bindings: per key, and per key owner (an
// account's keys together, or an operator key with its rotations). This file runs in the
// "rate-limit" vitest project, where RATE_LIMITER allows only TEST_RATE_LIMIT requests a
// minute per key and ACCOUNT_RATE_LIMITER TEST_ACCOUNT_RATE_LIMIT per owner (vitest.config.ts).
import { env, exports } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { RATE_LIMIT_RETRY_AFTER_SECONDS } from "../src/config.ts";
import type { Scope } from "../src/scopes.ts";
import {
  call,
  createAccount,
  createCheckedApp,
  createKey,
  createPetVia,
  expectDeprecationHeaders,
  expectError,
  makeRequest,
  rotateKey,
} from "./helpers.ts";
import { instrumentedApp } from "./support/instrumented-app.ts";
import { freshWindow, idempotencyRecords } from "./support/requests.ts";

const limits = env as unknown as { TEST_RATE_LIMIT?: number; TEST_ACCOUNT_RATE_LIMIT?: number };
const LIMIT = limits.TEST_RATE_LIMIT ?? 0;
const ACCOUNT_LIMIT = limits.TEST_ACCOUNT_RATE_LIMIT ?? 0;

let petId: number;

/** The ETag of each response a key other than the tests' keys read (so it may be cached). */
const tags: Record<string, string> = {};

beforeAll(async () => {
  expect(LIMIT, "run through the rate-limit project of vitest.config.ts").toBeGreaterThan(0);
  expect(ACCOUNT_LIMIT).toBeGreaterThan(LIMIT);
  // A pet to read, created by a key the tests below never use, which reads it and a page.
  const { key } = await createKey("rate-limit-setup");
  petId = (await createPetVia(key, { name: "Limited", categoryId: 1 })).id;
  for (const path of [`/v1/pets/${petId}`, "/v1/pets?limit=1"]) {
    const warm = await call(path, { key });
    expect(warm.status).toBe(200);
    tags[path] = warm.headers.get("ETag") as string;
    expect(tags[path]).toMatch(/^"/);
    await warm.body?.cancel();
  }
});

/** Spends a fresh key's whole allowance; returns the key. */
async function exhausted(label: string, scopes?: Scope[]): Promise<{ key: string; id: number }> {
  await freshWindow();
  const issued = await createKey(label, scopes ? { scopes } : {});
  // A key without pets:read spends its allowance on 403s: they count too.
  const expected = !scopes || scopes.includes("pets:read") ? 200 : 403;
  for (let i = 0; i < LIMIT; i++) {
    const response = await call("/v1/pets?limit=1", { key: issued.key });
    expect(response.status, `request ${i + 1} of ${LIMIT}`).toBe(expected);
    await response.body?.cancel();
  }
  return issued;
}

/** `n` responses to `key`, each 200. */
async function spend(key: string, n: number) {
  for (let i = 0; i < n; i++) {
    const response = await call("/v1/pets?limit=1", { key });
    expect(response.status, `request ${i + 1} of ${n}`).toBe(200);
    await response.body?.cancel();
  }
}

async function expectRateLimited(response: Response, message: RegExp = /rate/) {
  await expectError(response, 429, "rate_limited", message);
  expect(response.headers.get("Retry-After")).toBe(String(RATE_LIMIT_RETRY_AFTER_SECONDS));
  expect(Number(response.headers.get("Retry-After"))).toBeGreaterThan(0);
}

it(`a key over its limit gets ${LIMIT} responses, then 429 rate_limited with Retry-After on every operation, after authentication, per key`, async () => {
  const { key } = await exhausted("over");
  await expectRateLimited(await call("/v1/pets", { key }));
  // A limited create creates nothing and does not consume its Idempotency-Key.
  const name = `Limited-${crypto.randomUUID()}`;
  const headers = { "Idempotency-Key": "limited" };
  const json = { name, categoryId: 1 };
  await expectRateLimited(await call("/v1/pets", { method: "POST", key, json, headers }));
  const pets = await env.DB.prepare("SELECT COUNT(*) AS n FROM pets WHERE name = ?1")
    .bind(name)
    .first("n");
  expect(pets).toBe(0);
  expect(await idempotencyRecords("limited")).toEqual([]);
  await expectRateLimited(await call("/v1/store/orders", { key }));
  // Past authentication, before routing: unknown paths and wrong methods are limited too.
  await expectRateLimited(await call("/v1/cats", { key }));
  // Before any 304 and any response in the edge cache.
  for (const [path, tag] of Object.entries(tags)) {
    for (const ifNoneMatch of [tag, "*"]) {
      const response = await call(path, { key, headers: { "If-None-Match": ifNoneMatch } });
      expect(response.headers.get("ETag")).toBeNull();
      await expectRateLimited(response);
    }
  }
  // With the CORS headers, so a browser can read Retry-After.
  const cors = await call("/v1/pets", { key, headers: { Origin: "https://app.example" } });
  expect(cors.headers.get("Access-Control-Allow-Origin")).toBe("*");
  expect(cors.headers.get("Access-Control-Expose-Headers")).toMatch(/Retry-After/i);
  await expectRateLimited(cors);
  // After authentication: no key or a wrong key is still 401, however often.
  for (let i = 0; i < LIMIT + 2; i++) {
    await expectError(await call("/v1/pets"), 401, "unauthorized");
    await expectError(await call("/v1/pets", { key: `${key}x` }), 401, "unauthorized");
  }
  // The limit is per API key: another key is still served.
  const { key: other } = await createKey("neighbour");
  const response = await call("/v1/pets?limit=1", { key: other });
  expect(response.status).toBe(200);
  expect(Array.isArray(await response.json())).toBe(true);
});

it("an isolate that must look the key up gets 429 too, never the cached response it looked up beside the key", async () => {
  const { key } = await exhausted("over-fresh-isolate");
  for (const path of Object.keys(tags)) {
    const { response, trips } = await instrumentedApp().exchange(path, { key });
    expect(response.headers.get("ETag")).toBeNull();
    await expectRateLimited(response);
    // The cached response was looked up, side by side with the key's record, and not released.
    const ahead = trips.find((t) => /^match .*\/_cache\//.test(t.what));
    expect(ahead?.done, path).toBe(true);
  }
});

it("the limit comes before the scope check and counts 403s: 429 for a key without the scope", async () => {
  const { key } = await exhausted("read-only-over", ["pets:read"]);
  await expectRateLimited(
    await call("/v1/pets", { method: "POST", key, json: { name: "Nope", categoryId: 1 } }),
  );
  const getPet = await call(`/v1/pets/${petId}`, {
    key: (await exhausted("write-only-over", ["pets:write"])).key,
  });
  expectDeprecationHeaders(getPet);
  await expectRateLimited(getPet);
});

it("the limits are keyed by the API key's id and owner, never by the key or its hash; public routes do not count", async () => {
  const { key, id } = await createKey("binding-keys");
  const seen: string[] = [];
  const recording = (limiter: RateLimit) =>
    ({
      limit: (options: { key: string }) => {
        seen.push(options.key);
        return limiter.limit(options);
      },
    }) as RateLimit;
  const app = createCheckedApp({ log: () => {} });
  const ask = async (path: string, method = "GET") => {
    const response = await app.fetch(makeRequest(path, { key, method }), {
      ...env,
      RATE_LIMITER: recording(env.RATE_LIMITER),
      ACCOUNT_RATE_LIMITER: recording(env.ACCOUNT_RATE_LIMITER),
    });
    await response.body?.cancel();
    return response.status;
  };
  const paths = ["/v1/pets?limit=1", `/v1/pets/${petId}`, "/v1/store/orders"];
  const statuses = [];
  for (const path of paths) statuses.push(await ask(path));
  expect(statuses).toEqual([200, 200, 501]);
  // The public documentation and OPTIONS, more often than the limit allows: not counted.
  for (let i = 0; i < LIMIT + 2; i++) {
    expect(await ask("/v1/openapi.json")).toBe(200);
    expect(await ask("/v1/pets", "OPTIONS")).toBe(204);
  }
  // Exactly the id and the owner (an operator key's own chain): neither the key nor its
  // hash, nor any part of them.
  expect(seen).toEqual(
    Array(3)
      .fill([`key:${id}`, `owner:key:${id}`])
      .flat(),
  );
});

const KEY_OVER = /This API key exceeded/;
const OWNER_OVER = /account .* exceeded the request rate its keys share/;

it(`an account's keys share ${ACCOUNT_LIMIT} responses a minute: neither a second key nor a rotation resets it`, async () => {
  await freshWindow();
  const [a, b] = [await createKey("account-a"), await createKey("account-b")];
  await createAccount([a.id, b.id]);
  await spend(a.key, LIMIT);
  await spend(b.key, ACCOUNT_LIMIT - LIMIT);
  // b has spent less than its own limit: the account's budget refuses it.
  await expectRateLimited(await call("/v1/pets?limit=1", { key: b.key }), OWNER_OVER);
  await expectRateLimited(await call("/v1/pets?limit=1", { key: a.key }), KEY_OVER);
  const successor = await rotateKey(a.id, { graceSeconds: 0 });
  await expectRateLimited(await call("/v1/pets?limit=1", { key: successor.key }), OWNER_OVER);
  const third = await createKey("account-c");
  await createAccount([third.id]); // another account's first key
  await spend(third.key, 1);
});

it("an operator key counts alone: with the keys rotated from it, never with other operator keys", async () => {
  await freshWindow();
  const first = await createKey("operator-chain");
  await spend(first.key, LIMIT);
  const successor = await rotateKey(first.id, { graceSeconds: 0 });
  await spend(successor.key, ACCOUNT_LIMIT - LIMIT);
  await expectRateLimited(await call("/v1/pets?limit=1", { key: successor.key }), OWNER_OVER);
  await spend((await createKey("operator-other")).key, LIMIT);
});

it("counts /mcp against the key's rate like /v1: a spent key's tool call is an isError result with the 429 Error, its listing a 429", async () => {
  const { key } = await exhausted("rate-limit-mcp");
  const mcp = (method: string, params: unknown) =>
    exports.default.fetch(
      makeRequest("/mcp", {
        method: "POST",
        key,
        headers: {
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-11-25",
        },
        json: { jsonrpc: "2.0", id: 1, method, params },
      }),
    );
  // A call's key check is its API call's (with arguments or without): the 429 is its result.
  for (const params of [{ name: "listPets", arguments: { limit: 1 } }, { name: "listPets" }]) {
    const called = await mcp("tools/call", params);
    expect(called.status).toBe(200);
    const { result } = (await called.json()) as {
      result: { isError: boolean; content: Array<{ text: string }> };
    };
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0]?.text ?? "")).toMatchObject({
      code: "rate_limited",
      status: 429,
    });
  }
  await expectRateLimited(await mcp("tools/list", {}));
});
