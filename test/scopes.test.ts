// Restricted keys (decisions.md, "Restricted keys"): scopes enforced by one middleware
// from the operation table, in the order 401, 429, 403, everything else; expiry exact
// on both sides of the instant whatever the auth cache holds; existing keys and
// local-dev-key keep every scope. Real keys in the real local D1, through HTTP.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { seedLocalDevKeyStatement } from "../scripts/key-statements.ts";
import { hashApiKey, LOCAL_DEV_KEY } from "../src/auth/keys.ts";
import { SCOPES, type Scope } from "../src/auth/scopes.ts";
import { createApiKeyVerifier } from "../src/auth/verifier.ts";
import { AUTH_CACHE_TTL_MS, GET_PET_SUNSET_AT } from "../src/config.ts";
import { OPERATIONS } from "../src/operations.ts";
import {
  call,
  createCheckedApp,
  createKey,
  createPetVia,
  expectDeprecationHeaders,
  expectError,
  makeRequest,
  verifyContext,
} from "./helpers.ts";
import { Recorder } from "./support/instrumentation.ts";

const importMetaEnv = (import.meta as { env?: Record<string, string | undefined> }).env;
const seed = Number(importMetaEnv?.VITE_FC_SEED ?? 20261122);

const INSUFFICIENT = (scope: Scope) =>
  `Bearer realm="petstore", error="insufficient_scope", scope="${scope}"`;

let petId: number;

beforeAll(async () => {
  const { key } = await createKey("scopes-setup");
  petId = (await createPetVia(key, { name: "Scoped", categoryId: 1 })).id;
});

/** One request per operation of the table (written out, so a table change fails here). */
function requestFor(operationId: string): { method: string; path: string; json?: unknown } {
  switch (operationId) {
    case "listPets":
      return { method: "GET", path: "/v1/pets?limit=1" };
    case "createPet":
      return { method: "POST", path: "/v1/pets", json: { name: "Scoped", categoryId: 1 } };
    case "getPet":
      expect(petId, "made in beforeAll").toBeGreaterThan(0);
      return { method: "GET", path: `/v1/pets/${petId}` };
    case "listOrders":
      return { method: "GET", path: "/v1/store/orders" };
    default:
      throw new Error(`no request written for ${operationId}`);
  }
}

/** What an operation answers a key that has its scope. */
const ALLOWED_STATUS: Record<string, number> = {
  listPets: 200,
  createPet: 201,
  getPet: 200,
  listOrders: 501,
};

const SCOPED = OPERATIONS.filter((op) => op.scope !== undefined);

async function expectInsufficientScope(response: Response, scope: Scope): Promise<void> {
  const body = await expectError(response, 403, "insufficient_scope", new RegExp(`"${scope}"`));
  expect(body).toEqual({ code: "insufficient_scope", status: 403, message: body.message });
  expect(response.headers.get("WWW-Authenticate")).toBe(INSUFFICIENT(scope));
}

describe("the operation table", () => {
  it("names exactly one scope for every operation that needs a key, and none for public ones", () => {
    expect(Object.fromEntries(OPERATIONS.map((op) => [op.operationId, op.scope ?? null]))).toEqual({
      listPets: "pets:read",
      createPet: "pets:write",
      getPet: "pets:read",
      listOrders: "orders:read",
      getOpenApiDocument: null,
      getDocs: null,
    });
  });
});

describe.each(SCOPED)("$operationId needs $scope", (op) => {
  const scope = op.scope as Scope;

  it("answers 403 insufficient_scope to a key with every other scope, naming the scope", async () => {
    const { key } = await createKey(`without-${scope}`, {
      scopes: SCOPES.filter((s) => s !== scope),
    });
    const request = requestFor(op.operationId);
    const response = await call(request.path, { ...request, key });
    await expectInsufficientScope(response, scope);
    if (op.operationId === "getPet") expectDeprecationHeaders(response);
    else expect(response.headers.get("Deprecation")).toBeNull();
  });

  it("answers a key that has only that scope", async () => {
    const { key } = await createKey(`only-${scope}`, { scopes: [scope] });
    const request = requestFor(op.operationId);
    const response = await call(request.path, { ...request, key });
    expect(response.status, await response.clone().text()).toBe(ALLOWED_STATUS[op.operationId]);
    await response.body?.cancel();
  });
});

