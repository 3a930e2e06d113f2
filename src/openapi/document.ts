// Builds the OpenAPI 3.1 document from the schemas that validate requests
// (src/pets/schemas.ts, src/errors.ts) and the operation table (src/operations.ts).
// Run at build time by scripts/openapi.ts; the worker serves the JSON it writes,
// so no isolate pays for generating it. A test rebuilds it and compares.
import * as z from "zod/mini";
import packageJson from "../../package.json" with { type: "json" };
import { IDEMPOTENCY_TTL_SECONDS, MAX_BODY_BYTES, PAGE_SIZE } from "../config.ts";
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from "../errors.ts";
import { CLIENT_CACHE_CONTROL } from "../http/conditional-read.ts";
import { ALLOWED_REQUEST_HEADERS, EXPOSED_HEADERS, PREFLIGHT_MAX_AGE } from "../http/cors.ts";
import { BOOKMARK, BOOKMARK_HEADER } from "../http/d1-session.ts";
import { deprecationHeaders } from "../http/deprecation.ts";
import { ETAG_FORMAT } from "../http/etag.ts";
import {
  COMMON_ERRORS,
  getPet,
  type HeaderName,
  OPERATIONS,
  type Operation,
  PUBLIC_COMMON_ERRORS,
} from "../operations.ts";
import { IDEMPOTENCY_KEY } from "../pets/idempotency.ts";
import { PetNameSchema, portableNamePattern } from "../pets/schemas.ts";
import { SCOPE_DESCRIPTIONS, SCOPES } from "../scopes.ts";

type Json = Record<string, unknown>;

/** getPet's deprecation date as a person reads it (the header says `@<unix seconds>`). */
const DEPRECATED_SINCE = new Date(getPet.deprecation.since * 1000).toUTCString();
const DEPRECATION_HEADERS = deprecationHeaders(getPet.deprecation);

const REF = (id: string) => `#/components/schemas/${id}`;

/** What every schema of the document is written with. */
const JSON_SCHEMA_OPTIONS = {
  target: "draft-2020-12",
  // A name's rules as a pattern that every validator reads alike (see portableNamePattern).
  override: ({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: Json }) => {
    if (zodSchema === PetNameSchema) jsonSchema.pattern = portableNamePattern();
  },
} as const;

/** Components from the global registry (every schema with a meta `id`). */
function componentSchemas(): Json {
  const pass = (io: "input" | "output") =>
    z.toJSONSchema(z.globalRegistry, { ...JSON_SCHEMA_OPTIONS, io, uri: REF }).schemas as Record<
      string,
      Json
    >;
  const output = pass("output");
  const input = pass("input");
  const result: Json = {};
  for (const [id, schema] of Object.entries(output)) {
    // Request bodies are described as clients send them (defaults optional).
    const chosen = id === "NewPet" ? input[id] : schema;
    const { $schema: _s, $id: _i, ...rest } = chosen as Json;
    result[id] = rest;
  }
  return result;
}

/**
 * A schema as it appears inside an operation: a $ref when it is a named
 * component, else inline with its named parts pointing at the components.
 */
function inline(schema: z.core.$ZodType): Json {
  const id = z.globalRegistry.get(schema)?.id;
  if (id) return { $ref: REF(id) };
  const {
    $schema: _s,
    $defs: _d,
    ...rest
  } = z.toJSONSchema(schema, { ...JSON_SCHEMA_OPTIONS, io: "input" }) as Json;
  // Named sub-schemas are emitted as components; point at them instead of local $defs.
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
}

/**
 * Header components. `required: true` marks a header that every response listing it
 * carries; the others are conditional (a header that is conditional in one response
 * and always sent in another is made required where always sent: see headerObjects).
 */
