// The OpenAPI 3.1 document, written at build time (scripts/openapi.ts) by zod-openapi from the
// operation table: each operation's schemas and own responses, and RESPONSES, what each field adds.
import type * as z from "zod/mini";
import { createDocument, type ZodOpenApiOperationObject } from "zod-openapi";
import packageJson from "../../package.json" with { type: "json" };
import { REALM, WWW_AUTHENTICATE } from "../auth/middleware.ts";
import {
  CACHE_MAX_AGE_MS,
  CLIENT_NAME_MAX_LENGTH,
  IF_MATCH_MAX_LENGTH,
  IF_NONE_MATCH_MAX_LENGTH,
  MAX_BODY_BYTES,
  PAGE_SIZE,
} from "../config.ts";
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode, errorSchema } from "../errors.ts";
import { CLIENT_CACHE_CONTROL, IF_NONE_MATCH } from "../http/conditional-read.ts";
import { type CorsHeaders, PREFLIGHT_MAX_AGE } from "../http/cors.ts";
import { BOOKMARK, BOOKMARK_HEADER } from "../http/d1-session.ts";
import { deprecatedSince, deprecationHeaders, NO_STORE } from "../http/deprecation.ts";
import { ETAG, IF_MATCH } from "../http/etag.ts";
import { JSON_MEDIA_TYPE } from "../http/json-body.ts";
import { CLIENT_NAME, CLIENT_NAME_CHARACTERS, REQUEST_ID } from "../http/request-context.ts";
import { OPERATIONS, type Operation, TAGS } from "../operations/index.ts";
import type { HeaderDoc, HeaderParameter } from "../operations/operation.ts";
import { PetNameSchema, portableNamePattern } from "../pets/schemas.ts";
import { SCOPE_DESCRIPTIONS, SCOPES } from "../scopes.ts";

type Json = Record<string, unknown>;

/** The headers the middleware sets, described once. */
const HEADERS = {
  requestId: {
    description:
      "Identifies the request in the logs (the `cf-ray` value when present). On every response.",
    schema: { type: "string", minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9-]+$" },
  },
  allowOrigin: {
    description:
      "CORS: on every response to a request with an `Origin` the service allows (`*` by default; else that origin, with `Vary: Origin`).",
    schema: { type: "string", minLength: 1, maxLength: 2048 },
  },
  challenge: {
    description:
      'RFC 6750: `Bearer realm="petstore"`; on 401 with `error="invalid_token"` when a key was sent but is not valid (unknown, revoked or expired); on 403 with `error="insufficient_scope", scope="<scope>"` naming the scope the operation needs.',
    schema: { type: "string", maxLength: 256, pattern: `^${REALM}` },
  },
  retryAfter: {
    description: "Seconds to wait before retrying.",
    schema: { type: "integer", format: "int32", minimum: 0, maximum: 86400 },
  },
  bookmark: {
    description:
      "D1 Sessions bookmark of the data this response reflects (a cached response: that of the read it holds). Send it back as `x-d1-bookmark` to read your own writes, changes and removals from any location.",
    schema: { type: "string", maxLength: 256, pattern: BOOKMARK.source },
  },
  clientCache: {
    description:
      "`private, no-cache`: a client may keep the response and must revalidate it (`If-None-Match`); a shared cache must not keep it.",
    schema: { type: "string", const: CLIENT_CACHE_CONTROL },
  },
  gone: {
    description: "`no-store`: a 410 is cacheable by default.",
    schema: { type: "string", const: NO_STORE },
  },
} satisfies Record<string, HeaderDoc>;

