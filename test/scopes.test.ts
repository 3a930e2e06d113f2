// The order under /v1: 401, then 429 (rate-limit.test.ts), then 403, then everything
// else, for every operation and the responses it must precede; scopes enforced from the
// operation table; keys from before scopes keep every scope. Real keys in the real local
// D1, through HTTP. Expiry across the cache tiers: edge-trips.test.ts.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { GET_PET_SUNSET_AT } from "../src/config.ts";
import { OPERATIONS, type Operation } from "../src/operations/index.ts";
import { SCOPES, type Scope } from "../src/scopes.ts";
import {
  type CallOptions,
  call,
  createCheckedApp,
  createKey,
  exampleRequest,
  expectDeprecationHeaders,
  expectError,
  insertPet,
  makeRequest,
  methodNotOn,
  unknownKey,
} from "./helpers.ts";

const REALM = 'Bearer realm="petstore"';
const INVALID = 'Bearer realm="petstore", error="invalid_token"';

/** Sends `op`'s request with `key`; returns the response and the status its scope allows. */
async function send(op: Operation, key: string) {
  const request = await exampleRequest(op);
  return { response: await call(request.path, { ...request, key }), allowed: request.allowed };
}

const SCOPED = OPERATIONS.filter((op) => op.scope !== undefined);

async function expectInsufficientScope(response: Response, scope: Scope): Promise<void> {
  const body = await expectError(response, 403, "insufficient_scope", new RegExp(`"${scope}"`));
  expect(body).toEqual({ code: "insufficient_scope", status: 403, message: body.message });
  expect(response.headers.get("WWW-Authenticate")).toBe(
    `Bearer realm="petstore", error="insufficient_scope", scope="${scope}"`,
  );
}

it("the operation table gives the contract's operations their scopes, none to public ones", () => {
  expect(
    Object.fromEntries(OPERATIONS.map((op) => [op.operationId, op.scope ?? null])),
  ).toMatchObject({
    listPets: "pets:read",
    createPet: "pets:write",
    getPet: "pets:read",
    updatePet: "pets:write",
    deletePet: "pets:write",
    listOrders: "orders:read",
    getOpenApiDocument: null,
    getDocs: null,
  });
});

/** Every non-empty set of scopes. */
const SCOPE_SETS = Array.from({ length: 2 ** SCOPES.length - 1 }, (_, n) =>
  SCOPES.filter((_, i) => (n + 1) & (1 << i)),
);

it.each(SCOPE_SETS.map((set) => [set.join(" "), set] as const))(
  "a key with %s, given in any order and repeated, is stored as that set and responded where the table says",
  async (_, set) => {
    const { key, id } = await createKey("scope-set", { scopes: [...set, ...set].reverse() });
    const stored = await env.DB.prepare("SELECT scopes FROM api_keys WHERE id = ?1")
      .bind(id)
      .first("scopes");
    expect(stored).toBe(set.join(" ")); // each scope once, in the order of SCOPES
    for (const op of SCOPED) {
      const { operationId, scope } = op;
      const { response, allowed } = await send(op, key);
      if (set.includes(scope as Scope)) {
        expect(response.status, operationId).toBe(allowed);
        await response.body?.cancel();
        continue;
      }
      await expectInsufficientScope(response, scope as Scope);
      if (op.deprecation) expectDeprecationHeaders(response);
      else expect(response.headers.get("Deprecation")).toBeNull();
    }
  },
);

const JSON_TYPE = { "Content-Type": "application/json" };
const TEXT = { "Content-Type": "text/plain" };