const HEADERS: Record<HeaderName, { description: string; required?: true; schema: Json }> = {
  "X-Request-Id": {
    description:
      "Identifies the request in the logs (the `cf-ray` value when present). On every response.",
    required: true,
    schema: { type: "string", minLength: 1 },
  },
  Link: {
    description:
      'RFC 8288 links. listPets: `<URL>; rel="next"` when more animals follow (absent on the last page). getPet: `rel="successor-version"` and `rel="deprecation"`.',
    schema: { type: "string" },
  },
  Location: {
    description: "Path of the created animal, `/v1/pets/{id}`.",
    required: true,
    schema: { type: "string", pattern: "^/v1/pets/[1-9][0-9]*$" },
  },
  Deprecation: {
    description: `RFC 9745: when the operation was deprecated, as \`@<unix seconds>\` (${DEPRECATION_HEADERS.Deprecation}: ${DEPRECATED_SINCE}).`,
    schema: { type: "string", const: DEPRECATION_HEADERS.Deprecation },
  },
  Sunset: {
    description: "RFC 8594: when the operation stops answering.",
    schema: { type: "string", const: DEPRECATION_HEADERS.Sunset },
  },
  "Retry-After": {
    description: "Seconds to wait before retrying.",
    required: true,
    schema: { type: "integer", minimum: 0 },
  },
  "Idempotent-Replayed": {
    description:
      "`true` when this is the stored response of an earlier request with the same `Idempotency-Key`.",
    schema: { type: "string", enum: ["true"] },
  },
  "WWW-Authenticate": {
    description:
      'RFC 6750: `Bearer realm="petstore"`; on 401 with `error="invalid_token"` when a key was sent but is not valid (unknown, revoked or expired); on 403 with `error="insufficient_scope", scope="<scope>"` naming the scope the operation needs.',
    required: true,
    schema: { type: "string", pattern: '^Bearer realm="petstore"' },
  },
  Allow: { description: "Methods the path allows.", required: true, schema: { type: "string" } },
  "Cache-Control": {
    description:
      "`private, no-cache` on the 200 and 304 answers of listPets and getPet: a client may keep the answer and must revalidate it (`If-None-Match`); a shared cache must not keep it. `no-store` on 410 answers.",
    required: true,
    schema: { type: "string", enum: [CLIENT_CACHE_CONTROL, "no-store"] },
  },
  ETag: {
    description:
      "A strong entity tag computed from the body: equal bodies have equal tags. Send it back in `If-None-Match` to get 304 while the answer is unchanged.",
    required: true,
    schema: { type: "string", pattern: ETAG_FORMAT.source },
  },
  "x-d1-bookmark": {
    description:
      "D1 Sessions bookmark of the data this response reflects. Send it back as `x-d1-bookmark` to read your own writes from any location. An answer served from the edge cache ran no query: it carries the bookmark the request sent, or none.",
    schema: { type: "string" },
  },
  "Access-Control-Allow-Origin": {
    description:
      "CORS: on every response to a request with an `Origin` the service allows (`*` by default; else that origin, with `Vary: Origin`).",
    schema: { type: "string", minLength: 1 },
  },
  "Access-Control-Expose-Headers": {
    description:
      "CORS: the response headers a page on another origin may read, sent with `Access-Control-Allow-Origin`.",
    schema: { type: "string", const: EXPOSED_HEADERS.join(", ") },
  },
};

/** CORS headers: every response may carry them (when the request has an allowed Origin). */
const CORS_HEADERS: HeaderName[] = ["Access-Control-Allow-Origin", "Access-Control-Expose-Headers"];

/** Headers each error code's answers carry beyond X-Request-Id. */
const ERROR_HEADERS: Partial<Record<ErrorCode, HeaderName[]>> = {
  unauthorized: ["WWW-Authenticate"],
  insufficient_scope: ["WWW-Authenticate"],
  method_not_allowed: ["Allow"],
  rate_limited: ["Retry-After"],
  service_unavailable: ["Retry-After"],
  gone: ["Cache-Control"],
};

/**
 * The headers of one response: a $ref to the component, or, for a header that this
 * response always carries but the component marks conditional, the component inlined
 * with `required: true` (a Reference Object cannot carry `required`).
 */
function headerObjects(names: HeaderName[], always: HeaderName[] = []): Json {
  const all: HeaderName[] = ["X-Request-Id", ...names, ...CORS_HEADERS];
  return Object.fromEntries(
    [...new Set(all)].map((name) => [
      name,
      always.includes(name) && !HEADERS[name].required
        ? { ...HEADERS[name], required: true }
        : { $ref: `#/components/headers/${name}` },
    ]),
  );
}

/** Headers every answer of the operation past the key check carries. */
function alwaysHeaders(op: Operation): HeaderName[] {
  return op.deprecation ? ["Deprecation", "Sunset", "Link"] : [];
}