/** The header parameters the middleware reads. */
const PARAMETERS = {
  bookmark: {
    name: BOOKMARK_HEADER,
    description:
      "A bookmark from an earlier response: the read sees data at least that fresh, never a cached response older than it. Malformed: 400 `invalid_parameter`. Only reads take it; other operations ignore it.",
    schema: { type: "string", maxLength: 256, pattern: BOOKMARK.source },
  },
  clientName: {
    name: CLIENT_NAME,
    description: `The calling application, for the request log (\`@petstore/client\` sends its \`appName\` and its own version). Optional. At most ${CLIENT_NAME_MAX_LENGTH} printable ASCII characters: any other value is 400 \`invalid_parameter\` naming the header, as a parameter or header the service cannot take as sent always is, rather than a name logged cut short or garbled (bytes beyond ASCII in a header have no declared encoding).`,
    schema: {
      type: "string",
      maxLength: CLIENT_NAME_MAX_LENGTH,
      pattern: CLIENT_NAME_CHARACTERS.source,
    },
  },
  ifMatch: {
    name: IF_MATCH,
    description:
      "Optimistic concurrency (RFC 9110 13.1.1): `*` or the animal's `ETag` (from getPet, createPet or an earlier updatePet; a comma-separated list may name several). When none is its current tag, 412 `precondition_failed` and nothing changes; compared strongly, so a weak tag never matches. A malformed field is 400. Without it the change applies to the animal as it is; an animal that does not exist is 404 whatever it says.",
    schema: { type: "string", maxLength: IF_MATCH_MAX_LENGTH },
  },
  ifNoneMatch: {
    name: IF_NONE_MATCH,
    description:
      "ETags of responses the client holds (RFC 9110: a comma-separated list, weak comparison, `*` for any). When one matches the current response, the response is 304 with no body.",
    schema: { type: "string", maxLength: IF_NONE_MATCH_MAX_LENGTH },
  },
} satisfies Record<string, HeaderParameter>;

/** One response of an operation: its error codes (none: a success) and headers. */
interface DocumentedResponse {
  description?: string;
  codes: ErrorCode[];
  headers: Map<string, { doc: HeaderDoc; required: boolean }>;
}

/** The responses `op` can give, status by status: what each field of the table adds. */
function responsesOf(op: Operation): Map<number, DocumentedResponse> {
  const responses = new Map<number, DocumentedResponse>();
  const response = (status: number) => {
    const found: DocumentedResponse = responses.get(status) ?? { codes: [], headers: new Map() };
    responses.set(status, found);
    return found;
  };
  const error = (code: ErrorCode) => {
    const a = response(ERROR_STATUS[code]);
    if (!a.codes.includes(code)) a.codes.push(code);
  };
  const header = (status: number, name: string, doc: HeaderDoc, required = false) =>
    response(status).headers.set(name, { doc, required });

  const success = op.success?.status;
  const ownNotModified = op.success && "notModified" in op.success && op.success.notModified;
  const notModified = op.conditional || ownNotModified ? 304 : undefined;
  const successes = [success, notModified].filter((s) => s !== undefined);
  if (success !== undefined && op.success) response(success).description = op.success.description;
  if (notModified !== undefined) {
    response(notModified).description = ownNotModified || NOT_MODIFIED;
  }
  if (op.scope) {
    error("unauthorized");
    error("insufficient_scope");
    error("rate_limited");
    error("service_unavailable");
  }
  if (op.deprecation) error("gone");
  // Every operation reads X-Client-Name; some read parameters and other headers too.
  error("invalid_parameter");
  if (op.body) {
    for (const code of ["invalid_json", "validation_failed", "payload_too_large"] as const)
      error(code);
    error("unsupported_media_type");
  }
  if (op.ifMatch) error("precondition_failed");
  if (op.pets) error("service_unavailable");
  for (const code of op.errors ?? []) error(code);
  error("internal_error");

  for (const status of successes) {
    if (op.pets) header(status, BOOKMARK_HEADER, HEADERS.bookmark);
    if (op.conditional) {
      header(status, "ETag", ETAG, true);
      header(status, "Cache-Control", HEADERS.clientCache, true);
    }
    for (const [name, doc] of Object.entries(op.success?.headers ?? {})) {
      // A 304 keeps the headers that describe the response, none that describe a creation.
      if (status === success || op.conditional || ownNotModified) {
        header(status, name, doc, doc.required === true);
      }
    }
  }
  for (const [status, a] of responses) {
    a.headers = new Map([
      [REQUEST_ID, { doc: HEADERS.requestId, required: true }],
      ["Access-Control-Allow-Origin", { doc: HEADERS.allowOrigin, required: false }],
      ["Access-Control-Expose-Headers", { doc: EXPOSE_HEADERS, required: false }],
      ...deprecationResponseHeaders(op, status),
      ...a.headers,
    ]);
    if (status === 401 || status === 403) header(status, WWW_AUTHENTICATE, HEADERS.challenge, true);
    if (status === 429 || status === 503) header(status, "Retry-After", HEADERS.retryAfter, true);
    if (status === 410) header(status, "Cache-Control", HEADERS.gone, true);
  }
  return new Map([...responses].sort(([a], [b]) => a - b));
}