/** Every operation, and the responses authentication and scopes precede: 400, 404, 405, 415. */
const UNDER_V1: Array<[string, string, Scope | null, CallOptions?]> = [
  ["GET", "/v1/pets?limit=5", "pets:read"],
  ["POST", "/v1/pets", "pets:write", { json: { name: "Rex", categoryId: 1 } }],
  ["GET", "/v1/pets/1", "pets:read"],
  ["GET", "/v1/store/orders", "orders:read"],
  ["GET", "/v1/pets?limit=0", "pets:read"],
  ["GET", "/v1/pets?cursor=forged", "pets:read"],
  ["GET", "/v1/pets/abc", "pets:read"],
  ["GET", "/v1/pets/999999999", "pets:read"],
  ["POST", "/v1/pets", "pets:write", { json: { nope: 1 } }],
  ["POST", "/v1/pets", "pets:write", { body: "{", headers: JSON_TYPE }],
  ["POST", "/v1/pets", "pets:write", { body: "name=Rex", headers: TEXT }],
  ["GET", "/v1/cats", null],
  [methodNotOn("/pets"), "/v1/pets", null],
  [methodNotOn("/pets/{petId}"), "/v1/pets/1", null],
  ["POST", "/v1/store/orders", null],
];

describe.each(UNDER_V1)("%s %s (needs %s) %j", (method, path, scope, extra) => {
  const request: CallOptions = { ...extra, method };

  it("responds with 401 without a key, with WWW-Authenticate and no deprecation headers", async () => {
    const response = await call(path, request);
    await expectError(response, 401, "unauthorized", /Authorization: Bearer/);
    expect(response.headers.get("WWW-Authenticate")).toBe(REALM);
    expect(response.headers.get("Deprecation")).toBeNull();
  });

  it("responds with 401 invalid_token for a key that does not exist", async () => {
    const response = await call(path, { ...request, key: await unknownKey() });
    await expectError(response, 401, "unauthorized", /invalid or revoked/);
    expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
  });

  it("responds with 401 invalid_token for an expired key, before its scopes are looked at", async () => {
    const expiresAt = Math.floor(Date.now() / 1000) - 1;
    const { key } = await createKey("expired", { scopes: ["orders:read"], expiresAt });
    const response = await call(path, { ...request, key });
    await expectError(response, 401, "unauthorized", /expired/);
    expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
    expect(response.headers.get("Deprecation")).toBeNull();
  });

  it(
    scope
      ? `responds with 403 naming ${scope} to a key with every other scope`
      : "responds with 404 or 405 whatever the key's scopes",
    async () => {
      const { key } = await createKey("lacking", {
        scopes: SCOPES.filter((s) => s !== (scope ?? "pets:read")),
      });
      const headers = { ...request.headers, Origin: "https://app.example" };
      const response = await call(path, { ...request, key, headers });
      // The CORS headers, so a page can read WWW-Authenticate's scope.
      expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
      if (scope) {
        await expectInsufficientScope(response, scope);
        if (path.startsWith("/v1/pets/")) expectDeprecationHeaders(response);
        else expect(response.headers.get("Deprecation")).toBeNull();
        return;
      }
      const status = method === "GET" ? 404 : 405;
      await expectError(response, status, status === 405 ? "method_not_allowed" : "not_found");
      if (status === 405) expect(response.headers.get("Allow")).toBeTruthy();
      expect(response.headers.get("WWW-Authenticate")).toBeNull();
    },
  );
});

it("getPet past its sunset: 403 before 410 for a key without pets:read", async () => {
  const app = createCheckedApp({ clock: () => GET_PET_SUNSET_AT * 1000, log: () => {} });
  const writeOnly = await createKey("write-only", { scopes: ["pets:write"] });
  const petId = (await insertPet()).id;
  const denied = await app.fetch(makeRequest(`/v1/pets/${petId}`, { key: writeOnly.key }));
  await expectInsufficientScope(denied, "pets:read");
  const readOnly = await createKey("read-only", { scopes: ["pets:read"] });
  const gone = await app.fetch(makeRequest(`/v1/pets/${petId}`, { key: readOnly.key }));
  await expectError(gone, 410, "gone");
  expect(gone.headers.get("Cache-Control")).toBe("no-store");
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
