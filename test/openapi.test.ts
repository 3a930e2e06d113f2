// The served OpenAPI document: public, fresh (equal to what the schemas generate), complete.
import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { ERROR_STATUS } from "../src/errors.ts";
import { buildOpenApiDocument } from "../src/openapi/document.ts";
import { CONTRACT_EXPOSED_HEADERS, call, expectError } from "./helpers.ts";

type Json = Record<string, unknown>;

type Doc = ReturnType<typeof buildOpenApiDocument> & {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: {
    headers: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
    schemas: Record<string, { required?: string[] }>;
  };
  servers: Array<{ url: string }>;
};

async function served(): Promise<Doc> {
  const response = await call("/v1/openapi.json");
  expect(response.status).toBe(200);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  return (await response.json()) as Doc;
}

describe("GET /v1/openapi.json", () => {
  it("is public and equals the document generated from the validating schemas", async () => {
    // Fails when src/openapi/openapi.json was not regenerated (npm run openapi).
    expect(await served()).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it("is OpenAPI 3.1 with both servers under /v1 and the bearer scheme on everything", async () => {
    const doc = await served();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect((doc.info as { version: string }).version).toBe(packageJson.version);
    expect(doc.servers.map((s) => s.url)).toEqual([
      expect.stringMatching(/^https:\/\/.+\/v1$/),
      expect.stringMatching(/^https:\/\/staging\..+\/v1$/),
    ]);
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: "http",
      scheme: "bearer",
    });
  });

  it("lists the four operations, getPet deprecated and orders experimental", async () => {
    const doc = await served();
    expect(doc.paths["/pets"]?.get?.operationId).toBe("listPets");
    expect(doc.paths["/pets"]?.post?.operationId).toBe("createPet");
    expect(doc.paths["/pets/{petId}"]?.get).toMatchObject({
      operationId: "getPet",
      deprecated: true,
    });
    expect(doc.paths["/store/orders"]?.get).toMatchObject({
      operationId: "listOrders",
      "x-stability": "experimental",
    });
    expect(doc.paths["/pets"]?.get?.deprecated).toBeUndefined();
  });

  it("names each operation's scope in its security requirement and documents its 403", async () => {
    const doc = await served();
    const security = (path: string, method: string) => doc.paths[path]?.[method]?.security;
    expect(security("/pets", "get")).toEqual([{ bearerAuth: ["pets:read"] }]);
    expect(security("/pets", "post")).toEqual([{ bearerAuth: ["pets:write"] }]);
    expect(security("/pets/{petId}", "get")).toEqual([{ bearerAuth: ["pets:read"] }]);
    expect(security("/store/orders", "get")).toEqual([{ bearerAuth: ["orders:read"] }]);
    expect(security("/openapi.json", "get")).toEqual([]);
    expect(security("/docs", "get")).toEqual([]);
    for (const [path, method] of [
      ["/pets", "get"],
      ["/pets", "post"],
      ["/pets/{petId}", "get"],
      ["/store/orders", "get"],
    ] as const) {
      const responses = doc.paths[path]?.[method]?.responses as Record<string, unknown>;
      expect(JSON.stringify(responses["403"]), `${method} ${path}`).toMatch(
        /insufficient_scope.*#\/components\/headers\/WWW-Authenticate/,
      );
    }
    const scheme = doc.components.securitySchemes.bearerAuth as { description: string };
    for (const scope of ["pets:read", "pets:write", "orders:read"]) {
      expect(scheme.description).toMatch(new RegExp(`- \`${scope}\`: \\w`));
    }
  });

  it("documents every Error code and every header of the contract", async () => {
    const doc = await served();
    const text = JSON.stringify(doc.paths);
    for (const code of Object.keys(ERROR_STATUS)) expect(text).toContain(`"${code}"`);
    for (const header of [...CONTRACT_EXPOSED_HEADERS, "Cache-Control"]) {
      expect(doc.components.headers[header]).toBeDefined();
      expect(text).toContain(`#/components/headers/${header}`);
    }
  });

  it("describes the CORS headers as header objects on every response, not only in prose", async () => {
    const doc = await served();
    expect(doc.components.headers["Access-Control-Allow-Origin"]).toMatchObject({
      schema: { type: "string" },
    });
    expect(doc.components.headers["Access-Control-Expose-Headers"]).toMatchObject({
      schema: { const: CONTRACT_EXPOSED_HEADERS.join(", ") },
    });
    let responses = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(
          op.responses as Record<string, { headers?: Record<string, { $ref?: string }> }>,
        )) {
          responses += 1;
          for (const name of ["Access-Control-Allow-Origin", "Access-Control-Expose-Headers"]) {
            expect(response.headers?.[name]?.$ref, `${method} ${path} ${status} ${name}`).toBe(
              `#/components/headers/${name}`,
            );
          }
        }
      }
    }
    expect(responses).toBeGreaterThan(20);
    const description = (doc.info as { description: string }).description;
    expect(description).toMatch(/preflight/);
    expect(description).toContain(
      "Access-Control-Allow-Headers: Authorization, Content-Type, Idempotency-Key, If-None-Match, x-d1-bookmark",
    );
  });

  it("writes the validation rules of the schemas into the document", async () => {
    const doc = await served();
    const params = doc.paths["/pets"]?.get?.parameters as Array<{
      name: string;
      schema: Record<string, unknown>;
    }>;
    expect(params.find((p) => p.name === "limit")?.schema).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 100,
      default: 20,
    });
    const schemas = doc.components.schemas;
    expect(schemas.NewPet?.required).toEqual(["name", "categoryId"]);
    expect(schemas.Pet?.required).toEqual(["id", "name", "categoryId", "status"]);
  });

  it("gives getPet's deprecation date as a person reads it, not only as @<unix seconds>", async () => {
    const doc = await served();
    const description = (doc.info as { description: string }).description;
    // 2026-11-01, the date the Deprecation header carries as @1793491200.
    expect(description).toContain("deprecated since Sun, 01 Nov 2026 00:00:00 GMT");
    expect(description).not.toMatch(/since @\d/);
    expect(JSON.stringify(doc.components.headers.Deprecation)).toContain("Sun, 01 Nov 2026");
  });

  it("documents HEAD wherever GET is answered: the same answers without bodies", async () => {
    const doc = await served();
    for (const [path, item] of Object.entries(doc.paths)) {
      expect(Object.keys(item).includes("head"), path).toBe(Object.keys(item).includes("get"));
      const get = item.get as { operationId: string; responses: Record<string, Json> } | undefined;
      const head = item.head as { operationId: string; responses: Record<string, Json> };
      if (!get) continue;
      expect(head.operationId).toBe(`${get.operationId}Head`);
      expect(Object.keys(head.responses)).toEqual(Object.keys(get.responses));
      for (const [status, response] of Object.entries(head.responses)) {
        expect(response.content, `HEAD ${path} ${status}`).toBeUndefined();
        expect(response.headers).toEqual(get.responses[status]?.headers);
      }
    }
  });

  it("allows only GET there, without a key", async () => {
    const response = await call("/v1/openapi.json", { method: "POST" });
    await expectError(response, 405, "method_not_allowed");
    expect(response.headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
  });
});
