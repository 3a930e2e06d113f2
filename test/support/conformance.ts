// Response conformance: every answer a test observes is checked against the OpenAPI
// document the worker serves (src/openapi/openapi.json), so code and document cannot
// drift. test/helpers.ts `call()` runs it on every response.
//
// For a request that matches a documented operation (method + path template under the
// server's base path; HEAD has its own operations, whose answers have no body):
//   - the status is one the operation documents;
//   - the media type is a documented one, and the body validates against its schema
//     (JSON Schema 2020-12, components resolved), or is empty when none is documented;
//   - every header the response documents as `required` is present, and every
//     documented header that is present validates against its schema.
// A documented path with another method must answer what each of the path's operations
// documents for that status (405 with Allow, or the 401 that precedes it).
// Anything else (OPTIONS, an unknown path,
// the public `GET /` and the docs page's script files outside the document) must
// still be one of the service's own answers: 204 with `Allow` for OPTIONS, JSON for
// `GET /`, JavaScript (200 or 304) for a docs file, or the Error object with the
// status its code stands for (`x-error-codes`) and the headers that status always carries.
import { type OutputUnit, Validator } from "@cfworker/json-schema";
import { DOCS_ASSETS_PATH } from "../../src/openapi/docs-page.ts";
import openApiDocument from "../../src/openapi/openapi.json" with { type: "json" };

type Json = Record<string, unknown>;

interface HeaderObject {
  required?: boolean;
  schema?: Json;
  $ref?: string;
}

interface ResponseObject {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema?: Json }>;
}

interface OperationObject {
  operationId: string;
  responses: Record<string, ResponseObject>;
}

const doc = openApiDocument as unknown as {
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Json; headers: Record<string, HeaderObject> };
  "x-error-codes": Record<string, { status: number }>;
};

/** The path every documented operation lives under (`/v1`), from the first server. */
const BASE_PATH = new URL(doc.servers[0]?.url ?? "http://invalid/").pathname.replace(/\/$/, "");

/** Headers an answer of this status carries wherever it comes from. */
const ALWAYS_BY_STATUS: Record<number, string[]> = {
  401: ["WWW-Authenticate"],
  403: ["WWW-Authenticate"],
  405: ["Allow"],
  429: ["Retry-After"],
  503: ["Retry-After"],
};

interface PathMatcher {
  template: string;
  pattern: RegExp;
  literal: boolean;
}

const PATHS: PathMatcher[] = Object.keys(doc.paths)
  .map((template) => ({
    template,
    pattern: new RegExp(
      `^${template
        .split(/(\{[^}]+\})/)
        .map((part) =>
          part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
        )
        .join("")}$`,
    ),
    literal: !template.includes("{"),
  }))
  // Literal paths win over templated ones (OpenAPI's matching rule).
  .sort((a, b) => Number(b.literal) - Number(a.literal));

const validators = new Map<string, Validator>();

/** A validator for `schema`, with `#/components/schemas/...` resolvable. */
function validatorFor(key: string, schema: Json): Validator {
  let validator = validators.get(key);
  if (!validator) {
    // structuredClone: the validator annotates the schema objects it is given.
    const root = structuredClone({ components: { schemas: doc.components.schemas }, ...schema });
    validator = new Validator(root, "2020-12", false);
    validators.set(key, validator);
  }
  return validator;
}

function schemaErrors(errors: OutputUnit[]): string {
  const leaves = errors.filter(
    (e) => !["properties", "allOf", "$ref", "items", "anyOf"].includes(e.keyword),
  );
  return (leaves.length > 0 ? leaves : errors)
    .slice(0, 5)
    .map((e) => `${e.instanceLocation}: ${e.error}`)
    .join("; ");
}

function resolveHeader(header: HeaderObject): HeaderObject {
  if (!header.$ref) return header;
  const name = header.$ref.replace("#/components/headers/", "");
  const resolved = doc.components.headers[name];
  if (!resolved) throw new Error(`OpenAPI document: unresolvable header ${header.$ref}`);
  return resolved;
}

/** A header value as its schema sees it (`integer` headers are numbers on the wire). */
function headerValue(value: string, schema: Json | undefined): unknown {
  if (schema?.type === "integer" && /^-?\d+$/.test(value)) return Number(value);
  return value;
}

function mediaType(response: Response): string | undefined {
  return response.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
}

function matchOperation(
  method: string,
  pathname: string,
): { template: string; item: Record<string, OperationObject>; op?: OperationObject } | undefined {
  if (!pathname.startsWith(`${BASE_PATH}/`)) return undefined;
  const relative = pathname.slice(BASE_PATH.length);
  const match = PATHS.find((p) => p.pattern.test(relative));
  if (!match) return undefined;
  const item = doc.paths[match.template] ?? {};
  return { template: match.template, item, op: item[method.toLowerCase()] };
}

