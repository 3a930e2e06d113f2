// Builds the OpenAPI 3.1 document: the operation table (src/operations.ts) merged with
// what each stage of each operation declares (src/openapi/declarations.ts: the
// parameters, headers and errors that the key check, the validators, the session, the
// conditional read, the handler and the others add), and the schemas that validate
// requests (src/pets/schemas.ts, src/errors.ts). Run at build time by scripts/openapi.ts;
// the worker serves the JSON it writes from its static assets, so no isolate parses or
// generates it. A test rebuilds it and compares.
import * as z from "zod/mini";
import packageJson from "../../package.json" with { type: "json" };
import { MAX_BODY_BYTES, PAGE_SIZE } from "../config.ts";
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from "../errors.ts";
import { PREFLIGHT_MAX_AGE } from "../http/cors.ts";
import { deprecatedSince, deprecationHeaders } from "../http/deprecation.ts";
import type { Declaration, HeaderSpec, HeaderUse } from "../http/stage.ts";
import { OPERATIONS, type Operation, TAGS } from "../operations.ts";
import { PetNameSchema, portableNamePattern } from "../pets/schemas.ts";
import { APP_DECLARATIONS, CORS, declarationsOf } from "./declarations.ts";

type Json = Record<string, unknown>;

const REF = (id: string) => `#/components/schemas/${id}`;

/** What every schema of the document is written with. */
const JSON_SCHEMA_OPTIONS = {
  target: "draft-2020-12",
  // A name's rules as a pattern that every validator reads alike (see portableNamePattern).
  override: ({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: Json }) => {
    if (zodSchema === PetNameSchema) jsonSchema.pattern = portableNamePattern();
    // A default beside a $ref (NewPet's status) moves into an allOf member: it still says
    // what an absent field means, and generators no longer take the field for one that
    // is always there (openapi-typescript makes a field with a `default` required).
    if (jsonSchema.$ref !== undefined && jsonSchema.default !== undefined) {
      const { $ref, default: value } = jsonSchema;
      delete jsonSchema.$ref;
      delete jsonSchema.default;
      jsonSchema.allOf = [{ $ref }, { default: value }];
    }
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

/** One answer of an operation: the stages that can give it, and what they say of it. */
interface Answer {
  status: number;
  error: boolean;
  /** Indices, in the operation's stages, of the stages that can give it. */
  by: number[];
  /** Its error codes, in the order the stages declare them. */
  codes: ErrorCode[];
  /** The headers each of those stages gives it (one list per stage and code). */
  carries: HeaderUse[][];
  description: string;
}

/** A header of the document: its one description, and every use the stages make of it. */
interface HeaderEntry {
  spec: HeaderSpec;
  /** Use notes, each with the operations that use it. */
  notes: Map<string, string[]>;
  values: string[];
  /** On every answer that lists it. */
  required: boolean;
}

/** The answers of an operation whose stages declare `declarations` (the handler last). */
function answersOf(op: Operation, declarations: Declaration[]): Answer[] {
  const answers = new Map<number, Answer>();
  const answer = (status: number, description = "") => {
    const found = answers.get(status);
    if (found) return found;
    const created: Answer = {
      status,
      error: status >= 400,
      by: [],
      codes: [],
      carries: [],
      description,
    };
    answers.set(status, created);
    return created;
  };
  const last = declarations.length - 1;
  declarations.forEach((d, i) => {
    for (const e of d.errors ?? []) {
      const a = answer(ERROR_STATUS[e.code]);
      for (let j = i; j <= (e.anywhere ? last : i); j++) a.by.push(j);
      if (!a.codes.includes(e.code)) a.codes.push(e.code);
      a.carries.push(e.headers ?? []);
    }
    if (d.notModified) {
      const a = answer(304, d.notModified.description);
      a.by.push(i);
      a.carries.push(d.notModified.headers);
    }
  });
  if (op.success) {
    const a = answer(op.success.status, op.success.description);
    a.by.push(last);
    a.carries.push([]);
  }
  return [...answers.values()].sort((a, b) => a.status - b.status);
}

/**
 * The headers of one answer, each with whether the answer always carries it: what every
 * stage around the stages that give it adds (on some answers when it surrounds only some
 * of them), and what those stages give it themselves (always when all of them do).
 */
function headersOf(a: Answer, declarations: Declaration[]): Map<string, HeaderUse[]> {
  const first = Math.min(...a.by);
  const lastBy = Math.max(...a.by);
  const headers = new Map<string, HeaderUse[]>();
  const add = (use: HeaderUse, always: boolean) =>
    headers.set(use.header.name, [...(headers.get(use.header.name) ?? []), { ...use, always }]);
  declarations.forEach((d, j) => {
    if (j > lastBy) return;
    for (const use of [...(d.wraps ?? []), ...(a.error ? [] : (d.answers ?? []))]) {
      add(use, j <= first && use.always === true);
    }
  });
  for (const use of a.carries.flat()) {
    const everyStage = a.carries.every((list) =>
      list.some((u) => u.header.name === use.header.name && u.always),
    );
    add(use, everyStage);
  }
  return headers;
}

/** `a`, `a and b`, `a, b and c`. */
function listed(names: string[]): string {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** A header component from its entry: the description with each use's note, its values. */
function headerComponent(entry: HeaderEntry): Json {
  const notes = [...entry.notes].map(([note, ops]) => note.replace("{operations}", listed(ops)));
  const description = [entry.spec.description, ...notes].filter(Boolean).join(" ");
  const { values } = entry;
  return {
    ...(description ? { description } : {}),
    ...(entry.required ? { required: true } : {}),
    schema: {
      ...entry.spec.schema,
      ...(values.length === 1 ? { const: values[0] } : {}),
      ...(values.length > 1 ? { enum: values } : {}),
    },
  };
}

/** The path and query parameters a validator checks, from its zod schema. */
function schemaParameters(where: "query" | "path", schema: z.ZodMiniType): Json[] {
  const json = inline(schema) as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: where,
      required: where === "path" || (json.required ?? []).includes(name),
      description,
      schema: propertySchema,
    };
  });
}

