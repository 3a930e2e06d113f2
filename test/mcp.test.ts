// The MCP server at /mcp (docs/agents.md): its tools derived from the operation table, the
// same keys and scopes as /v1, the 401 and 403 challenges, the Origin rule, tool results
// and errors. Through the API worker's fetch, which hands /mcp to the MCP worker as it
// deploys (vitest.config.ts), over the real local D1.

import { env, exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { beforeAll, describe, expect, it, vi } from "vitest";
import * as z from "zod/mini";
import { TOOLS, type Tool, toolsAt } from "../mcp/src/calls.ts";
import * as shims from "../mcp/src/sdk-shims.ts";
import { toolsFile } from "../mcp/src/tools.ts";
import { ARGUMENT_WORDS, TOOL_WORDS, type ToolWords } from "../mcp/src/words.ts";
import packageJson from "../package.json" with { type: "json" };
import { GET_PET_SUNSET_AT } from "../src/config.ts";
import { type ApiAccess, MCP_METADATA_PATH, type McpService } from "../src/mcp-contract.ts";
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
import { HTTP_WORDING, proseOf } from "./support/agent-words.ts";

const METADATA_URL = `${BASE}${MCP_METADATA_PATH}`;
const INFO = { name: "t", version: "1" };
const now = () => Date.now() / 1000;
const tool = (name: string) => toolsAt(now()).find((t) => t.listed.name === name) as Tool;
/** The JSON Schema of one argument of a tool. */
const argument = (name: string, arg: string) =>
  tool(name).listed.inputSchema.properties?.[arg] as Record<string, unknown>;
/** The tools the table declares, in its order. */
const TOOL_NAMES = OPERATIONS.filter((op) => op.mcp.tool).map((op) => op.operationId);
/** The scopes they need, which a 401 names for an OAuth client to ask: no tool reads orders. */
const TOOL_SCOPES = "pets:read pets:write";

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

/** A POST to /mcp of `body` as it is: JSON, with `headers` (none: no key, no Accept). */
const postMcp = (body: string, headers: Record<string, string> = {}) =>
  exports.default.fetch(
    new Request(`${BASE}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body,
    }),
  );
/** The headers of a client that sends `key` and accepts both media types. */
const client = (key: string) => ({
  Authorization: `Bearer ${key}`,
  Accept: "application/json, text/event-stream",
});

interface RpcResponse {
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

/** A 200 JSON-RPC response's body. */
async function rpcResponse(response: Response): Promise<RpcResponse> {
  expect(response.status).toBe(200);
  expect(response.headers.get("Content-Type")).toBe("application/json");
  const body = (await response.json()) as RpcResponse;
  expect(body).toMatchObject({ jsonrpc: "2.0", id: 7 });
  return body;
}

const callTool = (key: string, name: string, args: Record<string, unknown>) =>
  mcp("tools/call", { name, arguments: args }, { key });

/** A tool's successful result: its structured content, which must match the output schema. */
async function structured(response: Response, name: string) {
  const { result, error } = await rpcResponse(response);
  expect(error).toBeUndefined();
  expect(result?.isError).toBeUndefined();
  const content = result?.structuredContent as Record<string, unknown>;
  expect(JSON.parse(result?.content?.[0]?.text ?? "")).toEqual(content);
  const check = new Validator(tool(name).listed.outputSchema as object, "2020-12", false);
  expect(check.validate(content).errors).toEqual([]);
  return content;
}

async function listedTools(key: string): Promise<string[]> {
  const { result } = await rpcResponse(await mcp("tools/list", {}, { key }));
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
      properties?: Record<string, Record<string, unknown>>;
      $defs?: Record<string, { properties: Record<string, Record<string, unknown>> }>;
    };
  /** `schema` without its prose, as the tools give the API's schemas. */
  const bare = ({ description: _d, examples: _e, ...rest }: Record<string, unknown> = {}) => rest;

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

  it("are served as `npm run openapi` derived them from today's table (tools.json is not stale)", () => {
    expect(TOOLS).toEqual(JSON.parse(JSON.stringify(toolsFile(OPERATIONS, openApiDocument))));
  });

  it("makes a new operation a tool once its words for agents are written, and not before", () => {
    const adoptPet: Operation = {
      ...createPet,
      operationId: "adoptPet",
      path: "/pets/{petId}/adoption",
      params: getPet.params,
      summary: "Adopt an animal",
    };
    const table = [...OPERATIONS, adoptPet];
    expect(() => toolsFile(table, openApiDocument)).toThrow(
      "adoptPet: a tool needs its words for agents (mcp/src/words.ts)",
    );
    const words = {
      title: "Adopt an animal",
      description: "Adopts an animal.",
      arguments: { status: "Its status once adopted." },
    };
    const withWords = { ...TOOL_WORDS, adoptPet: words };
    const made = toolsFile(table, openApiDocument, withWords).tools.at(-1);
    expect(made?.listed).toMatchObject({ name: "adoptPet", description: "Adopts an animal." });
    expect(made?.scope).toBe("pets:write");
    expect(made?.request).toMatchObject({ method: "POST", path: "/pets/{petId}/adoption" });
    expect(Object.keys(made?.listed.inputSchema.properties ?? {})).toEqual([
      "petId",
      "name",
      "categoryId",
      "status",
      "idempotencyKey",
    ]);
    expect(made?.listed.annotations?.readOnlyHint).toBe(false);
    // An argument no words describe stops the build, as a tool without words does.
    const colour = { ...adoptPet, query: z.object({ colour: z.string() }) };
    expect(() => toolsFile([colour], openApiDocument, withWords)).toThrow(
      "adoptPet: its argument colour needs words for agents",
    );
  });

  it("takes their input and output schemas from the zod schemas that validate the API, their prose from words.ts", () => {
    const list = tool("listPets").listed;
    const query = jsonSchema(listPets.query, "input").properties ?? {};
    expect(Object.keys(list.inputSchema.properties ?? {})).toEqual(Object.keys(query));
    expect(bare(argument("listPets", "limit"))).toEqual(bare(query.limit));
    expect(argument("listPets", "limit").description).toBe(TOOL_WORDS.listPets?.arguments?.limit);
    expect(bare(argument("listPets", "status"))).toEqual(bare(query.status));
    expect(list.outputSchema?.required).toEqual(["items"]);
    expect(Object.keys(list.outputSchema?.properties ?? {})).toEqual(["items", "nextCursor"]);

    const create = tool("createPet").listed;
    expect(create.inputSchema.required).toEqual(["name", "categoryId"]);
    const petName = jsonSchema(createPet.body, "input").$defs?.PetName;
    expect(bare(argument("createPet", "name"))).toEqual(bare(petName));
    expect(argument("createPet", "name").description).toBe(ARGUMENT_WORDS.name);
    expect(create.outputSchema?.required).toEqual(["id", "name", "categoryId", "status"]);
    expect(tool("getPet").listed.inputSchema.required).toEqual(["petId"]);
    // Every named part is written in place: clients need no $ref resolution.
    expect(JSON.stringify(toolsAt(now()).map((t) => t.listed))).not.toContain("$ref");
  });

  it("speak to an agent: what each tool does and when to use it, no HTTP in any description", () => {
    for (const { listed } of toolsAt(now())) {
      const said = [
        listed.description ?? "",
        listed.title ?? "",
        ...proseOf(listed.inputSchema),
        ...proseOf(listed.outputSchema),
      ];
      for (const text of said) expect(text, listed.name).not.toMatch(HTTP_WORDING);
      expect(listed.description, listed.name).toMatch(/^[A-Z][^.]+ .*\.$/);
      for (const [name, schema] of Object.entries(listed.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${listed.name}.${name}`).toMatch(
          /\.$/,
        );
      }
    }
    const before = tool("listPets").listed.description;
    expect(before).toContain("nextCursor");
    expect(before).toContain("cannot look an animal up by id");
  });

  it("says how large the OpenAPI document is and when it is worth calling for", async () => {
    const { description } = tool("getOpenApiDocument").listed;
    const response = await rpcResponse(await callTool(key, "getOpenApiDocument", {}));
    const text = response.result?.content?.[0]?.text ?? "";
    const kb = Math.round(new TextEncoder().encode(text).byteLength / 1000);
    expect(description).toContain(`about ${kb} KB of JSON`);
    expect(description).toMatch(/You do not need it to use these tools/);
  });

  it("annotates by method: reads read-only, a create adds, a change overwrites (a merge patch, so repeatable), a removal destroys", () => {
    // [readOnly, idempotent, destructive] per method (RFC 9110's safe and idempotent).
    const hints: Record<string, [boolean, boolean, boolean]> = {
      GET: [true, true, false],
      POST: [false, false, false],
      PATCH: [false, true, true],
      DELETE: [false, true, true],
    };
    for (const t of toolsAt(now())) {
      const [readOnlyHint, idempotentHint, destructiveHint] = hints[t.request.method] ?? [];
      expect(t.listed.annotations, t.listed.name).toMatchObject({
        readOnlyHint,
        idempotentHint,
        destructiveHint,
        openWorldHint: false,
        title: t.listed.title,
      });
    }
    expect(tool("deletePet").listed.annotations?.destructiveHint).toBe(true);
  });

  it("gives idempotencyKey to exactly the operations that take an Idempotency-Key, and etag to those that take If-Match", () => {
    const paths = openApiDocument.paths as Record<
      string,
      Record<string, { parameters?: Array<{ name: string }>; operationId?: string }>
    >;
    const taking = (header: string) =>
      Object.values(paths)
        .flatMap((item) => Object.values(item))
        .filter((op) => op.parameters?.some((p) => p.name === header))
        .map((op) => op.operationId);
    const given = (argument: string) =>
      toolsAt(now())
        .filter((t) => argument in (t.listed.inputSchema.properties ?? {}))
        .map((t) => t.listed.name);
    expect(given("idempotencyKey")).toEqual(taking("Idempotency-Key"));
    expect(given("idempotencyKey")).toEqual(expect.arrayContaining(["createPet"]));
    expect(given("etag")).toEqual(taking("If-Match"));
    expect(given("etag")).toEqual(expect.arrayContaining(["updatePet", "deletePet"]));
    expect(argument("createPet", "idempotencyKey")).toMatchObject({
      type: "string",
      description: expect.stringMatching(/retry/),
    });
    for (const [name, optional] of [
      ["createPet", "idempotencyKey"],
      ["updatePet", "etag"],
      ["deletePet", "etag"],
    ] as const) {
      expect(tool(name).listed.inputSchema.required, name).not.toContain(optional);
    }
  });

  it("says getPet is deprecated and when it goes, names no replacement that cannot do its job, and drops it at the sunset", () => {
    const deprecated = tool("getPet").listed;
    expect(deprecated.description).toContain(
      "Deprecated since 2026-11-01, and removed on 2030-12-05. No other tool looks an animal up by id (listPets only browses): use this one until then.",
    );
    expect(deprecated.description).not.toMatch(/use `?listPets`? instead/);
    expect(deprecated._meta).toEqual({ deprecated: true });
    const names = (at: number) => toolsAt(at).map((t) => t.listed.name);
    expect(names(GET_PET_SUNSET_AT - 1)).toContain("getPet");
    expect(names(GET_PET_SUNSET_AT)).not.toContain("getPet");
    expect(names(GET_PET_SUNSET_AT)).toContain("listPets");
    // A deprecated tool must say what replaces it, or that nothing does.
    const { replacement: _r, ...silent } = TOOL_WORDS.getPet as ToolWords;
    expect(() => toolsFile(OPERATIONS, openApiDocument, { ...TOOL_WORDS, getPet: silent })).toThrow(
      "getPet: a deprecated tool says what replaces it, or that nothing does",
    );
  });

  it("stops the build for an operation that cannot succeed or has two inputs of one name", () => {
    const { success: _s, ...failing } = createPet;
    expect(() => toolsFile([failing], openApiDocument)).toThrow(
      "createPet: a tool must be able to succeed",
    );
    const twice = "createPet: two of its inputs share a name";
    const withBody = (body: z.ZodMiniType) => () =>
      toolsFile([{ ...createPet, params: getPet.params, body }], openApiDocument);
    expect(withBody(z.object({ petId: z.number() }))).toThrow(twice);
    // The argument a tool adds counts too.
    expect(withBody(z.object({ idempotencyKey: z.string() }))).toThrow(twice);
  });

  it("says a tool is experimental, finds the Idempotency-Key among other headers, and keeps what is not prose", () => {
    const [experimental] = toolsFile([{ ...listPets, stability: "experimental" }], openApiDocument)
      .tools as Tool[];
    expect(experimental?.listed.description).toBe(
      `${TOOL_WORDS.listPets?.description} Experimental: it may change.`,
    );
    expect(tool("listPets").listed.description).not.toContain("Experimental");

    const prefer = { name: "Prefer", description: "A preference.", schema: { type: "string" } };
    const headers = [prefer, ...(createPet.headers ?? [])];
    const [create] = toolsFile([{ ...createPet, headers }], openApiDocument).tools as Tool[];
    expect(create?.request.headers).toEqual({ idempotencyKey: "Idempotency-Key" });

    // A property named `description` is a name, not prose; a null constant stays null.
    const note = z.object({
      description: z.string().check(z.meta({ description: "What the API says of it." })),
      gone: z.literal(null),
    });
    const success = { status: 200 as const, description: "The note.", schema: note };
    const [read] = toolsFile([{ ...listPets, query: undefined, success }], openApiDocument)
      .tools as Tool[];
    expect(read?.listed.outputSchema).toEqual({
      type: "object",
      properties: { description: { type: "string" }, gone: { type: "null", const: null } },
      required: ["description", "gone"],
      additionalProperties: false,
    });
  });
});

