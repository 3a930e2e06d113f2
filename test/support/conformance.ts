// Response conformance: every response a test observes (test/helpers.ts `call()`) is checked
// against the OpenAPI document the worker serves, so code and document cannot drift.
// - A documented operation (method + path template under the server's base path; HEAD has
//   its own operations, whose responses have no body): the status is documented, the media
//   type too and the body validates against its schema (JSON Schema 2020-12), or is empty
//   when none is documented; every `required` header is present and every documented
//   header validates against its schema.
// - A documented path with another method: what each of the path's operations documents
//   for that status (the 401 or 429 that precedes a 405); the 405 itself is the service's own
//   response (below), documented by no operation because none of them gives it.
// - Anything else: one of the service's own responses: 204 with `Allow` for OPTIONS, JSON for
//   `GET /`, JavaScript (200 or 304) for a docs file, or the Error object with the status its
//   code stands for (`x-error-codes`) and the headers that status always carries.
import { Validator } from "@cfworker/json-schema";
import { MCP_METADATA_PATH, MCP_PATH } from "../../src/mcp-contract.ts";
import openApiDocument from "../../src/openapi/openapi.json" with { type: "json" };
import { DOCS_ASSETS_PATH } from "../../src/operations/docs.ts";

type Json = Record<string, unknown>;

interface HeaderObject {
  required?: boolean;
  schema?: Json;
  $ref?: string;
}

export interface OperationObject {
  operationId: string;
  deprecated?: boolean;
  security: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: "query" | "path" | "header"; schema: Json }>;
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<
    string,
    { headers?: Record<string, HeaderObject>; content?: Record<string, { schema?: Json }> }
  >;
}

/** The document the worker serves (openapi.test.ts: equal to what the schemas generate). */
export const doc = openApiDocument as unknown as {
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Json>; headers: Record<string, HeaderObject> };
  "x-error-codes": Record<string, { status: number }>;
};

/** The path every documented operation lives under (`/v1`), from the first server. */
const BASE_PATH = new URL(doc.servers[0]?.url ?? "http://invalid/").pathname.replace(/\/$/, "");

/** Headers a response of this status carries wherever it comes from. */
const ALWAYS_BY_STATUS: Record<number, string[]> = {
  401: ["WWW-Authenticate"],
  403: ["WWW-Authenticate"],
  405: ["Allow"],
  429: ["Retry-After"],
  503: ["Retry-After"],
};

const ERROR_SCHEMA = { $ref: "#/components/schemas/Error" };

/** The document's path templates as URL patterns, literal paths first (OpenAPI's rule). */
const PATHS = Object.keys(doc.paths)
  .map((template) => ({
    template,
    pattern: new URLPattern({
      pathname: BASE_PATH + template.replaceAll(/\{(\w+)\}/g, ":$1"),
    }),
  }))
  .sort((a, b) => Number(a.template.includes("{")) - Number(b.template.includes("{")));

/** A validator per schema object of the document, with `#/components/schemas/...` resolvable. */
const validators = new WeakMap<Json, Validator>();

/** Validates `value` against `schema`; a failure becomes a problem starting with `label`. */
function validate(problems: string[], label: string, schema: Json, value: unknown): boolean {
  let validator = validators.get(schema);
  if (!validator) {
    // structuredClone: the validator annotates the schema objects it is given.
    const root = structuredClone({ components: { schemas: doc.components.schemas }, ...schema });
    validator = new Validator(root, "2020-12", false);
    validators.set(schema, validator);
  }
  const { valid, errors } = validator.validate(value);
  if (valid) return true;
  const leaves = errors.filter(
    (e) => !["properties", "allOf", "$ref", "items", "anyOf"].includes(e.keyword),
  );
  const shown = (leaves.length > 0 ? leaves : errors).slice(0, 5);
  problems.push(`${label}: ${shown.map((e) => `${e.instanceLocation}: ${e.error}`).join("; ")}`);
  return false;
}