async function checkDocumented(
  problems: string[],
  request: Request,
  response: Response,
  template: string,
  op: OperationObject,
): Promise<void> {
  const documented = op.responses[String(response.status)];
  if (!documented) {
    problems.push(
      `status ${response.status} is not documented for ${op.operationId} (documented: ${Object.keys(op.responses).join(", ")})`,
    );
    return;
  }
  const key = `${template} ${op.operationId} ${response.status}`;

  for (const [name, reference] of Object.entries(documented.headers ?? {})) {
    const header = resolveHeader(reference);
    const value = response.headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`required header ${name} is missing`);
      continue;
    }
    if (header.schema) {
      const result = validatorFor(`${key} header ${name}`, header.schema).validate(
        headerValue(value, header.schema),
      );
      if (!result.valid) {
        problems.push(`header ${name}: ${JSON.stringify(value)}: ${schemaErrors(result.errors)}`);
      }
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
    problems.push(
      `Content-Type ${type ?? "(none)"} is not documented (documented: ${Object.keys(content).join(", ")})`,
    );
    return;
  }
  if (!entry.schema) return;
  let body: unknown = text;
  if (type === "application/json") {
    try {
      body = JSON.parse(text);
    } catch {
      problems.push(`body is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
      return;
    }
  }
  const result = validatorFor(`${key} body ${type}`, entry.schema).validate(body);
  if (!result.valid) problems.push(`body: ${schemaErrors(result.errors)}`);
}

/** An answer outside the documented operations: the service's own shapes only. */
async function checkUndocumented(
  problems: string[],
  request: Request,
  response: Response,
): Promise<void> {
  const text = await response.text();
  if (request.method === "OPTIONS" && response.status === 204) {
    if (!response.headers.get("Allow")) problems.push("OPTIONS answer without Allow");
    if (text !== "") problems.push("OPTIONS answer with a body");
    return;
  }
  const type = mediaType(response);
  if (response.status < 400) {
    // Only `GET /` and the files of the docs page (and their HEAD) answer successfully
    // outside the document.
    const { pathname } = new URL(request.url);
    const read = ["GET", "HEAD"].includes(request.method);
    if (read && pathname.startsWith(`${DOCS_ASSETS_PATH}/`)) {
      if (![200, 304].includes(response.status)) {
        problems.push(`docs file answered ${response.status}`);
      } else if (type !== "text/javascript") {
        problems.push(`docs file answered ${type ?? "(no Content-Type)"}`);
      }
    } else if (pathname !== "/" || !read) {
      problems.push(`undocumented success ${response.status} for ${request.method} ${pathname}`);
    } else if (type !== "application/json") {
      problems.push(`GET / answered ${type ?? "(no Content-Type)"}`);
    }
    return;
  }
  for (const name of ALWAYS_BY_STATUS[response.status] ?? []) {
    if (!response.headers.get(name)) problems.push(`required header ${name} is missing`);
  }
  if (request.method === "HEAD") return;
  if (type !== "application/json") {
    problems.push(`error answered ${type ?? "(no Content-Type)"}, not application/json`);
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    problems.push(`error body is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
    return;
  }
  const result = validatorFor("Error", { $ref: "#/components/schemas/Error" }).validate(body);
  if (!result.valid) {
    problems.push(`error body: ${schemaErrors(result.errors)}`);
    return;
  }
  const { code, status } = body as { code: string; status: number };
  if (status !== response.status) problems.push(`error status ${status} != ${response.status}`);
  if (doc["x-error-codes"][code]?.status !== response.status) {
    problems.push(`error code ${code} does not stand for ${response.status}`);
  }
}

function decodedPath(pathname: string): string {
  try {
    return decodeURI(pathname);
  } catch {
    return pathname;
  }
}

/**
 * Checks one observed response against the OpenAPI document; throws an Error naming
 * every problem. Reads a clone, so the caller can still read the response.
 */
export async function assertConforms(request: Request, response: Response): Promise<void> {
  const problems: string[] = [];
  // The path as the server routes it: percent-encoded characters decoded.
  const pathname = decodedPath(new URL(request.url).pathname);
  if (!response.headers.get("X-Request-Id")) problems.push("X-Request-Id is missing");
  const match = matchOperation(request.method, pathname);
  let where: string;
  if (match?.op && request.method !== "OPTIONS") {
    where = `${match.op.operationId} (${request.method} ${match.template})`;
    await checkDocumented(problems, request, response.clone(), match.template, match.op);
  } else if (match && request.method !== "OPTIONS") {
    // A documented path with a method it does not have (405, or what precedes it: 401,
    // 429): the answer must be the one every operation of the path documents for it.
    where = `${request.method} ${match.template} (a method the path does not have)`;
    // (HEAD operations aside: theirs are the GET answers without bodies.)
    for (const [method, op] of Object.entries(match.item)) {
      if (method === "head") continue;
      await checkDocumented(problems, request, response.clone(), match.template, op);
    }
  } else {
    where = `${request.method} ${pathname} (not a documented operation)`;
    await checkUndocumented(problems, request, response.clone());
  }
  if (problems.length > 0) {
    throw new Error(
      `Response ${response.status} to ${where} does not conform to the OpenAPI document:\n  - ${problems.join("\n  - ")}`,
    );
  }
}
