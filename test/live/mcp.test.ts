// npm run test:mcp: the MCP server of the real `npm run dev` (on 127.0.0.1:MCP_PORT), as
// agents reach it, with keys from `npm run keys`: the MCP conformance suite's server
// scenarios (the rest, and why, in mcp-conformance.yml), the official SDK client in both
// protocol eras (2025-11-25 and the stateless 2026-07-28) and the MCP Inspector's CLI:
// list, page, a create retried under one idempotency key (one pet), a read-only key
// refused with 403, a revoked key refused within the revocation bound; the metadata at both of
// the API's local addresses, which the platform grants, and any other Host refused.
import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify, stripVTControlCharacters } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/operations/index.ts";
import type { Pet } from "../../src/pets/schemas.ts";
import { SCOPES } from "../../src/scopes.ts";
import { HTTP_WORDING, proseOf } from "../support/agent-words.ts";
import {
  allPets,
  type DevServer,
  issued,
  LOCAL_DEV_KEY,
  scriptEnv,
  startDevServer,
} from "./dev-server.ts";

const PORT = Number(process.env.MCP_PORT ?? 8840);
const ROOT = path.join(import.meta.dirname, "../..");
/** The tools a key with `scopes` sees, read off the operation table. */
const toolsFor = (scopes: readonly string[]) =>
  OPERATIONS.filter((op) => op.mcp.tool && (!op.scope || scopes.includes(op.scope))).map(
    (op) => op.operationId,
  );
/** A revoked key is refused at once or within 60 seconds at most (docs/keys.md). */
const REVOCATION_BOUND_MS = 60_000;
const run = promisify(execFile);

let server: DevServer;
let readOnly: string;
beforeAll(async () => {
  server = await startDevServer(PORT);
  ({ key: readOnly } = issued(
    await server.keys("create", "--label", "mcp read-only", "--scope", "pets:read"),
  ));
});
afterAll(() => server?.stop());

const ERAS = [
  { era: "2025-11-25", options: {} },
  { era: "2026-07-28", options: { versionNegotiation: { mode: { pin: "2026-07-28" } } } },
] as const;