/** The body as JSON, or undefined with a problem named `label`. */
function parseJson(problems: string[], label: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    problems.push(`${label} is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
    return undefined;
  }
}

function mediaType(response: Response): string | undefined {
  return response.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
}

async function checkDocumented(
  problems: string[],
  request: Request,
  response: Response,
  op: OperationObject,
): Promise<void> {
  const documented = op.responses[String(response.status)];
  if (!documented) {
    const statuses = Object.keys(op.responses).join(", ");
    problems.push(
      `status ${response.status} is not documented for ${op.operationId} (documented: ${statuses})`,
    );
    return;
  }
  for (const [name, reference] of Object.entries(documented.headers ?? {})) {
    const header = reference.$ref
      ? doc.components.headers[reference.$ref.replace("#/components/headers/", "")]
      : reference;
    if (!header) throw new Error(`OpenAPI document: unresolvable header ${reference.$ref}`);
    const value = response.headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`required header ${name} is missing`);
    } else if (header.schema) {
      // `integer` headers are numbers on the wire.
      const seen =
        header.schema.type === "integer" && /^-?\d+$/.test(value) ? Number(value) : value;
      validate(problems, `header ${name}: ${JSON.stringify(value)}`, header.schema, seen);
    }
  }

  const text = await response.text();
  const content = documented.content ?? {};
  const type = mediaType(response);
  if (request.method === "HEAD" || Object.keys(content).length === 0) {
    if (text !== "") problems.push(`expected no body, got ${JSON.stringify(text.slice(0, 80))}`);
    return;
  }
  const entry = type ? content[type] : undefined;
  if (!entry) {
    const types = Object.keys(content).join(", ");
    problems.push(`Content-Type ${type ?? "(none)"} is not documented (documented: ${types})`);
    return;
  }
  if (!entry.schema) return;
  const body = type === "application/json" ? parseJson(problems, "body", text) : text;
  if (body !== undefined) validate(problems, "body", entry.schema, body);
}

/** A response outside the documented operations: the service's own shapes only. */
async function checkUndocumented(
  problems: string[],
  request: Request,
  response: Response,
  pathname: string,
): Promise<void> {
  const text = await response.text();
  const type = mediaType(response) ?? "(no Content-Type)";
  const read = ["GET", "HEAD"].includes(request.method);
  if (request.method === "OPTIONS" && response.status === 204) {
    if (!response.headers.get("Allow")) problems.push("OPTIONS response without Allow");
    if (text !== "") problems.push("OPTIONS response with a body");
  } else if (response.status < 400) {
    // Only `GET /` and the files of the docs page (and their HEAD) succeed outside the document.
    if (read && pathname.startsWith(`${DOCS_ASSETS_PATH}/`)) {
      if (![200, 304].includes(response.status)) {
        problems.push(`docs file responded with ${response.status}`);
      } else if (type !== "text/javascript") {
        problems.push(`docs file responded with ${type}`);
      }
    } else if (pathname !== "/" || !read) {
      problems.push(`undocumented success ${response.status} for ${request.method} ${pathname}`);
    } else if (type !== "application/json") {
      problems.push(`GET / responded with ${type}`);
    }
  } else {
    for (const name of ALWAYS_BY_STATUS[response.status] ?? []) {
      if (!response.headers.get(name)) problems.push(`required header ${name} is missing`);
    }
    if (request.method === "HEAD") return;
    if (type !== "application/json") {
      problems.push(`error responded with ${type}, not application/json`);
      return;
    }
    const body = parseJson(problems, "error body", text) as { code: string; status: number };
    if (body === undefined || !validate(problems, "error body", ERROR_SCHEMA, body)) return;
    if (body.status !== response.status) {
      problems.push(`error status ${body.status} != ${response.status}`);
    }
    if (doc["x-error-codes"][body.code]?.status !== response.status) {
      problems.push(`error code ${body.code} does not stand for ${response.status}`);
    }
  }
}

/**
 * Checks one observed response against the OpenAPI document; throws an Error naming
 * every problem. Reads a clone, so the caller can still read the response.
 */
export async function assertConforms(request: Request, response: Response): Promise<void> {
  const problems: string[] = [];
  // The path as the server routes it: percent-encoded characters decoded.
  let { pathname } = new URL(request.url);
  try {
    pathname = decodeURI(pathname);
  } catch {}
  // The MCP server's responses are the Model Context Protocol's (test/mcp.test.ts).
  if (pathname === MCP_PATH || pathname === MCP_METADATA_PATH) return;
  if (!response.headers.get("X-Request-Id")) problems.push("X-Request-Id is missing");
  const match = PATHS.find((p) => p.pattern.test({ pathname }));
  const item = match ? (doc.paths[match.template] ?? {}) : {};
  const op = item[request.method.toLowerCase()];
  let where = `${request.method} ${pathname} (not a documented operation)`;
  if (!match || request.method === "OPTIONS") {
    await checkUndocumented(problems, request, response.clone(), pathname);
  } else if (op) {
    where = `${op.operationId} (${request.method} ${match.template})`;
    await checkDocumented(problems, request, response.clone(), op);
  } else if (response.status === 405) {
    // A method the path does not have: the path's own response, which no operation gives.
    where = `${request.method} ${match.template} (a method the path does not have)`;
    await checkUndocumented(problems, request, response.clone(), pathname);
  } else {
    // What precedes that 405 (401, 429, a 5xx): the response must be the one every
    // operation of the path documents for it (HEAD's are GET's, bodiless).
    where = `${request.method} ${match.template} (a method the path does not have)`;
    for (const [method, other] of Object.entries(item)) {
      if (method !== "head") await checkDocumented(problems, request, response.clone(), other);
    }
  }
  if (problems.length > 0) {
    throw new Error(
      `Response ${response.status} to ${where} does not conform to the OpenAPI document:\n  - ${problems.join("\n  - ")}`,
    );
  }
}

/** The schema itself, or the component its $ref names. */
function resolve(schema: Json): Json {
  const ref = schema.$ref as string | undefined;
  return ref ? (doc.components.schemas[ref.split("/").at(-1) as string] as Json) : schema;
}

/**
 * A valid body for an operation, from the examples its schema documents: every field that
 * has one (so a change changes something), and every required field has one.
 */
export function exampleBody(op: OperationObject): Json {
  const schema = resolve(op.requestBody?.content["application/json"]?.schema ?? {});
  const properties = schema.properties as Record<string, Json>;
  const examples = Object.entries(properties).flatMap(([name, property]) => {
    const example = (resolve(property).examples as unknown[] | undefined)?.[0];
    return example === undefined ? [] : [[name, example] as const];
  });
  const missing = ((schema.required as string[]) ?? []).filter(
    (name) => !examples.some(([n]) => n === name),
  );
  if (missing.length > 0) throw new Error(`no example for required ${missing.join(", ")}`);
  return Object.fromEntries(examples);
}