describe("order under /v1: 401, then 429, then 403, then everything else", () => {
  let readOnly: string;
  let writeOnly: string;

  beforeAll(async () => {
    readOnly = (await createKey("read-only", { scopes: ["pets:read"] })).key;
    writeOnly = (await createKey("write-only", { scopes: ["pets:write"] })).key;
  });

  it("a read-only key posting a bad body gets 403, not 400 or 415", async () => {
    for (const options of [
      { json: { nope: 1 } },
      { body: "{", headers: { "Content-Type": "application/json" } },
      { body: "name=Rex", headers: { "Content-Type": "text/plain" } },
    ]) {
      const response = await call("/v1/pets", { method: "POST", key: readOnly, ...options });
      await expectInsufficientScope(response, "pets:write");
    }
  });

  it("a write-only key gets 403 for a bad query, a bad cursor and a bad petId", async () => {
    for (const path of ["/v1/pets?limit=0", "/v1/pets?cursor=forged", "/v1/pets/abc"]) {
      await expectInsufficientScope(await call(path, { key: writeOnly }), "pets:read");
    }
  });

  it("a write-only key gets 403 for an unknown pet, and getPet's deprecation headers", async () => {
    const response = await call("/v1/pets/999999999", { key: writeOnly });
    await expectInsufficientScope(response, "pets:read");
    expectDeprecationHeaders(response);
  });

  it("a method the path does not have is 405 whatever the scopes", async () => {
    for (const [method, path] of [
      ["DELETE", "/v1/pets"],
      ["PUT", "/v1/pets/1"],
      ["POST", "/v1/store/orders"],
    ] as const) {
      const response = await call(path, { method, key: writeOnly });
      await expectError(response, 405, "method_not_allowed");
      expect(response.headers.get("Allow")).toBeTruthy();
    }
  });

  it("an unknown path is 404 whatever the scopes", async () => {
    await expectError(await call("/v1/cats", { key: writeOnly }), 404, "not_found");
  });

  it("OPTIONS and the public documentation need no key and no scope", async () => {
    const preflight = await call("/v1/pets", {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("Allow")).toContain("POST");
    for (const path of ["/v1/openapi.json", "/v1/docs"]) {
      const response = await call(path, { key: writeOnly });
      expect(response.status).toBe(200);
      await response.body?.cancel();
    }
  });

  it("a 403 carries the CORS headers, so a browser can read WWW-Authenticate's scope", async () => {
    const response = await call("/v1/pets", {
      method: "POST",
      key: readOnly,
      json: { name: "Nope", categoryId: 1 },
      headers: { Origin: "https://app.example" },
    });
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    await expectInsufficientScope(response, "pets:write");
  });

  it("getPet past its sunset: 403 before 410 for a key without pets:read", async () => {
    const app = createCheckedApp({ clock: () => GET_PET_SUNSET_AT * 1000, log: () => {} });
    const denied = await app.fetch(makeRequest(`/v1/pets/${petId}`, { key: writeOnly }));
    await expectInsufficientScope(denied, "pets:read");
    const gone = await app.fetch(makeRequest(`/v1/pets/${petId}`, { key: readOnly }));
    await expectError(gone, 410, "gone");
    expect(gone.headers.get("Cache-Control")).toBe("no-store");
  });
});

describe("keys made without a scope, keys from before scopes, and local-dev-key", () => {
  it("a key created without a scope has all three", async () => {
    const { key, id } = await createKey("no-scope-given");
    const row = await env.DB.prepare("SELECT scopes FROM api_keys WHERE id = ?1")
      .bind(id)
      .first<{ scopes: string }>();
    expect(row?.scopes).toBe("pets:read pets:write orders:read");
    for (const op of SCOPED) {
      const request = requestFor(op.operationId);
      const response = await call(request.path, { ...request, key });
      expect(response.status).toBe(ALLOWED_STATUS[op.operationId]);
      await response.body?.cancel();
    }
  });

  it("the database refuses a key without any scope", async () => {
    await expect(
      env.DB.prepare(
        "INSERT INTO api_keys (key_hash, prefix, label, scopes, created_at) VALUES ('no-scope', 'p', 'l', ' ', 1)",
      ).run(),
    ).rejects.toThrow(/CHECK constraint failed/);
  });

  it("migration 0004 gives every key that existed before it all three scopes, no expiry", async () => {
    // Replays the real migration files on a copy of the table named differently: the
    // schema before 0004, a key stored the way keys were stored then, then 0004 itself.
    const migrations = env.TEST_MIGRATIONS;
    const index = migrations.findIndex((m) => m.name.startsWith("0004_"));
    expect(index).toBeGreaterThan(0);
    const rename = (sql: string) => sql.replaceAll("api_keys", "legacy_api_keys");
    const before = migrations.slice(0, index).flatMap((m) => m.queries);
    const keysTable = before.filter((q) => /CREATE TABLE api_keys/.test(q));
    expect(keysTable).toHaveLength(1);
    await env.DB.exec("DROP TABLE IF EXISTS legacy_api_keys");
    for (const query of keysTable) await env.DB.prepare(rename(query)).run();
    await env.DB.prepare(
      "INSERT INTO legacy_api_keys (key_hash, prefix, label, created_at) VALUES ('h', 'psk_old', 'old', 1)",
    ).run();
    for (const query of migrations[index]?.queries ?? []) await env.DB.prepare(rename(query)).run();
    const row = await env.DB.prepare(
      "SELECT scopes, expires_at, last_used_at, revoked_at FROM legacy_api_keys",
    ).first();
    expect(row).toEqual({
      scopes: "pets:read pets:write orders:read",
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
    });
    await env.DB.exec("DROP TABLE legacy_api_keys");
  });

  it("local-dev-key is seeded with every scope and no expiry, and re-seeding restores both", async () => {
    const hash = await hashApiKey(LOCAL_DEV_KEY);
    await env.DB.prepare(seedLocalDevKeyStatement(hash)).run();
    await env.DB.prepare(
      "UPDATE api_keys SET scopes = 'pets:read', expires_at = 1 WHERE key_hash = ?1",
    )
      .bind(hash)
      .run();
    await env.DB.prepare(seedLocalDevKeyStatement(hash)).run();
    const row = await env.DB.prepare(
      "SELECT scopes, expires_at, revoked_at FROM api_keys WHERE key_hash = ?1",
    )
      .bind(hash)
      .first();
    expect(row).toEqual({
      scopes: "pets:read pets:write orders:read",
      expires_at: null,
      revoked_at: null,
    });
    // ENVIRONMENT is "local" in the tests: the seeded key works on every operation.
    const response = await call("/v1/pets", {
      method: "POST",
      key: LOCAL_DEV_KEY,
      json: { name: "Dev", categoryId: 1 },
    });
    expect(response.status).toBe(201);
    await env.DB.prepare("DELETE FROM api_keys WHERE key_hash = ?1").bind(hash).run();
  });
});

describe("expiry is exact (injected clock)", () => {
  const EXPIRES = 2_000_000_000; // unix seconds
  const INVALID = 'Bearer realm="petstore", error="invalid_token"';

  it("a key works until the millisecond before its expiry and is refused from the instant on, though cached", async () => {
    const { key } = await createKey("expiring", { expiresAt: EXPIRES });
    let now = EXPIRES * 1000 - AUTH_CACHE_TTL_MS / 2;
    const app = createCheckedApp({ clock: () => now, log: () => {} });
    const get = () => app.fetch(makeRequest("/v1/pets?limit=1", { key }));

    const first = await get(); // cached from here on, with half the TTL left before expiry
    expect(first.status).toBe(200);
    await first.body?.cancel();
    now = EXPIRES * 1000 - 1;
    const last = await get();
    expect(last.status).toBe(200);
    await last.body?.cancel();

    now = EXPIRES * 1000;
    const refused = await get();
    await expectError(refused, 401, "unauthorized", /expired/);
    expect(refused.headers.get("WWW-Authenticate")).toBe(INVALID);
    // Every operation, and not a 403 or 400 either: the key is as good as unknown.
    now = EXPIRES * 1000 + 60_000;
    for (const [path, options] of [
      ["/v1/pets", { method: "POST", json: { nope: 1 } }],
      [`/v1/pets/${petId}`, {}],
      ["/v1/store/orders", {}],
    ] as const) {
      const response = await app.fetch(makeRequest(path, { key, ...options }));
      await expectError(response, 401, "unauthorized", /expired/);
      expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
      expect(response.headers.get("Deprecation")).toBeNull();
    }
  });

  it("the cache entry of a key never outlives the key's expiry", async () => {
    const { key, id } = await createKey("expiring-cache", { expiresAt: EXPIRES });
    let now = EXPIRES * 1000 - 5;
    const recorder = new Recorder();
    const verifier = createApiKeyVerifier(() => now);
    const counting = { ...env, DB: recorder.d1(env.DB) };
    expect(await verifier.verify(key, verifyContext(counting))).toEqual({
      ok: true,
      key: { id, scopes: [...SCOPES] },
    });
    now = EXPIRES * 1000 - 1;
    expect((await verifier.verify(key, verifyContext(counting))).ok).toBe(true);
    expect(recorder.sql()).toHaveLength(1); // the second answer came from the cache
    now = EXPIRES * 1000;
    expect(await verifier.verify(key, verifyContext(counting))).toEqual({
      ok: false,
      reason: "expired",
    });
    // Refused at the expiry instant it knew, with no lookup: the entry carries the expiry.
    expect(recorder.sql()).toHaveLength(1);
  });

  it("an expired key is refused by an isolate that never saw it", async () => {
    const { key } = await createKey("already-expired", {
      expiresAt: Math.floor(Date.now() / 1000) - 1,
    });
    const response = await call("/v1/pets", { key });
    await expectError(response, 401, "unauthorized", /expired/);
    expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
  });
});

describe(`scope sets (fast-check, seed ${seed})`, () => {
  it("any scopes, in any order and repeated, are stored as their set and enforced exactly by the table", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...SCOPES), { minLength: 1, maxLength: 5 }),
        fc.constantFrom(...SCOPED),
        async (given, op) => {
          const { key, id } = await createKey("scope-set", { scopes: given });
          const stored = await env.DB.prepare("SELECT scopes FROM api_keys WHERE id = ?1")
            .bind(id)
            .first<{ scopes: string }>();
          // The stored form: each scope once, in the order of SCOPES.
          expect(stored?.scopes).toBe(SCOPES.filter((s) => given.includes(s)).join(" "));
          const request = requestFor(op.operationId);
          const response = await call(request.path, { ...request, key });
          if (given.includes(op.scope as Scope)) {
            expect(response.status).toBe(ALLOWED_STATUS[op.operationId]);
            await response.body?.cancel();
          } else {
            await expectInsufficientScope(response, op.scope as Scope);
          }
        },
      ),
      { seed, numRuns: 80 },
    );
  });
});