const NOT_MODIFIED =
  "Not modified: the `If-None-Match` of the request matches the current `ETag`. No body; the headers that describe the response (`ETag`, `Cache-Control`, `Link`) are kept.";

/** Replaced by the exposed list once it is known (the list is read off the document). */
const EXPOSE_HEADERS: HeaderDoc = {
  description:
    "CORS: the response headers a page on another origin may read, sent with `Access-Control-Allow-Origin`.",
  schema: { type: "string" },
};

/**
 * A deprecated operation's headers: on every response past the key check (all but a 401);
 * a 429, 500 or 503 may come before it, so there they are not always present.
 */
function deprecationResponseHeaders(op: Operation, status: number) {
  const { deprecation } = op;
  if (!deprecation || status === 401) return [];
  const values = deprecationHeaders(deprecation);
  const required = ![429, 500, 503].includes(status);
  const docs: Array<[string, HeaderDoc]> = [
    [
      "Deprecation",
      {
        description: `RFC 9745: when the operation was deprecated, as \`@<unix seconds>\` (${values.Deprecation}: ${deprecatedSince(deprecation)}).`,
        schema: { type: "string", const: values.Deprecation },
      },
    ],
    [
      "Sunset",
      {
        description: "RFC 8594: when the operation stops responding.",
        schema: { type: "string", const: values.Sunset },
      },
    ],
    [
      "Link",
      {
        description: 'RFC 8288: `rel="successor-version"` and `rel="deprecation"`.',
        schema: { type: "string", maxLength: 1024, pattern: "^<" },
      },
    ],
  ];
  return docs.map(([name, doc]) => [name, { doc, required }] as const);
}

