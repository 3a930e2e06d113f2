// The served OpenAPI document: public, fresh (equal to what the schemas generate), complete.
import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { ERROR_STATUS } from "../src/errors.ts";
import { buildOpenApiDocument } from "../src/openapi/document.ts";
import { CONTRACT_EXPOSED_HEADERS, call } from "./helpers.ts";

type Json = Record<string, unknown>;

type Op = Json & { responses: Record<string, Json> };

type Doc = ReturnType<typeof buildOpenApiDocument> & {
  info: { version: string; description: string };
  paths: Record<string, Record<string, Op>>;
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
  it("is public, a static asset: the document generated from the validating schemas, compact, revalidated by its ETag", async () => {
    const origin = "https://app.example";
    const response = await call("/v1/openapi.json", { headers: { Origin: origin } });
    expect(response.status).toBe(200);
    // The bytes of the generated document as JSON.stringify writes it (fails when
    // src/openapi/openapi.json was not regenerated: npm run openapi).
    expect(await response.text()).toBe(JSON.stringify(buildOpenApiDocument()));
    const etag = response.headers.get("ETag");
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "content-type": "application/json",
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
      "x-request-id": expect.any(String),
      "access-control-allow-origin": "*",
      "access-control-expose-headers": CONTRACT_EXPOSED_HEADERS.join(", "),
      etag: expect.stringMatching(/^"[!#-~]+"$/),
    });
    for (const method of ["GET", "HEAD"]) {
      const again = await call("/v1/openapi.json", {
        method,
        headers: { "If-None-Match": `${etag}` },
      });
      expect(again.status, method).toBe(304);
      expect(await again.text()).toBe("");
      expect(again.headers.get("ETag")).toBe(etag);
      expect(again.headers.get("Cache-Control")).toBe("no-cache");
      expect(again.headers.get("X-Request-Id")).toBeTruthy();
    }
    const other = await call("/v1/openapi.json", { headers: { "If-None-Match": '"other"' } });
    expect(other.status).toBe(200);
    expect(await other.json()).toEqual(await served());
  });

  it("is OpenAPI 3.1 with both servers under /v1 and the bearer scheme on everything", async () => {
    const doc = await served();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe(packageJson.version);
    expect(doc.servers.map((s) => s.url)).toEqual([
      expect.stringMatching(/^https:\/\/.+\/v1$/),
      expect.stringMatching(/^https:\/\/staging\..+\/v1$/),
    ]);
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: "http",
      scheme: "bearer",
      // Where keys come from, both ways.
      description: expect.stringMatching(
        /developer platform \("Get a key" on the reference page\).*`npm run keys -- create`/,
      ),
    });
  });

  it("lists the operations and their scopes, getPet deprecated (with a readable date), orders experimental", async () => {
    const doc = await served();
    const op = (path: string, method = "get") => doc.paths[path]?.[method] as Op;
    const needs = (scope: string) => [{ bearerAuth: [scope] }];
    expect(op("/pets")).toMatchObject({ operationId: "listPets", security: needs("pets:read") });
    expect(op("/pets").deprecated).toBeUndefined();
    expect(op("/pets", "post")).toMatchObject({
      operationId: "createPet",
      security: needs("pets:write"),
    });
    expect(op("/pets/{petId}")).toMatchObject({
      operationId: "getPet",
      deprecated: true,
      security: needs("pets:read"),
    });
    expect(op("/store/orders")).toMatchObject({
      operationId: "listOrders",
      "x-stability": "experimental",
      security: needs("orders:read"),
    });
    expect([op("/openapi.json").security, op("/docs").security]).toEqual([[], []]);
    // Each operation that needs a scope documents its 403 and the header naming the scope.
    for (const scoped of [
      op("/pets"),
      op("/pets", "post"),
      op("/pets/{petId}"),
      op("/store/orders"),
    ]) {
      expect(JSON.stringify(scoped.responses["403"]), String(scoped.operationId)).toMatch(
        /insufficient_scope.*#\/components\/headers\/WWW-Authenticate/,
      );
    }
    const scheme = doc.components.securitySchemes.bearerAuth as { description: string };
    for (const scope of ["pets:read", "pets:write", "orders:read"]) {
      expect(scheme.description).toMatch(new RegExp(`- \`${scope}\`: \\w`));
    }
    // getPet's deprecation date as a person reads it (the header carries @1793491200).
    expect(doc.info.description).toContain("deprecated since Sun, 01 Nov 2026 00:00:00 GMT");
    expect(doc.info.description).not.toMatch(/since @\d/);
    expect(JSON.stringify(op("/pets/{petId}").responses["200"])).toContain("Sun, 01 Nov 2026");
  });

  it("documents the changes: a merge patch, If-Match with 412, the transitions' 409, a bodiless 204, the pet's ETag, an open Pet", async () => {
    const doc = await served();
    const update = doc.paths["/pets/{petId}"]?.patch as Op;
    const remove = doc.paths["/pets/{petId}"]?.delete as Op;
    expect([update.operationId, remove.operationId]).toEqual(["updatePet", "deletePet"]);
    const content = (update.requestBody as { content: Record<string, unknown> }).content;
    expect(Object.keys(content)).toEqual(["application/merge-patch+json", "application/json"]);
    for (const op of [update, remove]) {
      expect(op.security).toEqual([{ bearerAuth: ["pets:write"] }]);
      const parameters = op.parameters as Array<{ name: string; in: string }>;
      expect(parameters.find((p) => p.name === "If-Match")).toMatchObject({ in: "header" });
      expect(JSON.stringify(op.responses["412"])).toContain("precondition_failed");
      expect(JSON.stringify(op.responses["404"])).toContain("not_found");
    }
    expect(JSON.stringify(update.responses["409"])).toContain("invalid_transition");
    expect(remove.responses["409"]).toBeUndefined();
    expect(remove.responses["204"]).toMatchObject({ description: expect.any(String) });
    expect(remove.responses["204"]?.content).toBeUndefined();
    for (const [op, status] of [
      [update, "200"],
      [doc.paths["/pets"]?.post as Op, "201"],
    ] as const) {
      expect(Object.keys(op.responses[status]?.headers as object)).toContain("ETag");
    }
    // A response may gain fields: the Pet is not closed, NewPet and PetPatch are.
    const schemas = doc.components.schemas as Record<string, Json>;
    expect(schemas.Pet?.additionalProperties).toBeUndefined();
    expect(schemas.NewPet?.additionalProperties).toBe(false);
    expect(schemas.PetPatch?.additionalProperties).toBe(false);
    expect(doc.info.description).toMatch(/ignore the ones you do not know/);
  });

  it("documents every Error code, every header of the contract and the required fields", async () => {
    const doc = await served();
    const text = JSON.stringify(doc.paths);
    // 405 is the response of a path to a method it lacks, never an operation's: with its
    // Allow, the description documents it, as it does OPTIONS.
    const { description } = doc.info;
    expect(text).not.toContain('"405"');
    expect(description).toMatch(/OPTIONS.*204.*`Allow`/);
    expect(description).toMatch(/405 `method_not_allowed` with `Allow`/);
    // 421 is /mcp's alone (a host that is none of the API's addresses), and /mcp is no path of
    // the document (docs/agents.md).
    const respondedByPaths = Object.keys(ERROR_STATUS).filter(
      (c) => c !== "method_not_allowed" && c !== "misdirected_request",
    );
    for (const code of respondedByPaths) expect(text).toContain(`"${code}"`);
    // Each on the responses that carry it: a component where every use is described alike.
    const described = new Set(
      Object.values(doc.paths).flatMap((item) =>
        Object.values(item).flatMap((op) =>
          Object.values(op.responses).flatMap((r) => Object.keys(r.headers ?? {})),
        ),
      ),
    );
    for (const header of [
      ...CONTRACT_EXPOSED_HEADERS.filter((h) => h !== "Allow"),
      "Cache-Control",
    ]) {
      expect(described, header).toContain(header);
    }
    for (const header of ["X-Request-Id", "WWW-Authenticate", "Retry-After", "x-d1-bookmark"]) {
      expect(text).toContain(`#/components/headers/${header}`);
    }
    expect(doc.components.schemas.NewPet?.required).toEqual(["name", "categoryId"]);
    expect(doc.components.schemas.Pet?.required).toEqual(["id", "name", "categoryId", "status"]);
  });

  it("describes the CORS headers as header objects on every response, not only in prose", async () => {
    const doc = await served();
    expect(doc.components.headers["Access-Control-Allow-Origin"]).toMatchObject({
      schema: { type: "string" },
    });
    expect(doc.components.headers["Access-Control-Expose-Headers"]).toMatchObject({
      schema: { const: CONTRACT_EXPOSED_HEADERS.join(", ") },
    });
    const responses = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, op]) =>
        Object.entries(op.responses).map(([status, r]) => [`${method} ${path} ${status}`, r]),
      ),
    );
    expect(responses.length).toBeGreaterThan(20);
    const cors = ["Access-Control-Allow-Origin", "Access-Control-Expose-Headers"];
    const headers = Object.fromEntries(cors.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
    for (const [where, response] of responses) {
      expect(response, where as string).toMatchObject({ headers });
    }
    const { description } = doc.info;
    expect(description).toMatch(/preflight/);
    expect(description).toContain(
      "Access-Control-Allow-Headers: Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, X-Client-Name, x-d1-bookmark",
    );
  });

  it("is kind to generators: a type beside every const and enum, NewPet's default that does not make status required, a contact", async () => {
    const doc = await served();
    const untyped: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (node === null || typeof node !== "object") return;
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
      if (Array.isArray(node)) return;
      const schema = node as Json;
      const values =
        "const" in schema ? [schema.const] : "enum" in schema ? (schema.enum as unknown[]) : [];
      const json = (v: unknown) => (Number.isInteger(v) ? "integer" : typeof v);
      if (values.length > 0 && !values.every((v) => json(v) === schema.type)) untyped.push(at);
    };
    walk(doc, "#");
    expect(untyped).toEqual([]);
    // A `default` beside a property makes openapi-typescript require it; inside allOf it
    // still says what an absent status means.
    const status = (doc.components.schemas.NewPet as { properties: Record<string, Json> })
      .properties.status as Json;
    expect(status.default).toBeUndefined();
    expect(status.allOf).toEqual([
      { $ref: "#/components/schemas/PetStatus" },
      { default: "available" },
    ]);
    expect(doc.info).toMatchObject({
      contact: {
        name: expect.any(String),
        url: expect.stringMatching(/^https:\/\//),
        email: expect.stringMatching(/^[^@\s]+@[^@\s]+$/),
      },
    });
  });

  it("documents HEAD wherever GET gets a response: the same responses without bodies", async () => {
    const doc = await served();
    for (const [path, item] of Object.entries(doc.paths)) {
      expect(Object.keys(item).includes("head"), path).toBe(Object.keys(item).includes("get"));
      const { get, head } = item;
      if (!get || !head) continue;
      expect(head.operationId).toBe(`${get.operationId}Head`);
      expect(Object.keys(head.responses)).toEqual(Object.keys(get.responses));
      for (const [status, response] of Object.entries(head.responses)) {
        expect(response.content, `HEAD ${path} ${status}`).toBeUndefined();
        expect(response.headers).toEqual(get.responses[status]?.headers);
      }
    }
  });
});
