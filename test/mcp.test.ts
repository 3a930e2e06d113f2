// The MCP server at /mcp (docs/agents.md): its tools derived from the operation table, the
// same keys and scopes as /v1, the 401 and 403 challenges, the Origin rule, tool results
// and errors. Through the API worker's fetch, which hands /mcp to the MCP worker as it
// deploys (vitest.config.ts), over the real local D1.

import { env, exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import { beforeAll, describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { type Tool, toolsAt, toolsFrom } from "../mcp/src/tools.ts";
import { GET_PET_SUNSET_AT } from "../src/config.ts";
import { MCP_METADATA_PATH } from "../src/mcp-contract.ts";
import openApiDocument from "../src/openapi/openapi.json" with { type: "json" };
import {
  createPet,
  deletePet,
  getPet,
  listPets,
  OPERATIONS,
  type Operation,
} from "../src/operations/index.ts";
import { SCOPES, type Scope } from "../src/scopes.ts";
import { BASE, createKey, unknownKey } from "./helpers.ts";

const METADATA_URL = `${BASE}${MCP_METADATA_PATH}`;
const now = () => Date.now() / 1000;
const tool = (name: string) => toolsAt(now()).find((t) => t.listed.name === name) as Tool;
/** The tools the table declares, in its order. */
const TOOL_NAMES = OPERATIONS.filter((op) => op.mcp.tool).map((op) => op.operationId);

/** A JSON-RPC request to /mcp as a 2025-11-25 client sends it. */
function mcp(
  method: string,
  params?: unknown,
  options: { key?: string; headers?: Record<string, string>; httpMethod?: string } = {},
): Promise<Response> {
  const headers = new Headers({
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
    ...options.headers,
  });
  if (options.key) headers.set("Authorization", `Bearer ${options.key}`);
  const httpMethod = options.httpMethod ?? "POST";
  const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method, ...(params ? { params } : {}) });
  return exports.default.fetch(
    new Request(`${BASE}/mcp`, {
      method: httpMethod,
      headers,
      body: httpMethod === "POST" ? body : null,
    }),
  );
}