/** What a body must be: the body middleware's rules, sent as one of `mediaTypes`. */
const bodyRules = (mediaTypes: readonly string[]) =>
  `JSON, at most ${MAX_BODY_BYTES} bytes, sent with ${mediaTypes.map((t) => `\`Content-Type: ${t}\``).join(" or ")} (UTF-8) and not compressed (no \`Content-Encoding\` other than \`identity\`). Repeated keys and unknown fields are refused.`;

/** The header parameters `op` reads, by name. */
function headerParameters(op: Operation): Json[] {
  const read = [
    PARAMETERS.clientName,
    ...(op.conditional ? [PARAMETERS.ifNoneMatch] : []),
    ...(op.ifMatch ? [PARAMETERS.ifMatch] : []),
    ...(op.pets === "read" ? [PARAMETERS.bookmark] : []),
    ...(op.headers ?? []),
  ];
  return read
    .map((p) => ({
      name: p.name,
      in: "header",
      required: false,
      description: p.description,
      schema: p.schema,
    }))
    .sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
}

function errorContent(status: number, codes: ErrorCode[]): Json {
  const properties = {
    code: { type: "string", enum: codes },
    status: { type: "integer", format: "int32", const: status, minimum: status, maximum: status },
  };
  return {
    "application/json": {
      schema: { allOf: [{ $ref: "#/components/schemas/Error" }, { properties }] },
    },
  };
}

/**
 * Header components: a header whose every use shares one description is a component, marked
 * required when every use is; the rest, and a required use of an optional one, are inline.
 */
function headerComponents(all: Array<Map<number, DocumentedResponse>>) {
  const uses = new Map<string, Array<{ doc: HeaderDoc; required: boolean }>>();
  for (const responses of all) {
    for (const a of responses.values()) {
      for (const [name, use] of a.headers) uses.set(name, [...(uses.get(name) ?? []), use]);
    }
  }
  const components: Record<string, Json> = {};
  for (const [name, list] of uses) {
    if (list.every((use) => use.doc === list[0]?.doc)) {
      const { doc } = list[0] as { doc: HeaderDoc };
      components[name] = {
        description: doc.description,
        ...(list.every((use) => use.required) ? { required: true } : {}),
        schema: doc.schema,
      };
    }
  }
  const objectOf = (name: string, use: { doc: HeaderDoc; required: boolean }) => {
    const component = components[name];
    if (component && (component.required || !use.required)) {
      return { $ref: `#/components/headers/${name}` };
    }
    return {
      description: use.doc.description,
      ...(use.required ? { required: true } : {}),
      schema: use.doc.schema,
    };
  };
  return { components, objectOf };
}

function operationObject(
  op: Operation,
  responses: Map<number, DocumentedResponse>,
  headerObject: (name: string, use: { doc: HeaderDoc; required: boolean }) => Json,
): ZodOpenApiOperationObject {
  const parameters = headerParameters(op);
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    security: op.scope ? [{ bearerAuth: [op.scope] }] : [],
    ...(op.deprecation ? { deprecated: true } : {}),
    ...(op.stability ? { "x-stability": op.stability } : {}),
    ...(op.params || op.query
      ? {
          requestParams: {
            ...(op.params ? { path: op.params as z.ZodMiniObject } : {}),
            ...(op.query ? { query: op.query as z.ZodMiniObject } : {}),
          },
        }
      : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            description: bodyRules(op.bodyMediaTypes ?? [JSON_MEDIA_TYPE]),
            content: Object.fromEntries(
              (op.bodyMediaTypes ?? [JSON_MEDIA_TYPE]).map((t) => [t, { schema: op.body }]),
            ),
          },
        }
      : {}),
    responses: Object.fromEntries(
      [...responses].map(([status, a]) => {
        const headers = Object.fromEntries(
          [...a.headers].map(([name, use]) => [name, headerObject(name, use)]),
        );
        if (a.codes.length > 0) {
          const description = a.codes.map((c) => `\`${c}\`: ${ERROR_DESCRIPTIONS[c]}`).join(" ");
          return [String(status), { description, headers, content: errorContent(status, a.codes) }];
        }
        const success = op.success;
        const content =
          success && status === success.status && "schema" in success
            ? {
                [("asset" in success && success.asset.mediaType) || JSON_MEDIA_TYPE]: {
                  schema: success.schema,
                },
              }
            : undefined;
        return [
          String(status),
          { description: a.description ?? "", headers, ...(content ? { content } : {}) },
        ];
      }),
    ),
  } as ZodOpenApiOperationObject;
}

/** HEAD, served wherever GET is: the GET operation's responses without their bodies. */
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
    description: `The response of \`GET ${op.path}\` without its body (HTTP HEAD).`,
    responses,
  };
}

/** Response headers a page may read without their being exposed (Fetch: CORS-safelisted). */
const SAFELISTED = [
  "cache-control",
  "content-language",
  "content-length",
  "content-type",
  "expires",
  "last-modified",
  "pragma",
];

const byName = (a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase());

/** What a page on another origin may read and send: every header of the document. */
export function corsHeaders(document: Json): CorsHeaders {
  const paths = Object.values(document.paths as Record<string, Record<string, Json>>);
  const operations = paths.flatMap((item) => Object.values(item));
  const sent = operations.flatMap((op) =>
    Object.values(op.responses as Record<string, Json>).flatMap((r) =>
      Object.keys(r.headers ?? {}),
    ),
  );
  const read = operations.flatMap((op) =>
    ((op.parameters ?? []) as Json[]).filter((p) => p.in === "header").map((p) => String(p.name)),
  );
  const bodies = operations.some((op) => op.requestBody) ? ["Content-Type"] : [];
  return {
    // Allow: on OPTIONS and 405 responses, which no operation gives.
    exposed: [...new Set([...sent, "Allow"])]
      .filter((n) => !SAFELISTED.includes(n.toLowerCase()) && !/^access-control-/i.test(n))
      .sort(byName),
    allowed: [...new Set(["Authorization", ...bodies, ...read])].sort(byName),
  };
}