function errorResponses(op: Operation): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...(op.public ? PUBLIC_COMMON_ERRORS : COMMON_ERRORS), ...op.errors]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Json = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    // 401 comes before the operation runs, and 405 is the path's answer to a method it
    // does not have, not this operation's: neither carries the operation's own headers.
    // A 5xx may come from the key check too (database down), so there they are
    // documented but not promised.
    const own = status === 401 || status === 405 ? [] : alwaysHeaders(op);
    const always = status >= 500 ? [] : own;
    const headers = new Set<HeaderName>([
      ...statusCodes.flatMap((c) => ERROR_HEADERS[c] ?? []),
      ...own,
    ]);
    responses[String(status)] = {
      description: statusCodes.map((c) => `\`${c}\`: ${ERROR_DESCRIPTIONS[c]}`).join(" "),
      headers: headerObjects([...headers], always),
      content: {
        "application/json": {
          schema: {
            allOf: [
              { $ref: REF("Error") },
              { properties: { code: { enum: statusCodes }, status: { const: status } } },
            ],
          },
        },
      },
    };
  }
  return responses;
}

function parameters(op: Operation): Json[] {
  const result: Json[] = [];
  for (const [where, schema] of [
    ["query", op.query],
    ["path", op.params],
  ] as const) {
    if (!schema) continue;
    const json = inline(schema) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      const { description, ...propertySchema } = property;
      result.push({
        name,
        in: where,
        required: where === "path" || (json.required ?? []).includes(name),
        description,
        schema: propertySchema,
      });
    }
  }
  if (op.conditional) {
    result.push({
      name: "If-None-Match",
      in: "header",
      required: false,
      description:
        "ETags of answers the client holds (RFC 9110: a comma-separated list, weak comparison, `*` for any). When one matches the current answer, the answer is 304 with no body.",
      schema: { type: "string" },
    });
  }
  if (op.session === "read") {
    result.push({
      name: BOOKMARK_HEADER,
      in: "header",
      required: false,
      description: `A bookmark from an earlier response: the read sees data at least that fresh. Malformed: 400 \`invalid_parameter\`. Only reads take it; other operations ignore it.`,
      schema: { type: "string", pattern: BOOKMARK.source },
    });
  }
  for (const name of op.requestHeaders ?? []) {
    result.push({
      name,
      in: "header",
      required: false,
      description: `Makes the create safe to retry: 1-255 printable ASCII characters (a structured-field string \`"abc"\` means \`abc\`), scoped to the API key and kept ${IDEMPOTENCY_TTL_SECONDS / 3600} hours. Same key + same JSON body replays the first response, concurrent retries included; another body is 422.`,
      // The length as the server counts it: that of the value, inside the quotes of a
      // structured-field string, where an escape counts once.
      schema: { type: "string", pattern: IDEMPOTENCY_KEY.source },
    });
  }
  return result;
}

/** Headers of a conditional read's 200 and 304 answers (src/http/conditional-read.ts). */
const CONDITIONAL_HEADERS: HeaderName[] = ["ETag", "Cache-Control"];

function operationObject(op: Operation): Json {
  const responses: Json = {};
  const conditional = op.conditional ? CONDITIONAL_HEADERS : [];
  if (op.success) {
    responses[String(op.success.status)] = {
      description: op.success.description,
      headers: headerObjects(
        [...op.success.headers, ...conditional, ...alwaysHeaders(op)],
        alwaysHeaders(op),
      ),
      content: {
        [op.success.mediaType ?? "application/json"]: { schema: inline(op.success.schema) },
      },
    };
  }
  if (op.conditional) {
    responses["304"] = {
      description:
        "Not modified: the `If-None-Match` of the request matches the current `ETag`. No body; the headers that describe the answer (`ETag`, `Cache-Control`, `Link`) are kept.",
      headers: headerObjects(
        [...conditional, "Link", ...alwaysHeaders(op), "x-d1-bookmark"],
        alwaysHeaders(op),
      ),
    };
  }
  Object.assign(responses, errorResponses(op));
  const object: Json = {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [op.public ? "documentation" : op.path.startsWith("/store") ? "store" : "animals"],
  };
  object.security = op.scope ? [{ bearerAuth: [op.scope] }] : [];
  if (op.deprecation) object.deprecated = true;
  if (op.stability) object["x-stability"] = op.stability;
  const params = parameters(op);
  if (params.length > 0) object.parameters = params;
  if (op.body) {
    object.requestBody = {
      required: true,
      description: `JSON, at most ${MAX_BODY_BYTES} bytes, sent with \`Content-Type: application/json\` and not compressed (no \`Content-Encoding\` other than \`identity\`). Repeated keys and unknown fields are refused.`,
      content: { "application/json": { schema: inline(op.body) } },
    };
  }
  object.responses = responses;
  return object;
}