/** An operation: the table's fields, its stages' declarations, its answers. */
interface Described {
  op: Operation;
  declarations: Declaration[];
  answers: Array<{ answer: Answer; headers: Map<string, HeaderUse[]> }>;
}

function describeOperation(op: Operation, entries: Map<string, HeaderEntry>): Described {
  const declarations = [...APP_DECLARATIONS, ...declarationsOf(op)];
  const answers = answersOf(op, declarations).map((answer) => {
    const headers = headersOf(answer, declarations);
    for (const [name, uses] of headers) {
      const entry = entries.get(name) ?? {
        spec: (uses[0] as HeaderUse).header,
        notes: new Map<string, string[]>(),
        values: [],
        required: true,
      };
      entries.set(name, entry);
      entry.required &&= uses.some((use) => use.always);
      for (const use of uses) {
        if (use.value !== undefined && !entry.values.includes(use.value)) {
          entry.values.push(use.value);
        }
        if (use.note === undefined) continue;
        const ops = entry.notes.get(use.note) ?? [];
        if (!ops.includes(op.operationId)) ops.push(op.operationId);
        entry.notes.set(use.note, ops);
      }
    }
    return { answer, headers };
  });
  return { op, declarations, answers };
}

/**
 * The headers of one response: a $ref to the component, or, for a header that this
 * response always carries but the component marks conditional, the component inlined
 * with `required: true` (a Reference Object cannot carry `required`).
 */
function headerObjects(headers: Map<string, HeaderUse[]>, components: Record<string, Json>): Json {
  return Object.fromEntries(
    [...headers].map(([name, uses]) => [
      name,
      uses.some((use) => use.always) && !components[name]?.required
        ? { ...components[name], required: true }
        : { $ref: `#/components/headers/${name}` },
    ]),
  );
}

function responseObject(
  { answer, headers }: Described["answers"][number],
  op: Operation,
  components: Record<string, Json>,
): Json {
  const response: Json = {
    description: answer.error
      ? answer.codes.map((c) => `\`${c}\`: ${ERROR_DESCRIPTIONS[c]}`).join(" ")
      : answer.description,
    headers: headerObjects(headers, components),
  };
  if (answer.error) {
    const codes = {
      code: { type: "string", enum: answer.codes },
      status: { type: "integer", const: answer.status },
    };
    response.content = {
      "application/json": { schema: { allOf: [{ $ref: REF("Error") }, { properties: codes }] } },
    };
  } else if (answer.status !== 304 && op.success) {
    response.content = {
      [op.success.mediaType ?? "application/json"]: { schema: inline(op.success.schema) },
    };
  }
  return response;
}