export function buildOpenApiDocument(): Json {
  const table = OPERATIONS.map((op) => ({ op, responses: responsesOf(op) }));
  const headers = headerComponents(table.map((t) => t.responses));
  const paths: Record<string, Json> = {};
  for (const { op, responses } of table) {
    paths[op.path] = {
      ...paths[op.path],
      [op.method]: operationObject(op, responses, headers.objectOf),
    };
  }
  const document = createDocument(
    {
      openapi: "3.1.1",
      info: INFO,
      // Both are public: every client may use them (x-internal: false).
      servers: [
        {
          url: "https://api.petstore.example.com/v1",
          description: "production",
          "x-internal": false,
        },
        {
          url: "https://staging.petstore.example.com/v1",
          description: "staging",
          "x-internal": false,
        },
      ],
      security: [{ bearerAuth: [] }],
      tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
      paths,
      components: {
        schemas: { Error: errorSchema() },
        headers: headers.components,
        securitySchemes: { bearerAuth: BEARER_AUTH },
      },
    },
    {
      override: ({ zodSchema, jsonSchema }) => {
        // A name's rules as a pattern every validator reads alike (see portableNamePattern).
        if (zodSchema === PetNameSchema) jsonSchema.pattern = portableNamePattern();
        // An open object (a response that may gain fields) says nothing of other fields,
        // as JSON Schema's default, rather than `additionalProperties: {}`.
        const others = jsonSchema.additionalProperties;
        if (others && typeof others === "object" && Object.keys(others).length === 0) {
          delete jsonSchema.additionalProperties;
        }
      },
    },
  ) as unknown as Json;
  for (const { op } of table) {
    const item = (document.paths as Record<string, Json>)[op.path] as Json;
    // A parameter's description on the parameter, where generators show it.
    for (const parameter of ((item[op.method] as Json).parameters ?? []) as Json[]) {
      const { description: text, ...schema } = parameter.schema as Json;
      if (text !== undefined) Object.assign(parameter, { description: text, schema });
    }
  }
  // HEAD right after every GET, once the GET is written.
  const written = document.paths as Record<string, Json>;
  for (const [path, item] of Object.entries(written)) {
    const { get, ...others } = item;
    const op = OPERATIONS.find((o) => o.path === path && o.method === "get");
    if (get && op) written[path] = { get, head: headObject(op, get as Json), ...others };
  }
  defaultsBesideRefs(document.components);
  const cors = corsHeaders(document);
  const expose = (document.components as { headers: Record<string, Json> }).headers[
    "Access-Control-Expose-Headers"
  ] as Json;
  expose.schema = { type: "string", const: cors.exposed.join(", ") };
  (document.info as Json).description = description(cors);
  document["x-error-codes"] = Object.fromEntries(
    Object.entries(ERROR_STATUS).map(([code, status]) => [
      code,
      { status, description: ERROR_DESCRIPTIONS[code as ErrorCode] },
    ]),
  );
  return document;
}

/**
 * A default beside a $ref (NewPet's status) moves into an allOf member: it still says what an
 * absent field means, and generators no longer take the field for one always there.
 */
function defaultsBesideRefs(node: unknown): void {
  if (node === null || typeof node !== "object") return;
  const schema = node as Json;
  if (schema.$ref !== undefined && schema.default !== undefined) {
    schema.allOf = [{ $ref: schema.$ref }, { default: schema.default }];
    delete schema.$ref;
    delete schema.default;
  }
  for (const value of Object.values(schema)) defaultsBesideRefs(value);
}

const INFO = {
  title: "Pet Store API",
  // The release's version: package.json is the one place it is written.
  version: packageJson.version,
  contact: {
    name: "Pet Store API team",
    url: "https://petstore.example.com/developers",
    email: "api@petstore.example.com",
  },
  license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
};

