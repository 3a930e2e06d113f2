// A key's audience: a key granted to an MCP client (audience "/mcp") is refused on every
// /v1 path like an invalid key (401 invalid_token), from D1 and from the verifier's memory
// alike, and accepted at /mcp and for the tool calls the MCP server makes on its behalf.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { rotateKeyStatements } from "../scripts/key-statements.ts";
import { mcpToolCallEnv } from "../src/auth/audience.ts";
import { displayPrefix, hashApiKey } from "../src/auth/keys.ts";
import { access } from "../src/auth/middleware.ts";
import { createApiKeyVerifier } from "../src/auth/verifier.ts";
import { systemClock } from "../src/clock.ts";
import { errorResponse, isFault, toApiError } from "../src/errors.ts";
import { requestContext } from "../src/http/request-context.ts";
import type { AppEnv } from "../src/http/types.ts";
import { OPERATIONS } from "../src/operations/index.ts";
import type { Scope } from "../src/scopes.ts";
import {
  call,
  createCheckedApp,
  createKey,
  exampleRequest,
  expectError,
  makeRequest,
  methodNotOn,
  unknownKey,
} from "./helpers.ts";

const INVALID = 'Bearer realm="petstore", error="invalid_token"';

/** A key whose audience is /mcp, as the platform's OAuth grant stores it. */
async function mcpKey(scopes: Scope[] = ["pets:read", "pets:write"]) {
  const created = await createKey("an MCP client", { scopes });
  await env.DB.prepare("UPDATE api_keys SET audience = '/mcp' WHERE id = ?1")
    .bind(created.id)
    .run();
  return created;
}

async function expectRefused(response: Response) {
  await expectError(response, 401, "unauthorized", /granted to an MCP client.*only at \/mcp/);
  expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
}

describe("a key whose audience is /mcp", () => {
  it("is refused on every operation of /v1, on unknown /v1 paths and with wrong methods", async () => {
    const { key } = await mcpKey();
    for (const op of OPERATIONS.filter((o) => o.scope !== undefined)) {
      const request = await exampleRequest(op);
      await expectRefused(await call(request.path, { ...request, key }));
    }
    await expectRefused(await call("/v1/nothing-here", { key }));
    await expectRefused(await call("/v1/pets", { method: methodNotOn("/pets"), key }));
  });

  it("stays refused once the verifier holds it in memory, and an ordinary key is not", async () => {
    const { key } = await mcpKey();
    const app = createCheckedApp({ verifier: createApiKeyVerifier(systemClock) });
    for (let i = 0; i < 3; i++) {
      await expectRefused(await app.fetch(makeRequest("/v1/pets", { key })));
    }
    const ordinary = await createKey("ordinary", { scopes: ["pets:read"] });
    expect((await app.fetch(makeRequest("/v1/pets", { key: ordinary.key }))).status).toBe(200);
  });

  it("passes /v1's middleware when the MCP server calls an operation for a tool", async () => {
    const { key } = await mcpKey();
    const app = createCheckedApp();
    const listed = await app.fetch(makeRequest("/v1/pets", { key }), mcpToolCallEnv(env));
    expect(listed.status, await listed.clone().text()).toBe(200);
    expect(Array.isArray(await listed.json())).toBe(true);
    // Its scopes still hold there: a read-only grant cannot create.
    const { key: readOnly } = await mcpKey(["pets:read"]);
    const created = await app.fetch(
      makeRequest("/v1/pets", {
        method: "POST",
        key: readOnly,
        json: { name: "Rex", categoryId: 1 },
      }),
      mcpToolCallEnv(env),
    );
    await expectError(created, 403, "insufficient_scope", /pets:write/);
    // The worker's own env is untouched: a client's request is still /v1's.
    await expectRefused(await call("/v1/pets", { key }));
  });

  it("is accepted by the access middleware at /mcp, where an unknown key is still 401", async () => {
    const verifier = createApiKeyVerifier(systemClock);
    const app = new Hono<AppEnv>()
      .use(requestContext(() => {}, systemClock, isFault))
      .all("/mcp", access(verifier), (c) => c.json({ keyId: c.var.apiKeyId }))
      .onError((err) => errorResponse(toApiError(err)));
    const { key, id } = await mcpKey();
    const fetch = (token: string) =>
      app.fetch(makeRequest("/mcp", { method: "POST", key: token }), env, createExecutionContext());
    const accepted = await fetch(key);
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toEqual({ keyId: id });
    const refused = await fetch(`${key.slice(0, -4)}AAAA`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("WWW-Authenticate")).toBe(INVALID);
  });
});

describe("rotating a key whose audience is /mcp", () => {
  it("with `npm run keys -- rotate`'s statements, the new key keeps the audience", async () => {
    const { id } = await mcpKey();
    const next = await unknownKey();
    const statements = rotateKeyStatements({
      oldId: id,
      keyHash: await hashApiKey(next),
      prefix: displayPrefix(next),
      graceSeconds: 0,
    });
    await env.DB.batch(statements.map((sql) => env.DB.prepare(sql)));
    await expectRefused(await call("/v1/pets", { key: next }));
    const listed = await createCheckedApp().fetch(
      makeRequest("/v1/pets", { key: next }),
      mcpToolCallEnv(env),
    );
    expect(listed.status).toBe(200);
  });
});