/**
 * HEAD, which the service answers wherever it answers GET: the GET operation's
 * answers (statuses and headers) without their bodies.
 */
function headObject(op: Operation, get: Json): Json {
  const responses = Object.fromEntries(
    Object.entries(get.responses as Record<string, Json>).map(([status, response]) => {
      const { content: _content, ...headersOnly } = response;
      return [status, headersOnly];
    }),
  );
  return {
    ...get,
    operationId: `${op.operationId}Head`,
    summary: `${op.summary}: headers only`,
    description: `The answer of \`GET ${op.path}\` without its body (HTTP HEAD).`,
    responses,
  };
}

export function buildOpenApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    const object = operationObject(op);
    paths[op.path] = {
      ...paths[op.path],
      [op.method]: object,
      ...(op.method === "get" ? { head: headObject(op, object) } : {}),
    };
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "Pet Store API",
      // The release's version: package.json is the one place it is written.
      version: packageJson.version,
      description: [
        "JSON over HTTP for the animals of a pet store. Every operation needs `Authorization: Bearer <API_KEY>` with a key that carries the operation's scope (see the `bearerAuth` scheme).",
        "",
        `Errors are always the \`Error\` object (\`code\`, \`message\`, \`status\`, optional \`details\`). Pages: keyset pagination, \`limit\` ${PAGE_SIZE.min}..${PAGE_SIZE.max} (default ${PAGE_SIZE.default}), next page in the \`Link\` header. Request bodies: at most ${MAX_BODY_BYTES} bytes, checked in the order size (413), media type and content coding (415: \`Content-Type: application/json\`, no \`Content-Encoding\` but \`identity\`), JSON syntax (400), fields (400).`,
        "",
        `Rate limits apply per API key (429 with \`Retry-After\`).`,
        "",
        `CORS: browsers may call the API from the configured origins (\`*\` unless configured; no cookies are used). Every response to a request with an allowed \`Origin\` carries \`Access-Control-Allow-Origin\` and \`Access-Control-Expose-Headers: ${EXPOSED_HEADERS.join(", ")}\`. A preflight (\`OPTIONS\` with \`Access-Control-Request-Method\`) to any path of this document is answered 204 without a key, with \`Allow\`, \`Access-Control-Allow-Methods\` (the path's methods and the requested one, so a method the path lacks gets its 405 Error), \`Access-Control-Allow-Headers: ${ALLOWED_REQUEST_HEADERS.join(", ")}\` and \`Access-Control-Max-Age: ${PREFLIGHT_MAX_AGE}\`.`,
        "",
        `Deprecation: \`GET /pets/{petId}\` is deprecated since ${DEPRECATED_SINCE} (\`Deprecation: ${DEPRECATION_HEADERS.Deprecation}\`) and answers 410 from ${DEPRECATION_HEADERS.Sunset} (\`Sunset\` header).`,
      ].join("\n"),
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [
      { url: "https://api.petstore.example.com/v1", description: "production" },
      { url: "https://staging.petstore.example.com/v1", description: "staging" },
    ],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: "animals", description: "The animals of the store." },
      { name: "store", description: "Store operations (experimental)." },
      { name: "documentation", description: "This document and its reference page (public)." },
    ],
    paths,
    components: {
      schemas: componentSchemas(),
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: [
            "API keys start with `psk_` and are issued with `npm run keys -- create`. Each key carries one or more scopes; each operation's `security` names the scope it needs, and a key without it gets 403 `insufficient_scope`. A key may also carry an expiry instant, from which it is refused with 401.",
            "",
            ...SCOPES.map((scope) => `- \`${scope}\`: ${SCOPE_DESCRIPTIONS[scope]}`),
          ].join("\n"),
        },
      },
    },
    "x-error-codes": Object.fromEntries(
      Object.entries(ERROR_STATUS).map(([code, status]) => [
        code,
        { status, description: ERROR_DESCRIPTIONS[code as ErrorCode] },
      ]),
    ),
  };
}