interface RpcAnswer {
  jsonrpc: "2.0";
  id: number;
  result?: Record<string, unknown> & {
    tools?: Array<{ name: string }>;
    isError?: boolean;
    content?: Array<{ type: string; text: string }>;
    structuredContent?: Record<string, unknown>;
  };
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** A 200 JSON-RPC answer's body. */
async function answered(response: Response): Promise<RpcAnswer> {
  expect(response.status).toBe(200);
  expect(response.headers.get("Content-Type")).toBe("application/json");
  const body = (await response.json()) as RpcAnswer;
  expect(body).toMatchObject({ jsonrpc: "2.0", id: 7 });
  return body;
}

const callTool = (key: string, name: string, args: Record<string, unknown>) =>
  mcp("tools/call", { name, arguments: args }, { key });

/** A tool's successful result: its structured content, which must match the output schema. */
async function structured(response: Response, name: string) {
  const { result, error } = await answered(response);
  expect(error).toBeUndefined();
  expect(result?.isError).toBeUndefined();
  const content = result?.structuredContent as Record<string, unknown>;
  expect(JSON.parse(result?.content?.[0]?.text ?? "")).toEqual(content);
  const check = new Validator(tool(name).listed.outputSchema as object, "2020-12", false);
  expect(check.validate(content).errors).toEqual([]);
  return content;
}

async function listedTools(key: string): Promise<string[]> {
  const { result } = await answered(await mcp("tools/list", {}, { key }));
  return (result?.tools ?? []).map((t) => t.name);
}

const petCount = async (name: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM pets WHERE name = ?1")
      .bind(name)
      .first<{ n: number }>()
  )?.n;

let key: string;
beforeAll(async () => {
  ({ key } = await createKey("mcp"));
});

describe("the tools, derived from the operation table", () => {
  const jsonSchema = (schema: z.ZodMiniType, io: "input" | "output") =>
    z.toJSONSchema(schema, { target: "draft-2020-12", io }) as {
      properties?: Record<string, unknown>;
    };

  it("are the operations that say they are tools; every other one says why not", async () => {
    const names = toolsAt(now()).map((t) => t.listed.name);
    expect(names).toEqual(TOOL_NAMES);
    const others = OPERATIONS.filter((op) => !op.mcp.tool);
    expect(Object.fromEntries(others.map((op) => [op.operationId, op.mcp]))).toEqual({
      listOrders: { tool: false, reason: expect.stringMatching(/501/) },
      getDocs: { tool: false, reason: expect.stringMatching(/people/) },
    });
    // Served, not only derived: a key with every scope is listed every one of them.
    expect(await listedTools(key)).toEqual(TOOL_NAMES);
  });

  it("makes a new operation a tool with no other change", () => {
    const adoptPet: Operation = {
      ...createPet,
      operationId: "adoptPet",
      path: "/pets/{petId}/adoption",
      params: getPet.params,
      summary: "Adopt an animal",
    };
    const made = toolsFrom([...OPERATIONS, adoptPet]).find((t) => t.listed.name === "adoptPet");
    expect(made?.scope).toBe("pets:write");
    expect(Object.keys(made?.listed.inputSchema.properties ?? {})).toEqual([
      "petId",
      "name",
      "categoryId",
      "status",
      "idempotencyKey",
    ]);
    expect(made?.listed.annotations?.readOnlyHint).toBe(false);
  });

  it("takes their input and output schemas from the zod schemas that validate the API", () => {
    const list = tool("listPets").listed;
    const query = jsonSchema(listPets.query, "input").properties ?? {};
    expect(Object.keys(list.inputSchema.properties ?? {})).toEqual(Object.keys(query));
    expect(list.inputSchema.properties?.limit).toEqual(query.limit);
    expect(list.inputSchema.properties?.status).toEqual(query.status);
    expect(list.outputSchema?.required).toEqual(["items"]);
    expect(Object.keys(list.outputSchema?.properties ?? {})).toEqual(["items", "nextCursor"]);

    const create = tool("createPet").listed;
    expect(create.inputSchema.required).toEqual(["name", "categoryId"]);
    expect(create.inputSchema.properties?.name).toEqual(
      (jsonSchema(createPet.body, "input") as { $defs: { PetName: unknown } }).$defs.PetName,
    );
    expect(create.outputSchema?.required).toEqual(["id", "name", "categoryId", "status"]);
    expect(tool("getPet").listed.inputSchema.required).toEqual(["petId"]);
    // Every named part is written in place: clients need no $ref resolution.
    expect(JSON.stringify(toolsAt(now()).map((t) => t.listed))).not.toContain("$ref");
  });

  it("annotates by method: reads read-only, a create adds, a change overwrites, a removal destroys", () => {
    // [readOnly, idempotent, destructive] per method (RFC 9110's safe and idempotent).
    const hints: Record<string, [boolean, boolean, boolean]> = {
      get: [true, true, false],
      post: [false, false, false],
      patch: [false, false, true],
      delete: [false, true, true],
    };
    for (const t of toolsAt(now())) {
      const [readOnlyHint, idempotentHint, destructiveHint] = hints[t.operation.method] ?? [];
      expect(t.listed.annotations, t.listed.name).toMatchObject({
        readOnlyHint,
        idempotentHint,
        destructiveHint,
        openWorldHint: false,
        title: t.operation.summary,
      });
    }
    expect(tool("deletePet").listed.annotations?.destructiveHint).toBe(true);
  });

  it("gives idempotencyKey to exactly the operations that take an Idempotency-Key, described for an agent", () => {
    const paths = openApiDocument.paths as Record<
      string,
      Record<string, { parameters?: Array<{ name: string }>; operationId?: string }>
    >;
    const takingTheHeader = Object.values(paths)
      .flatMap((item) => Object.values(item))
      .filter((op) => op.parameters?.some((p) => p.name === "Idempotency-Key"))
      .map((op) => op.operationId);
    const withKey = toolsAt(now()).filter(
      (t) => "idempotencyKey" in (t.listed.inputSchema.properties ?? {}),
    );
    expect(withKey.map((t) => t.listed.name)).toEqual(takingTheHeader);
    expect(withKey.map((t) => t.listed.name)).toEqual(["createPet"]);
    expect(tool("createPet").listed.inputSchema.properties?.idempotencyKey).toMatchObject({
      type: "string",
      description: expect.stringMatching(/retry/),
    });
    expect(tool("createPet").listed.inputSchema.required).not.toContain("idempotencyKey");
  });

  it("says getPet is deprecated, names listPets instead, and drops it at the sunset", () => {
    const deprecated = tool("getPet").listed;
    expect(deprecated.description).toMatch(
      /Deprecated since 2026-11-01: use `listPets` instead\. This tool is removed on 2030-12-05\./,
    );
    expect(deprecated._meta).toEqual({ deprecated: true });
    const names = (at: number) => toolsAt(at).map((t) => t.listed.name);
    expect(names(GET_PET_SUNSET_AT - 1)).toContain("getPet");
    expect(names(GET_PET_SUNSET_AT)).not.toContain("getPet");
    expect(names(GET_PET_SUNSET_AT)).toContain("listPets");
  });
});

describe("the same keys: 401 points at the metadata, 403 names the scope", () => {
  it("refuses a request without a key, whatever it asks, with the challenge of RFC 9728", async () => {
    const requests = [
      mcp("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      }),
      mcp("tools/list"),
      mcp("tools/call", { name: "listPets", arguments: {} }),
      mcp("tools/call", { name: "noSuchTool", arguments: {} }),
      mcp("ping", undefined, { httpMethod: "GET" }),
    ];
    for (const response of await Promise.all(requests)) {
      expect(response.status).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toBe(
        `Bearer realm="petstore", resource_metadata="${METADATA_URL}"`,
      );
      expect(await response.json()).toEqual({
        code: "unauthorized",
        message: 'Missing API key: send "Authorization: Bearer <API_KEY>".',
        status: 401,
      });
    }
  });

  it("refuses an unknown key with invalid_token, for a tool call as for a listing", async () => {
    const stranger = await unknownKey();
    for (const response of [
      await mcp("tools/list", {}, { key: stranger }),
      await callTool(stranger, "createPet", { name: "Nobody", categoryId: 1 }),
    ]) {
      expect(response.status).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toBe(
        `Bearer realm="petstore", error="invalid_token", resource_metadata="${METADATA_URL}"`,
      );
      expect(await response.json()).toMatchObject({ code: "unauthorized", status: 401 });
    }
    expect(await petCount("Nobody")).toBe(0);
  });

  it("checks the key of a tool call the protocol refuses before the API is called", async () => {
    const badVersion = { "MCP-Protocol-Version": "1999-01-01" };
    const args = { name: "listPets", arguments: {} };
    const keyless = await mcp("tools/call", args, { headers: badVersion });
    expect(keyless.status).toBe(401);
    expect(await keyless.json()).toMatchObject({ code: "unauthorized", status: 401 });
    const keyed = await mcp("tools/call", args, { key, headers: badVersion });
    expect(keyed.status).toBe(400);
    expect(await keyed.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { message: expect.stringMatching(/protocol version/i) },
    });
  });

  it("lists to each key the tools its scopes allow", async () => {
    const seen: Record<string, string[]> = {};
    for (const scopes of [
      ["pets:read"],
      ["pets:write"],
      ["orders:read"],
      [...SCOPES],
    ] as Scope[][]) {
      const { key: scoped } = await createKey("mcp-scoped", { scopes });
      seen[scopes.join(" ")] = await listedTools(scoped);
    }
    const allowed = (scopes: readonly string[]) =>
      OPERATIONS.filter((op) => op.mcp.tool && (!op.scope || scopes.includes(op.scope))).map(
        (op) => op.operationId,
      );
    expect(seen).toEqual({
      "pets:read": allowed(["pets:read"]),
      "pets:write": allowed(["pets:write"]),
      "orders:read": allowed(["orders:read"]),
      "pets:read pets:write orders:read": allowed(SCOPES),
    });
    expect(seen["pets:write"]).toContain("deletePet");
  });

  it("answers a call beyond the key's scopes with 403 insufficient_scope naming the scope, and creates nothing", async () => {
    const { key: readOnly } = await createKey("mcp-read-only", { scopes: ["pets:read"] });
    const response = await callTool(readOnly, "createPet", { name: "Forbidden", categoryId: 1 });
    expect(response.status).toBe(403);
    expect(response.headers.get("WWW-Authenticate")).toBe(
      `Bearer realm="petstore", error="insufficient_scope", scope="pets:write", resource_metadata="${METADATA_URL}"`,
    );
    expect(await response.json()).toMatchObject({ code: "insufficient_scope", status: 403 });
    expect(await petCount("Forbidden")).toBe(0);
  });

  it("counts a tool call as the key's use of the operation", async () => {
    const { key: fresh, id } = await createKey("mcp-usage");
    await structured(await callTool(fresh, "listPets", { limit: 1 }), "listPets");
    await expect
      .poll(async () =>
        env.DB.prepare("SELECT sum(count) AS n FROM api_key_usage WHERE api_key_id = ?1")
          .bind(id)
          .first<{ n: number | null }>(),
      )
      .toEqual({ n: 1 });
  });

  it("publishes its Protected Resource Metadata, the developer platform as its authorization server", async () => {
    const response = await exports.default.fetch(new Request(METADATA_URL));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      resource: `${BASE}/mcp`,
      authorization_servers: [env.PLATFORM_ORIGIN],
      scopes_supported: [...SCOPES],
      bearer_methods_supported: ["header"],
      resource_name: "Pet Store API",
      resource_documentation: `${BASE}/v1/docs`,
    });
    const post = await exports.default.fetch(new Request(METADATA_URL, { method: "POST" }));
    expect(post.status).toBe(405);
    expect(post.headers.get("Allow")).toBe("GET, HEAD");
  });
});