describe("the SDK's workerd shims as the worker bundles them (mcp/src/sdk-shims.ts)", () => {
  it("export what the SDK's own export, and refuse what this server never does", async () => {
    const own = await import("@modelcontextprotocol/server/_shims");
    expect(Object.keys(shims).sort()).toEqual(Object.keys(own).sort());
    expect(() => new shims.DefaultJsonSchemaValidator().getValidator()).toThrow(
      "This server sends no elicitation: it validates no client input schema.",
    );
    for (const stream of ["stdin", "stdout"] as const) {
      expect(() => shims.process[stream]).toThrow("No stdio in a Worker");
    }
    // Importing the SDK's own shims evaluates the whole SDK in this isolate: seconds on a busy machine.
  }, 30_000);
});

describe("the same keys: 401 points at the metadata, 403 names the scope", () => {
  it("refuses a request without a key, whatever it asks, with the challenge of RFC 9728", async () => {
    const requests = [
      mcp("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: INFO,
      }),
      mcp("tools/list"),
      mcp("tools/call", { name: "listPets", arguments: {} }),
      mcp("tools/call", { name: "noSuchTool", arguments: {} }),
      mcp("ping", undefined, { httpMethod: "GET" }),
    ];
    for (const response of await Promise.all(requests)) {
      expect(response.status).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toBe(
        `Bearer realm="petstore", scope="${TOOL_SCOPES}", resource_metadata="${METADATA_URL}"`,
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
        `Bearer realm="petstore", error="invalid_token", scope="${TOOL_SCOPES}", resource_metadata="${METADATA_URL}"`,
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
    const stranger = await mcp("tools/call", args, {
      key: await unknownKey(),
      headers: badVersion,
    });
    expect(stranger.status).toBe(401);
    expect(stranger.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    expect(await stranger.json()).toMatchObject({ code: "unauthorized", status: 401 });
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

  it("responds to a call beyond the key's scopes with 403 insufficient_scope naming the scope, and creates nothing", async () => {
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

  it("logs a tool's API call under the request id of the /mcp request that made it (its Ray ID)", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: string) => {
      lines.push(JSON.parse(line));
    });
    try {
      const ray = "8f0b5e7c2a1d3e4f-LHR";
      const response = await mcp(
        "tools/call",
        { name: "listPets", arguments: { limit: 1 } },
        { key, headers: { "CF-Ray": ray } },
      );
      expect(response.headers.get("X-Request-Id")).toBe(ray);
      await structured(response, "listPets");
      const logged = lines.filter((line) => line.request_id === ray);
      expect(logged.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
        { method: "GET", path: "/v1/pets", status: 200 },
        { method: "POST", path: "/mcp", status: 200 },
      ]);
      // Without a Ray ID (locally), each line has an id of its own, never a made-up one.
      lines.length = 0;
      await structured(await callTool(key, "listPets", { limit: 1 }), "listPets");
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
      expect(lines.map((line) => [line.path, uuid.test(String(line.request_id))])).toEqual([
        ["/v1/pets", true],
        ["/mcp", true],
      ]);
    } finally {
      spy.mockRestore();
    }
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
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=3600");
    const head = await exports.default.fetch(new Request(METADATA_URL, { method: "HEAD" }));
    expect(head.status).toBe(200);
    expect(head.headers.get("Cache-Control")).toBe("public, max-age=3600");
    const post = await exports.default.fetch(new Request(METADATA_URL, { method: "POST" }));
    expect(post.status).toBe(405);
    expect(post.headers.get("Allow")).toBe("GET, HEAD");
    expect(await post.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Method not allowed." },
      id: null,
    });
  });
});

describe("the MCP worker's entrypoint", () => {
  const service = env.MCP as unknown as McpService & Fetcher;
  const settings = { platformOrigin: env.PLATFORM_ORIGIN };

  it("responds 404 to a fetch of its own: only the API's binding reaches it, by serve", async () => {
    const response = await service.fetch(`${BASE}/mcp`, { method: "POST" });
    expect(response.status).toBe(404);
    expect(await response.text()).toBe("");
  });

  it("leaves an error to the API (its error handler responds): serve rejects with it", async () => {
    // An API access without its methods: the call of its key check throws in serve.
    const unusable = {} as ApiAccess;
    const request = new Request(`${BASE}/mcp`, { method: "POST" });
    const thrown = await service.serve(request, unusable, settings).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(TypeError);
  });
});

describe("Origin", () => {
  it("refuses a web page's origin outside the allow-list with 403 before anything else", async () => {
    for (const origin of ["https://evil.example.com", "null", "http://localhost.evil.example"]) {
      for (const withKey of [undefined, key]) {
        const response = await mcp("tools/list", {}, { key: withKey, headers: { Origin: origin } });
        expect(response.status).toBe(403);
        expect(response.headers.get("WWW-Authenticate")).toBeNull();
        expect(await response.json()).toEqual({
          jsonrpc: "2.0",
          error: { code: -32000, message: `Invalid Origin: ${origin}` },
          id: null,
        });
      }
    }
  });

  it("serves the allow-listed names (locally the loopback ones, at any port) and clients that send none", async () => {
    expect(await listedTools(key)).toEqual(TOOL_NAMES);
    for (const origin of ["http://localhost:6274", "http://127.0.0.1:8787"]) {
      const { result } = await rpcResponse(
        await mcp("tools/list", {}, { key, headers: { Origin: origin } }),
      );
      expect(result?.tools?.map((t) => t.name)).toEqual(TOOL_NAMES);
    }
  });
});

describe("browsers", () => {
  const PAGE = "http://localhost:6274";
  const preflight = (origin: string) =>
    exports.default.fetch(
      new Request(`${BASE}/mcp`, {
        method: "OPTIONS",
        headers: {
          Origin: origin,
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
        },
      }),
    );

  it("responds to an allowed page's preflight without a key, granting the transport's headers", async () => {
    const response = await preflight(PAGE);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(response.headers.get("WWW-Authenticate")).toBeNull();
    expect(response.headers.get("Allow")).toBe("POST, OPTIONS");
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Access-Control-Allow-Methods")).toBe("POST, OPTIONS");
    // What the SDK's clients send (the 2026-07-28 ones add Mcp-Method and Mcp-Name).
    const sent = ["Authorization", "Content-Type", "MCP-Protocol-Version", "Last-Event-ID"];
    const granted = response.headers.get("Access-Control-Allow-Headers")?.split(", ");
    expect(granted).toEqual(expect.arrayContaining([...sent, "Mcp-Session-Id", "Mcp-Method"]));
  });

  it("refuses the preflight of a page outside the allow-list with 403, as every request", async () => {
    const response = await preflight("https://evil.example.com");
    expect(response.status).toBe(403);
    // A preflight that is not 2xx fails in the browser, whatever its headers grant.
    expect(response.headers.get("Access-Control-Allow-Headers")).not.toContain("MCP-Protocol");
    expect(await response.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
  });

  it("lets the page read the 401's challenge and, with a key, the tools", async () => {
    const keyless = await mcp("tools/list", {}, { headers: { Origin: PAGE } });
    expect(keyless.status).toBe(401);
    expect(keyless.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(keyless.headers.get("Access-Control-Expose-Headers")).toContain("WWW-Authenticate");
    const { result } = await rpcResponse(
      await mcp("tools/list", {}, { key, headers: { Origin: PAGE } }),
    );
    expect(result?.tools?.map((t) => t.name)).toEqual(TOOL_NAMES);
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

    const other = await rpcResponse(await callTool(key, "createPet", { ...args, categoryId: 5 }));
    expect(other.result?.isError).toBe(true);
    expect(JSON.parse(other.result?.content?.[0]?.text ?? "")).toMatchObject({
      code: "idempotency_key_reused",
      status: 422,
    });
    expect(await petCount("Retried")).toBe(1);
    // The key goes to the API as given: the same key over HTTP gets the same animal.
    const retriedOverHttp = await exports.default.fetch(
      new Request(`${BASE}/v1/pets`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${key}`,
          "Content-Type": "application/json",
          "Idempotency-Key": idempotencyKey,
        },
        body: JSON.stringify({ name: "Retried", categoryId: 4 }),
      }),
    );
    expect(retriedOverHttp.status).toBe(201);
    expect(await retriedOverHttp.json()).toMatchObject({ id: first.id });
    expect(await petCount("Retried")).toBe(1);
  });

  it("reports a failure as an isError result carrying the Error object", async () => {
    const { result } = await rpcResponse(await callTool(key, "getPet", { petId: 987654321 }));
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

  it("responds to arguments the API refuses with an isError result the model reads: the Error naming the field; nothing is created", async () => {
    /** The Error object of a refused call, which must be a tool result, not a protocol error. */
    const refused = async (name: string, args: Record<string, unknown>) => {
      const { result, error } = await rpcResponse(await callTool(key, name, args));
      expect(error).toBeUndefined();
      expect(result?.isError).toBe(true);
      expect(result?.structuredContent).toBeUndefined();
      return JSON.parse(result?.content?.[0]?.text ?? "") as Record<string, unknown>;
    };
    expect(await refused("listPets", { limit: 0 })).toMatchObject({
      code: "invalid_parameter",
      status: 400,
      details: [{ field: "limit" }],
    });
    expect(await refused("listPets", { cursor: "not-a-cursor" })).toMatchObject({
      code: "invalid_cursor",
      status: 400,
    });
    const long = "x".repeat(500);
    expect(await refused("createPet", { name: long, categoryId: 1 })).toMatchObject({
      code: "validation_failed",
      status: 400,
      details: [{ field: "name" }],
    });
    const unnamed = await refused("createPet", { categoryId: 1, colour: "red" });
    expect(unnamed).toMatchObject({ code: "validation_failed", status: 400 });
    expect(unnamed.details).toEqual([
      { field: "name", message: "is required" },
      { field: "colour", message: "is not an accepted field" },
    ]);
    // The tools that change an animal follow the same rule.
    const { id } = await structured(
      await callTool(key, "createPet", { name: "Unchanged", categoryId: 1 }),
      "createPet",
    );
    expect(await refused("updatePet", { petId: id, name: long })).toMatchObject({
      code: "validation_failed",
      status: 400,
      details: [{ field: "name" }],
    });
    expect(await refused("updatePet", { petId: id, status: "lost" })).toMatchObject({
      code: "validation_failed",
      details: [{ field: "status" }],
    });
    // An argument of the wrong type reaches the API as JSON, which refuses it (not as "1").
    expect(await refused("getPet", { petId: [id] })).toMatchObject({
      status: 400,
      details: [{ field: "petId" }],
    });
    expect(await refused("deletePet", { petId: 0 })).toMatchObject({
      code: "invalid_parameter",
      status: 400,
      details: [{ field: "petId" }],
    });
    // An argument the API reads from a header is named as the argument the model gave.
    const badTag = await refused("deletePet", { petId: id, etag: 'a"b' });
    expect(badTag).toMatchObject({
      code: "invalid_parameter",
      status: 400,
      message: expect.stringMatching(/^Argument "etag" must be /),
      details: [{ field: "etag" }],
    });
    const badKey = await refused("createPet", {
      name: "Keyed",
      categoryId: 1,
      idempotencyKey: "é",
    });
    expect(badKey).toEqual({
      code: "invalid_idempotency_key",
      status: 400,
      message: 'Argument "idempotencyKey" must be 1 to 255 printable ASCII characters.',
    });
    expect(JSON.stringify([badTag, badKey])).not.toMatch(/If-Match|Idempotency-Key/);
    expect(await petCount("Keyed")).toBe(0);
    expect(await petCount(long)).toBe(0);
    expect(await petCount("Unchanged")).toBe(1);
  });

  it("responds to a tool that does not exist as a protocol error (-32602)", async () => {
    const unknown = await rpcResponse(await callTool(key, "listOrders", {}));
    expect(unknown.error).toMatchObject({ code: -32602, message: 'No tool named "listOrders".' });
    expect(unknown.result).toBeUndefined();
  });

  it("changes and removes an animal: updatePet returns the pet, deletePet says it is gone", async () => {
    const pet = await structured(
      await callTool(key, "createPet", { name: "Sold soon", categoryId: 2 }),
      "createPet",
    );
    const sold = await structured(
      await callTool(key, "updatePet", { petId: pet.id, status: "sold", name: "Sold" }),
      "updatePet",
    );
    expect(sold).toEqual({ ...pet, status: "sold", name: "Sold", etag: expect.any(String) });
    expect(sold.etag).not.toBe(pet.etag);
    const again = await rpcResponse(
      await callTool(key, "updatePet", { petId: pet.id, status: "available" }),
    );
    expect(again.result?.isError).toBe(true);
    expect(JSON.parse(again.result?.content?.[0]?.text ?? "")).toMatchObject({
      code: "invalid_transition",
      status: 409,
    });
    const removed = await rpcResponse(await callTool(key, "deletePet", { petId: pet.id }));
    expect(removed.result).toEqual({
      content: [{ type: "text", text: deletePet.success?.description }],
    });
    const gone = await rpcResponse(await callTool(key, "deletePet", { petId: pet.id }));
    expect(JSON.parse(gone.result?.content?.[0]?.text ?? "")).toMatchObject({ status: 404 });
    expect(await petCount("Sold")).toBe(0);
  });

  it("changes or removes an animal only as the agent last saw it when given its etag (createPet, getPet and updatePet return it)", async () => {
    const pet = await structured(
      await callTool(key, "createPet", { name: "Tagged", categoryId: 2 }),
      "createPet",
    );
    const read = await exports.default.fetch(
      new Request(`${BASE}/v1/pets/${pet.id}`, { headers: { Authorization: `Bearer ${key}` } }),
    );
    expect(read.headers.get("ETag")).toBe(`"${pet.etag}"`);
    expect(await structured(await callTool(key, "getPet", { petId: pet.id }), "getPet")).toEqual(
      pet,
    );
    const renamed = await structured(
      await callTool(key, "updatePet", { petId: pet.id, name: "Retagged", etag: pet.etag }),
      "updatePet",
    );
    expect(renamed).toMatchObject({ id: pet.id, name: "Retagged" });
    /** The Error of a call refused because the animal changed since `etag`. */
    const stale = async (name: string, args: Record<string, unknown>) => {
      const { result } = await rpcResponse(await callTool(key, name, { petId: pet.id, ...args }));
      expect(result?.isError, name).toBe(true);
      expect(JSON.parse(result?.content?.[0]?.text ?? "")).toMatchObject({
        code: "precondition_failed",
        status: 412,
        message: `Animal ${pet.id} changed since its "etag" tag was read: nothing was changed.`,
      });
    };
    await stale("updatePet", { name: "Lost update", etag: pet.etag });
    await stale("deletePet", { etag: pet.etag });
    expect(await petCount("Retagged")).toBe(1);
    // Only quotes around the whole tag are dropped: a tag with more around them is refused.
    for (const etag of [`x"${renamed.etag}"`, `"${renamed.etag}"x`]) {
      const { result } = await rpcResponse(
        await callTool(key, "deletePet", { petId: pet.id, etag }),
      );
      expect(JSON.parse(result?.content?.[0]?.text ?? ""), etag).toMatchObject({
        code: "invalid_parameter",
        status: 400,
      });
    }
    // The tag as the API writes it, quotes and all, is taken too.
    const removed = await rpcResponse(
      await callTool(key, "deletePet", { petId: pet.id, etag: `"${renamed.etag}"` }),
    );
    expect(removed.result).toEqual({
      content: [{ type: "text", text: deletePet.success?.description }],
    });
    expect(await petCount("Retagged")).toBe(0);
  });

  it("serves getPet with the deprecated operation's response until its sunset", async () => {
    const pet = await structured(
      await callTool(key, "createPet", { name: "Old", categoryId: 2 }),
      "createPet",
    );
    expect(await structured(await callTool(key, "getPet", { petId: pet.id }), "getPet")).toEqual(
      pet,
    );
  });
});

describe("batches", () => {
  /** A JSON-RPC batch of tool calls (ids 1, 2, ...) under `version` (none: the header is absent). */
  const batch = (key: string, calls: Array<[string, unknown]>, version?: string) =>
    postMcp(
      JSON.stringify(
        calls.map(([name, args], i) => ({
          ...{ jsonrpc: "2.0", id: i + 1, method: "tools/call" },
          params: { name, arguments: args },
        })),
      ),
      { ...client(key), ...(version ? { "MCP-Protocol-Version": version } : {}) },
    );

  it("responds to each message of a 2025-03-26 batch on its own: a write-only key keeps its create's new id beside the list's 403", async () => {
    const { key: writeOnly } = await createKey("mcp-batch", { scopes: ["pets:write"] });
    for (const version of [undefined, "2025-03-26"]) {
      const name = `batched-${version ?? "no-header"}`;
      const response = await batch(
        writeOnly,
        [
          ["createPet", { name, categoryId: 3 }],
          ["listPets", {}],
        ],
        version,
      );
      expect(response.status).toBe(200);
      expect(response.headers.get("WWW-Authenticate")).toBeNull();
      const [created, listed] = (await response.json()) as RpcResponse[];
      expect(created).toMatchObject({ jsonrpc: "2.0", id: 1 });
      expect(created?.result?.isError).toBeUndefined();
      const pet = created?.result?.structuredContent as { id: number; name: string };
      expect(pet).toMatchObject({ name, categoryId: 3, status: "available" });
      expect(
        await env.DB.prepare("SELECT name FROM pets WHERE id = ?1").bind(pet.id).first(),
      ).toEqual({ name });
      expect(listed).toMatchObject({ jsonrpc: "2.0", id: 2, result: { isError: true } });
      expect(JSON.parse(listed?.result?.content?.[0]?.text ?? "")).toEqual({
        code: "insufficient_scope",
        message: expect.stringContaining('"pets:read"'),
        status: 403,
      });
    }
  });

  it("refuses a batch under 2025-06-18 and 2025-11-25, which removed them, before any call runs", async () => {
    for (const version of ["2025-06-18", "2025-11-25"]) {
      const name = `unbatched-${version}`;
      const response = await batch(key, [["createPet", { name, categoryId: 3 }]], version);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        error: {
          code: -32600,
          message: `Invalid Request: protocol version ${version} has no JSON-RPC batches; send one message per request.`,
        },
        id: null,
      });
      expect(await petCount(name)).toBe(0);
    }
  });
});

describe("the transport", () => {
  it("initializes statelessly: no session id, tools as its one capability", async () => {
    const response = await mcp(
      "initialize",
      { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: INFO },
      { key },
    );
    expect(response.headers.get("Mcp-Session-Id")).toBeNull();
    const { result } = await rpcResponse(response);
    expect(result).toMatchObject({
      protocolVersion: "2025-11-25",
      capabilities: { tools: {} },
      serverInfo: { name: "petstore", title: "Pet Store API", version: packageJson.version },
      instructions: TOOLS.instructions,
    });
  });

  it("takes any Accept that admits JSON, every response being JSON, and refuses one that does not with 406", async () => {
    const initialize = (accept?: string) => {
      const params = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: INFO };
      const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "initialize", params });
      return postMcp(body, {
        Authorization: `Bearer ${key}`,
        ...(accept ? { Accept: accept } : {}),
      });
    };
    const admitting = [
      "*/*",
      "application/*",
      "application/json",
      "text/html, application/json;q=0.5",
    ];
    for (const accept of [...admitting, undefined]) {
      const { result } = await rpcResponse(await initialize(accept));
      expect(result, accept).toMatchObject({ protocolVersion: "2025-11-25" });
    }
    // Only a whole range admits JSON: not a type that merely contains its name.
    for (const accept of [
      "text/html",
      "text/event-stream",
      "text/application/json",
      "application/json-seq",
    ]) {
      const refused = await initialize(accept);
      expect(refused.status, accept).toBe(406);
      expect(await refused.json()).toEqual({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Not Acceptable: every response is application/json." },
        id: null,
      });
    }
  });

  it("refuses a body that is not JSON (400, -32700) or is over 64 KiB (413), with the key checked first", async () => {
    const post = (body: string, as = key) => postMcp(body, as ? client(as) : {});
    const garbled = await post("{not json");
    expect(garbled.status).toBe(400);
    expect(await garbled.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32700, message: "Parse error: Invalid JSON" },
      id: null,
    });
    const huge = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", pad: "x".repeat(65_536) });
    const tooLarge = await post(huge);
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({
      error: { code: -32000, message: "An MCP message is at most 65536 bytes." },
    });
    // A body that is not JSON is refused as such, whatever the client accepts.
    const html = await postMcp("{not json", { ...client(key), Accept: "text/html" });
    expect(html.status).toBe(400);
    expect(await html.json()).toMatchObject({ error: { code: -32700 } });
    expect((await post(huge, "")).status).toBe(401);
    expect((await post("{not json", await unknownKey())).status).toBe(401);
  });

  it("responds to GET and DELETE with 405 once the key is good (there is no stream to open or session to end)", async () => {
    for (const httpMethod of ["GET", "DELETE"]) {
      const response = await mcp("ping", undefined, { key, httpMethod });
      expect(response.status).toBe(405);
      expect(response.headers.get("Allow")).toBe("POST, OPTIONS");
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        error: {
          code: -32000,
          message: "Method not allowed: this server is stateless (POST only).",
        },
        id: null,
      });
    }
    // A DELETE's body is never read: its key is checked first, whatever the body asks.
    const params = { name: "listPets", arguments: {} };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params });
    const headers = { ...client(await unknownKey()), "Content-Type": "application/json" };
    const stranger = await exports.default.fetch(
      new Request(`${BASE}/mcp`, { method: "DELETE", headers, body }),
    );
    expect(stranger.status).toBe(401);
    expect(stranger.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    expect(await stranger.json()).toMatchObject({ code: "unauthorized", status: 401 });
  });

  it("tells a tool call from any other message: a listing that names a tool is a listing, a message without params is served, a null one refused", async () => {
    const { result } = await rpcResponse(
      await mcp("tools/list", { name: "createPet", arguments: {} }, { key }),
    );
    expect(result?.tools?.map((t) => t.name)).toEqual(TOOL_NAMES);
    expect(await rpcResponse(await mcp("ping", undefined, { key }))).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: {},
    });
    const invalid = "Bad Request: the request body is not a valid JSON-RPC message";
    for (const [body, id] of [
      ["null", null],
      [JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: null }), 7],
    ] as const) {
      const response = await postMcp(body, client(key));
      expect(response.status, body).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        error: { code: -32600, message: invalid },
        id,
      });
    }
    // A call without params is the protocol's to refuse (-32602), its key checked first.
    const unnamed = await rpcResponse(await mcp("tools/call", undefined, { key }));
    expect(unnamed.error).toMatchObject({ code: -32602, message: expect.stringMatching(/params/) });
  });

  it("speaks the stateless 2026-07-28 to the SDK's own client: the key's tools listed, a call made", async () => {
    /** The SDK's client pinned to 2026-07-28, its requests served by the API's fetch. */
    const connect = async (as: string) => {
      const sdk = new Client(INFO, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
      const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${as}` } },
        fetch: (url, init) => exports.default.fetch(new Request(url, init)),
      });
      await sdk.connect(transport);
      return sdk;
    };
    const sdk = await connect(key);
    expect((await sdk.listTools()).tools.map((t) => t.name)).toEqual(TOOL_NAMES);
    const created = await sdk.callTool({
      name: "createPet",
      arguments: { name: "Modern", categoryId: 6 },
    });
    expect(created.isError).toBeUndefined();
    expect(created.structuredContent).toMatchObject({ name: "Modern", categoryId: 6 });
    expect(await petCount("Modern")).toBe(1);
    const { key: readOnly } = await createKey("mcp-2026", { scopes: ["pets:read"] });
    const reader = await connect(readOnly);
    const readable = OPERATIONS.filter(
      (op) => op.mcp.tool && (!op.scope || op.scope === "pets:read"),
    ).map((op) => op.operationId);
    expect((await reader.listTools()).tools.map((t) => t.name)).toEqual(readable);
  });
});