function operationObject(
  { op, declarations, answers }: Described,
  components: Record<string, Json>,
): Json {
  const fields = Object.assign({}, ...declarations.map((d) => d.operation ?? {})) as Json;
  const object: Json = {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    security: fields.security ?? [],
    ...(fields.deprecated ? { deprecated: true } : {}),
    ...(op.stability ? { "x-stability": op.stability } : {}),
  };
  const validated = declarations.flatMap((d) => (d.validates ? [d.validates] : []));
  const parameters = [
    ...validated.flatMap((v) => (v.in === "body" ? [] : schemaParameters(v.in, v.schema))),
    // Headers in the order of their names.
    ...declarations
      .flatMap((d) => d.parameters ?? [])
      .sort((a, b) => String(a.name).toLowerCase().localeCompare(String(b.name).toLowerCase())),
  ];
  if (parameters.length > 0) object.parameters = parameters;
  const body = validated.find((v) => v.in === "body");
  if (body) {
    object.requestBody = {
      required: true,
      description: declarations.find((d) => d.body)?.body,
      content: { "application/json": { schema: inline(body.schema) } },
    };
  }
  object.responses = Object.fromEntries(
    answers.map((a) => [String(a.answer.status), responseObject(a, op, components)]),
  );
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
  const entries = new Map<string, HeaderEntry>();
  const described = OPERATIONS.map((op) => describeOperation(op, entries));
  const components = Object.fromEntries(
    [...entries].map(([name, entry]) => [name, headerComponent(entry)]),
  );
  const paths: Record<string, Json> = {};
  for (const operation of described) {
    const { op } = operation;
    const object = operationObject(operation, components);
    paths[op.path] = {
      ...paths[op.path],
      [op.method]: object,
      ...(op.method === "get" ? { head: headObject(op, object) } : {}),
    };
  }
  const securitySchemes = Object.assign(
    {},
    ...described.flatMap((d) => d.declarations.map((decl) => decl.securitySchemes ?? {})),
  ) as Record<string, Json>;
  return {
    openapi: "3.1.1",
    info: {
      title: "Pet Store API",
      // The release's version: package.json is the one place it is written.
      version: packageJson.version,
      description: [
        "JSON over HTTP for the animals of a pet store. Every operation needs `Authorization: Bearer <API_KEY>` with a key that carries the operation's scope (see the `bearerAuth` scheme). From TypeScript, use the client package `@petstore/client` (Node 20+, browsers, Workers): typed calls generated from this document, pages as async iterators, the Error object as an exception, creates retried under one `Idempotency-Key`, and a 304 as a value.",
        "",
        "AI agents: these operations are also tools of an MCP server (Model Context Protocol, Streamable HTTP) at `/mcp` on this API's origin, one per operation that answers JSON and named by its `operationId`; an MCP client sends the same key in `Authorization` and sees only the tools the key's scopes allow. The guide: docs/agents.md in the API's repository.",
        "",
        `Errors are always the \`Error\` object (\`code\`, \`message\`, \`status\`, optional \`details\`). Pages: keyset pagination, \`limit\` ${PAGE_SIZE.min}..${PAGE_SIZE.max} (default ${PAGE_SIZE.default}), next page in the \`Link\` header. Request bodies: at most ${MAX_BODY_BYTES} bytes, checked in the order size (413), media type and content coding (415: \`Content-Type: application/json\`, no \`Content-Encoding\` but \`identity\`), JSON syntax (400), fields (400).`,
        "",
        `Rate limits apply per API key (429 with \`Retry-After\`).`,
        "",
        "Methods: every path of this document answers `OPTIONS` with 204 and `Allow` (the methods it has) without a key; any other method is 405 `method_not_allowed` with `Allow`, after the key check and the rate limit where the path needs a key. No operation answers 405, so none lists it.",
        "",
        `CORS: browsers may call the API from the configured origins (\`*\` unless configured; no cookies are used). Every response to a request with an allowed \`Origin\` carries \`Access-Control-Allow-Origin\` and \`Access-Control-Expose-Headers: ${CORS.exposed.join(", ")}\`. A preflight (\`OPTIONS\` with \`Access-Control-Request-Method\`) to any path of this document is answered 204 without a key, with \`Allow\`, \`Access-Control-Allow-Methods\` (the path's methods and the requested one, so a method the path lacks gets its 405 Error), \`Access-Control-Allow-Headers: ${CORS.allowed.join(", ")}\` and \`Access-Control-Max-Age: ${PREFLIGHT_MAX_AGE}\`.`,
        ...OPERATIONS.flatMap(({ method, path, deprecation }) =>
          deprecation
            ? [
                "",
                `Deprecation: \`${method.toUpperCase()} ${path}\` is deprecated since ${deprecatedSince(deprecation)} (\`Deprecation: ${deprecationHeaders(deprecation).Deprecation}\`) and answers 410 from ${deprecationHeaders(deprecation).Sunset} (\`Sunset\` header).`,
              ]
            : [],
        ),
      ].join("\n"),
      contact: {
        name: "Pet Store API team",
        url: "https://petstore.example.com/developers",
        email: "api@petstore.example.com",
      },
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [
      { url: "https://api.petstore.example.com/v1", description: "production" },
      { url: "https://staging.petstore.example.com/v1", description: "staging" },
    ],
    security: Object.keys(securitySchemes).map((name) => ({ [name]: [] })),
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: componentSchemas(),
      headers: components,
      securitySchemes,
    },
    "x-error-codes": Object.fromEntries(
      Object.entries(ERROR_STATUS).map(([code, status]) => [
        code,
        { status, description: ERROR_DESCRIPTIONS[code as ErrorCode] },
      ]),
    ),
  };
}