describe("Origin", () => {
  it("refuses a web page's origin outside the allow-list with 403 before anything else", async () => {
    for (const origin of ["https://evil.example.com", "null", "http://localhost.evil.example"]) {
      for (const withKey of [undefined, key]) {
        const response = await mcp("tools/list", {}, { key: withKey, headers: { Origin: origin } });
        expect(response.status).toBe(403);
        expect(response.headers.get("WWW-Authenticate")).toBeNull();
        expect(await response.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
      }
    }
  });

  it("serves the allow-listed names (locally the loopback ones, at any port) and clients that send none", async () => {
    expect(await listedTools(key)).toEqual(TOOL_NAMES);
    for (const origin of ["http://localhost:6274", "http://127.0.0.1:8787"]) {
      const { result } = await answered(
        await mcp("tools/list", {}, { key, headers: { Origin: origin } }),
      );
      expect(result?.tools?.map((t) => t.name)).toEqual(TOOL_NAMES);
    }
  });
});

describe("tool results", () => {
  it("pages listPets by nextCursor until the last page", async () => {
    const { key: mine } = await createKey("mcp-pages");
    const made: number[] = [];
    for (let i = 0; i < 5; i++) {
      const pet = await structured(
        await callTool(mine, "createPet", { name: `page-${i}`, categoryId: 3, status: "pending" }),
        "createPet",
      );
      made.push(pet.id as number);
    }
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await structured(
        await callTool(mine, "listPets", {
          status: "pending",
          limit: 2,
          ...(cursor ? { cursor } : {}),
        }),
        "listPets",
      );
      seen.push(...(page.items as Array<{ id: number }>).map((p) => p.id));
      cursor = page.nextCursor as string | undefined;
      pages++;
    } while (cursor);
    expect(seen).toEqual(made);
    expect(pages).toBe(3);
  });

  it("creates once for one idempotencyKey, however often the call is retried", async () => {
    const idempotencyKey = `mcp-${crypto.randomUUID()}`;
    const args = { name: "Retried", categoryId: 4, idempotencyKey };
    const first = await structured(await callTool(key, "createPet", args), "createPet");
    const again = await structured(await callTool(key, "createPet", args), "createPet");
    expect(again).toEqual(first);
    expect(first).toMatchObject({ name: "Retried", categoryId: 4, status: "available" });
    expect(await petCount("Retried")).toBe(1);

    const other = await answered(await callTool(key, "createPet", { ...args, categoryId: 5 }));
    expect(other.result?.isError).toBe(true);
    expect(JSON.parse(other.result?.content?.[0]?.text ?? "")).toMatchObject({
      code: "idempotency_key_reused",
      status: 422,
    });
    expect(await petCount("Retried")).toBe(1);
  });

  it("answers a failure as an isError result carrying the Error object", async () => {
    const { result } = await answered(await callTool(key, "getPet", { petId: 987654321 }));
    expect(result).toEqual({
      isError: true,
      content: [
        {
          type: "text",
          text: JSON.stringify({
            code: "not_found",
            message: "No animal has petId 987654321.",
            status: 404,
          }),
        },
      ],
    });
  });

  it("answers a malformed call as a protocol error carrying the API's Error, and creates nothing", async () => {
    const limit = await answered(await callTool(key, "listPets", { limit: 0 }));
    expect(limit.error).toMatchObject({
      code: -32602,
      data: { code: "invalid_parameter", status: 400, details: [{ field: "limit" }] },
    });
    const unnamed = await answered(
      await callTool(key, "createPet", { categoryId: 1, colour: "red" }),
    );
    expect(unnamed.error).toMatchObject({
      code: -32602,
      data: { code: "validation_failed", status: 400 },
    });
    expect(unnamed.error?.data?.details).toEqual([
      { field: "name", message: "is required" },
      { field: "colour", message: "is not an accepted field" },
    ]);
    const unknown = await answered(await callTool(key, "listOrders", {}));
    expect(unknown.error).toMatchObject({ code: -32602, message: 'No tool named "listOrders".' });
    expect(unknown.result).toBeUndefined();
  });

  it("changes and removes an animal: updatePet answers the pet, deletePet says it is gone", async () => {
    const pet = await structured(
      await callTool(key, "createPet", { name: "Sold soon", categoryId: 2 }),
      "createPet",
    );
    const sold = await structured(
      await callTool(key, "updatePet", { petId: pet.id, status: "sold", name: "Sold" }),
      "updatePet",
    );
    expect(sold).toEqual({ ...pet, status: "sold", name: "Sold" });
    const again = await answered(
      await callTool(key, "updatePet", { petId: pet.id, status: "available" }),
    );
    expect(again.result?.isError).toBe(true);
    expect(JSON.parse(again.result?.content?.[0]?.text ?? "")).toMatchObject({
      code: "invalid_transition",
      status: 409,
    });
    const removed = await answered(await callTool(key, "deletePet", { petId: pet.id }));
    expect(removed.result).toEqual({
      content: [{ type: "text", text: deletePet.success?.description }],
    });
    const gone = await answered(await callTool(key, "deletePet", { petId: pet.id }));
    expect(JSON.parse(gone.result?.content?.[0]?.text ?? "")).toMatchObject({ status: 404 });
    expect(await petCount("Sold")).toBe(0);
  });

  it("serves getPet with the deprecated operation's answer until its sunset", async () => {
    const pet = await structured(
      await callTool(key, "createPet", { name: "Old", categoryId: 2 }),
      "createPet",
    );
    expect(await structured(await callTool(key, "getPet", { petId: pet.id }), "getPet")).toEqual(
      pet,
    );
  });
});

describe("the transport", () => {
  it("initializes statelessly: no session id, tools as its one capability", async () => {
    const response = await mcp(
      "initialize",
      { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      { key },
    );
    expect(response.headers.get("Mcp-Session-Id")).toBeNull();
    const { result } = await answered(response);
    expect(result).toMatchObject({
      protocolVersion: "2025-11-25",
      capabilities: { tools: {} },
      serverInfo: { name: "petstore", title: "Pet Store API" },
    });
  });

  it("answers GET and DELETE with 405 once the key is good (there is no stream to open or session to end)", async () => {
    for (const httpMethod of ["GET", "DELETE"]) {
      const response = await mcp("ping", undefined, { key, httpMethod });
      expect(response.status).toBe(405);
      expect(response.headers.get("Allow")).toBe("POST");
    }
  });
});