/** The official SDK client, connected to /mcp with `key` in its Authorization header. */
async function connect(key: string, options: (typeof ERAS)[number]["options"]): Promise<Client> {
  const client = new Client({ name: "petstore-live-test", version: "1.0.0" }, options);
  const headers = { Authorization: `Bearer ${key}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

/** A tool's structured content; fails on an error result. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  return result.structuredContent as Record<string, unknown>;
}

/** The pets named `name`, through /v1 (not through the MCP server). */
const named = async (name: string) =>
  (await allPets(server.base, LOCAL_DEV_KEY)).filter((pet) => pet.name === name);

/** A tool's animal as /v1 lists it: without the `etag` the tools add (a page has none). */
const withoutEtag = (result: unknown) => {
  const { etag: _tag, ...pet } = result as Pet & { etag?: string };
  return pet;
};

describe("the MCP conformance suite (server scenarios)", () => {
  /** `npx conformance server` against /mcp through a proxy that adds the key (it sends none). */
  async function conformance(...args: string[]) {
    const proxy = http.createServer((request, response) => {
      // The proxy's own address becomes the API's (another Host is 421); any other Host, such
      // as the DNS rebinding scenario's, goes through as sent.
      const own = request.headers.host === `localhost:${(proxy.address() as AddressInfo).port}`;
      const headers = {
        ...request.headers,
        ...(own ? { host: new URL(server.base).host } : {}),
        authorization: `Bearer ${LOCAL_DEV_KEY}`,
      };
      const upstream = http.request(
        new URL(request.url ?? "/", server.base),
        { method: request.method, headers },
        (upstream) => {
          response.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(response);
        },
      );
      request.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    // A localhost URL: the DNS rebinding scenario needs one.
    const url = `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`;
    try {
      const bin = path.join(ROOT, "node_modules/.bin/conformance");
      const { stdout } = await run(bin, ["server", "--url", url, ...args], {
        env: scriptEnv,
        cwd: ROOT,
        timeout: 240_000,
        maxBuffer: 16 * 1024 * 1024,
      }).catch((err: { stdout?: string; stderr?: string }) => {
        throw new Error(`conformance failed:\n${err.stdout}\n${err.stderr}`);
      });
      return stripVTControlCharacters(stdout);
    } finally {
      proxy.close();
    }
  }

  it("passes every scenario that applies; the others fail as mcp-conformance.yml says they must", async () => {
    const baseline = path.join(import.meta.dirname, "mcp-conformance.yml");
    const output = await conformance("--expected-failures", baseline);
    console.log(output.slice(output.indexOf("=== SUMMARY ===")));
    for (const scenario of [
      "server-initialize",
      "ping",
      "tools-list",
      "dns-rebinding-protection",
    ]) {
      expect(output).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
    }
  }, 300_000);

  it.each(["server-sse-multiple-streams", "server-sse-polling"])(
    "passes %s with no failed check (a warning only: no session ID, by design)",
    async (scenario) => {
      const output = await conformance("--scenario", scenario);
      expect(output).toContain("Passed: 0/0, 0 failed, 1 warnings");
      expect(output).toMatch(/WARNING Server provides session ID for/);
    },
    120_000,
  );
});

describe.each(ERAS)("the official SDK client, protocol $era", ({ era, options }) => {
  it("connects with a key, lists the tools its scopes allow, pages and creates once under a retried idempotency key", async () => {
    const client = await connect(LOCAL_DEV_KEY, options);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(era);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(toolsFor(SCOPES));

      const all = await allPets(server.base, LOCAL_DEV_KEY);
      const paged: Pet[] = [];
      let cursor: string | undefined;
      do {
        const page = await call(client, "listPets", { limit: 2, ...(cursor ? { cursor } : {}) });
        paged.push(...(page.items as Pet[]));
        cursor = page.nextCursor as string | undefined;
      } while (cursor);
      expect(paged).toEqual(all);

      const name = `mcp-${era}-${crypto.randomUUID().slice(0, 8)}`;
      const args = { name, categoryId: 7, idempotencyKey: crypto.randomUUID() };
      const first = await call(client, "createPet", args);
      const retried = await call(client, "createPet", args);
      expect(retried).toEqual(first);
      expect(await named(name)).toEqual([withoutEtag(first)]);
    } finally {
      await client.close();
    }
  });

  it("is refused a tool beyond a read-only key's scopes with 403 naming the scope", async () => {
    const client = await connect(readOnly, options);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(toolsFor(["pets:read"]));
      const name = `mcp-refused-${era}`;
      await expect(
        client.callTool({ name: "createPet", arguments: { name, categoryId: 1 } }),
      ).rejects.toThrow('Insufficient scope: required "pets:write"');
      expect(await named(name)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

it(
  "refuses a revoked key within the bound, in either era",
  async () => {
    const clients = await Promise.all(
      ERAS.map(async ({ era, options }) => {
        const { key, id } = issued(await server.keys("create", "--label", `mcp revoked ${era}`));
        const client = await connect(key, options);
        expect((await client.listTools()).tools).toHaveLength(toolsFor(SCOPES).length);
        return { client, key, id, options };
      }),
    );
    try {
      for (const { id } of clients) await server.keys("revoke", id);
      for (const { client, key, options } of clients) {
        await expect
          .poll(
            () =>
              client.listTools().then(
                () => "accepted",
                (err: Error) => err.message,
              ),
            { timeout: REVOCATION_BOUND_MS, interval: 1_000 },
          )
          .toMatch(/401|authoriz/i);
        await expect(connect(key, options)).rejects.toThrow(/401|authoriz/i);
      }
    } finally {
      await Promise.all(clients.map(({ client }) => client.close()));
    }
  },
  REVOCATION_BOUND_MS + 30_000,
);

describe("the MCP Inspector's CLI", () => {
  /** `mcp-inspector-cli --cli <server>/mcp` with `key`: its parsed JSON output. */
  async function inspector(key: string, ...args: string[]) {
    const bin = path.join(ROOT, "node_modules/.bin/mcp-inspector-cli");
    const flags = ["--cli", `${server.base}/mcp`, "--transport", "http"];
    const header = ["--header", `Authorization: Bearer ${key}`];
    // From a folder of the repository: inspector-cli 1.0.3 looks for its package.json at
    // "../package.json" relative to the working directory before importing it.
    const { stdout } = await run(bin, [...flags, ...header, ...args], {
      env: scriptEnv,
      cwd: path.join(ROOT, "test"),
      timeout: 60_000,
    });
    return JSON.parse(stdout.slice(stdout.indexOf("{"))) as Record<string, unknown>;
  }

  it("lists, pages and creates once under a retried idempotency key", async () => {
    const listed = (await inspector(LOCAL_DEV_KEY, "--method", "tools/list")).tools as Array<{
      name: string;
    }>;
    expect(listed.map((t) => t.name)).toEqual(toolsFor(SCOPES));

    const page = (cursor?: string) =>
      inspector(
        LOCAL_DEV_KEY,
        "--method",
        "tools/call",
        "--tool-name",
        "listPets",
        "--tool-arg",
        "limit=1",
        ...(cursor ? [`cursor=${cursor}`] : []),
      );
    const first = (await page()).structuredContent as { items: Pet[]; nextCursor: string };
    const second = (await page(first.nextCursor)).structuredContent as { items: Pet[] };
    const all = await allPets(server.base, LOCAL_DEV_KEY);
    expect([...first.items, ...second.items]).toEqual(all.slice(0, 2));

    const name = `mcp-inspector-${crypto.randomUUID().slice(0, 8)}`;
    const create = () =>
      inspector(
        LOCAL_DEV_KEY,
        "--method",
        "tools/call",
        "--tool-name",
        "createPet",
        "--tool-arg",
        `name=${name}`,
        "categoryId=3",
        `idempotencyKey=${name}`,
      );
    const created = (await create()).structuredContent;
    expect((await create()).structuredContent).toEqual(created);
    expect(await named(name)).toEqual([withoutEtag(created)]);
  });

  it("is refused createPet with a read-only key: 403", async () => {
    const refused = inspector(
      readOnly,
      "--method",
      "tools/call",
      "--tool-name",
      "createPet",
      "--tool-arg",
      "name=inspector-refused",
      "categoryId=1",
    );
    await expect(refused).rejects.toThrow(/403|insufficient_scope/);
    expect(await named("inspector-refused")).toEqual([]);
  });
});

describe("what an agent meets at /mcp (issue 33)", () => {
  const url = () => `${server.base}/mcp`;
  /** A JSON-RPC body POSTed to /mcp with `headers`, served as the server responds to it. */
  const post = (body: unknown, headers: Record<string, string>) =>
    fetch(url(), {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const message = (id: number, name: string, args: Record<string, unknown>) => ({
    ...{ jsonrpc: "2.0", id, method: "tools/call" },
    params: { name, arguments: args },
  });

  it.each(ERAS)(
    "reads refused arguments as an isError result naming the field, in $era",
    async ({ options }) => {
      const client = await connect(LOCAL_DEV_KEY, options);
      try {
        const error = async (name: string, args: Record<string, unknown>) => {
          const result = await client.callTool({ name, arguments: args });
          expect(result.isError, name).toBe(true);
          const [content] = result.content as Array<{ text: string }>;
          return JSON.parse(content?.text ?? "") as { code: string; details?: unknown };
        };
        expect(await error("listPets", { limit: 0 })).toMatchObject({
          code: "invalid_parameter",
          details: [{ field: "limit" }],
        });
        expect(await error("listPets", { cursor: "nope" })).toMatchObject({
          code: "invalid_cursor",
        });
        const long = "y".repeat(500);
        expect(await error("createPet", { name: long, categoryId: 1 })).toMatchObject({
          code: "validation_failed",
          details: [{ field: "name" }],
        });
        expect(await named(long)).toEqual([]);
        for (const name of ["updatePet", "deletePet"]) {
          expect(await error(name, { petId: 0 })).toMatchObject({
            code: "invalid_parameter",
            details: [{ field: "petId" }],
          });
        }
      } finally {
        await client.close();
      }
    },
  );

  it("responds to each message of a 2025-03-26 batch on its own, and refuses batches under 2025-11-25", async () => {
    const { key } = issued(
      await server.keys("create", "--label", "mcp write-only", "--scope", "pets:write"),
    );
    const auth = { Authorization: `Bearer ${key}`, Accept: "application/json, text/event-stream" };
    const name = `mcp-batch-${crypto.randomUUID().slice(0, 8)}`;
    const batch = [message(1, "createPet", { name, categoryId: 4 }), message(2, "listPets", {})];
    const response = await post(batch, auth);
    expect(response.status).toBe(200);
    const [created, listed] = (await response.json()) as Array<{ result: Record<string, unknown> }>;
    expect(await named(name)).toEqual([withoutEtag(created?.result.structuredContent)]);
    expect(listed?.result.isError).toBe(true);
    expect(JSON.stringify(listed?.result.content)).toContain("insufficient_scope");

    const refused = await post(batch, { ...auth, "MCP-Protocol-Version": "2025-11-25" });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: -32600 } });
    expect(await named(name)).toHaveLength(1);
  });

  it("responds to an allowed page's preflight without a key, granting MCP-Protocol-Version", async () => {
    const response = await fetch(url(), {
      method: "OPTIONS",
      headers: {
        Origin: "http://localhost:6274",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBeTruthy();
    expect(response.headers.get("Access-Control-Allow-Headers")).toContain("MCP-Protocol-Version");
    expect(response.headers.get("Access-Control-Allow-Headers")).toContain("Last-Event-ID");
  });

  it("serves Accept: */*, and names the tools' scopes in its first 401", async () => {
    const initialize = {
      ...{ jsonrpc: "2.0", id: 1, method: "initialize" },
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    };
    const keyless = await post(initialize, { Accept: "*/*" });
    expect(keyless.status).toBe(401);
    expect(keyless.headers.get("WWW-Authenticate")).toMatch(
      /^Bearer realm="petstore", scope="pets:read pets:write", resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/mcp"$/,
    );
    const keyed = await post(initialize, {
      Accept: "*/*",
      Authorization: `Bearer ${LOCAL_DEV_KEY}`,
    });
    expect(keyed.status).toBe(200);
    expect(await keyed.json()).toMatchObject({ result: { protocolVersion: "2025-11-25" } });
  });

  it("lists tools in an agent's words, sizes the OpenAPI document truly, and changes an animal only as last seen", async () => {
    const client = await connect(LOCAL_DEV_KEY, {});
    try {
      const { tools } = await client.listTools();
      for (const tool of tools) {
        const said = [
          tool.description ?? "",
          ...proseOf(tool.inputSchema),
          ...proseOf(tool.outputSchema),
        ];
        for (const text of said) expect(text, tool.name).not.toMatch(HTTP_WORDING);
      }
      const getPet = tools.find((t) => t.name === "getPet");
      expect(getPet?.description).toContain("No other tool looks an animal up by id");
      const document = await client.callTool({ name: "getOpenApiDocument", arguments: {} });
      const [text] = document.content as Array<{ text: string }>;
      const kb = Math.round(Buffer.byteLength(text?.text ?? "") / 1000);
      const described = tools.find((t) => t.name === "getOpenApiDocument")?.description;
      expect(described).toContain(`about ${kb} KB`);

      const pet = await call(client, "createPet", {
        name: `etag-${crypto.randomUUID().slice(0, 8)}`,
        categoryId: 2,
      });
      const changed = await call(client, "updatePet", {
        petId: pet.id,
        status: "pending",
        etag: pet.etag,
      });
      expect(changed).toMatchObject({ id: pet.id, status: "pending" });
      const stale = await client.callTool({
        name: "deletePet",
        arguments: { petId: pet.id, etag: pet.etag },
      });
      expect(stale.isError).toBe(true);
      expect(JSON.stringify(stale.content)).toContain("precondition_failed");
      await call(client, "deletePet", { petId: pet.id, etag: changed.etag });
      expect(await named(pet.name as string)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe("the API's addresses (docs/agents.md)", () => {
  /** A GET of `path` at the server's port, under `host` as the Host header (fetch cannot set it). */
  function getAs(host: string, path: string): Promise<{ status: number; body: string }> {
    const { port } = new URL(server.base);
    return new Promise((resolve, reject) => {
      http
        .get({ host: "127.0.0.1", port, path, headers: { Host: host } }, (response) => {
          let body = "";
          response.on("data", (chunk) => (body += chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        })
        .on("error", reject);
    });
  }
  const metadataPath = "/.well-known/oauth-protected-resource/mcp";

  it("the metadata names the address the client used, localhost or 127.0.0.1, and the platform grants both (a client asking for a secret registered as public, unknown scopes left out)", async () => {
    const { port } = new URL(server.base);
    const register = await fetch(`${server.platform}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        client_name: "Live",
        redirect_uris: ["http://127.0.0.1:9/cb"],
        token_endpoint_auth_method: "client_secret_basic",
      }),
    });
    expect(register.status).toBe(201);
    const { client_id, token_endpoint_auth_method } = (await register.json()) as {
      client_id: string;
      token_endpoint_auth_method: string;
    };
    expect(token_endpoint_auth_method).toBe("none");
    for (const host of ["localhost", "127.0.0.1"]) {
      const origin = `http://${host}:${port}`;
      const response = await fetch(`${origin}${metadataPath}`);
      expect(response.status).toBe(200);
      const { resource } = (await response.json()) as { resource: string };
      expect(resource).toBe(`${origin}/mcp`);
      const authorize = new URL("/oauth/authorize", server.platform);
      authorize.search = new URLSearchParams({
        response_type: "code",
        client_id,
        redirect_uri: "http://127.0.0.1:9/cb",
        code_challenge: "a".repeat(43),
        code_challenge_method: "S256",
        scope: "openid pets:read pets:write",
        resource,
      }).toString();
      // Signed out: the consent's sign-in page, not the refusal.
      const page = await fetch(authorize);
      expect(page.status, await page.clone().text()).toBe(200);
      expect(await page.text()).toContain("Connect Live to the Pet Store API");
    }
  });

  it("any other Host is 421 misdirected_request, its name echoed nowhere", async () => {
    for (const path of [metadataPath, "/mcp"]) {
      const { status, body } = await getAs("evil.example", path);
      expect(status).toBe(421);
      expect(JSON.parse(body)).toMatchObject({ code: "misdirected_request", status: 421 });
      expect(body).not.toContain("evil");
    }
    // The addresses it serves response the same request.
    expect((await getAs(`localhost:${new URL(server.base).port}`, metadataPath)).status).toBe(200);
  });
});