const BEARER_AUTH = {
  type: "http",
  scheme: "bearer",
  description: [
    'API keys start with `psk_`. Developers get theirs on the developer platform ("Get a key" on the reference page): an account with a passkey, then keys they create, rotate and revoke themselves; the operator issues keys with `npm run keys -- create`. Each key carries one or more scopes; each operation\'s `security` names the scope it needs, and a key without it gets 403 `insufficient_scope`. A key may also carry an expiry instant, from which it is refused with 401.',
    "",
    ...SCOPES.map((scope) => `- \`${scope}\`: ${SCOPE_DESCRIPTIONS[scope]}`),
  ].join("\n"),
} as const;

function description(cors: CorsHeaders): string {
  return [
    "JSON over HTTP for the animals of a pet store. Every operation needs `Authorization: Bearer <API_KEY>` with a key that carries the operation's scope (see the `bearerAuth` scheme). From TypeScript, use the client package `@petstore/client` (Node 20+, browsers, Workers): typed calls generated from this document, pages as async iterators, the Error object as an exception, creates retried under one `Idempotency-Key`, and a 304 as a value.",
    "",
    "AI agents: these operations are also tools of an MCP server (Model Context Protocol, Streamable HTTP) at `/mcp` on this API's origin, one per operation that returns JSON and named by its `operationId`; an MCP client sends the same key in `Authorization` and sees only the tools the key's scopes allow. The guide: docs/agents.md in the API's repository.",
    "",
    `Errors are always the \`Error\` object (\`code\`, \`message\`, \`status\`, optional \`details\`). Pages: keyset pagination, \`limit\` ${PAGE_SIZE.min}..${PAGE_SIZE.max} (default ${PAGE_SIZE.default}), next page in the \`Link\` header. Request bodies: at most ${MAX_BODY_BYTES} bytes, checked in the order size (413), media type and content coding (415: \`Content-Type: application/json\`, no \`Content-Encoding\` but \`identity\`), JSON syntax (400), fields (400).`,
    "",
    "Rate limits apply per API key and per account, whose keys share one budget (429 with `Retry-After`).",
    "",
    `Changing animals: \`PATCH /pets/{petId}\` (a JSON Merge Patch) and \`DELETE /pets/{petId}\`, each optionally under \`If-Match\` with the pet's \`ETag\` (412 when it changed meanwhile). Reads may come from the location's cache: after a change, other clients may read the pet as it was for up to ${CACHE_MAX_AGE_MS / 1000} seconds (plus the database replica's lag); the client that changed it reads its change at once by sending back the change's \`x-d1-bookmark\`. Responses may gain fields within /v1: ignore the ones you do not know.`,
    "",
    "Methods: every path of this document responds `OPTIONS` with 204 and `Allow` (the methods it has) without a key; any other method is 405 `method_not_allowed` with `Allow`, after the key check and the rate limit where the path needs a key. No operation responds with 405, so none lists it.",
    "",
    `CORS: browsers may call the API from the configured origins (\`*\` unless configured; no cookies are used). Every response to a request with an allowed \`Origin\` carries \`Access-Control-Allow-Origin\` and \`Access-Control-Expose-Headers: ${cors.exposed.join(", ")}\`. A preflight (\`OPTIONS\` with \`Access-Control-Request-Method\`) to any path of this document gets a 204 without a key, with \`Allow\`, \`Access-Control-Allow-Methods\` (the path's methods and the requested one, so a method the path lacks gets its 405 Error), \`Access-Control-Allow-Headers: ${cors.allowed.join(", ")}\` and \`Access-Control-Max-Age: ${PREFLIGHT_MAX_AGE}\`.`,
    ...OPERATIONS.flatMap(({ method, path, deprecation }) =>
      deprecation
        ? [
            "",
            `Deprecation: \`${method.toUpperCase()} ${path}\` is deprecated since ${deprecatedSince(deprecation)} (\`Deprecation: ${deprecationHeaders(deprecation).Deprecation}\`) and responds with 410 from ${deprecationHeaders(deprecation).Sunset} (\`Sunset\` header).`,
          ]
        : [],
    ),
  ].join("\n");
}
