// The MCP tools, derived at build time (npm run openapi writes tools.json) from the operation
// table: one per operation that can succeed with JSON, its schemas the zod schemas that validate
// it, its words from words.ts, its call the API call it names (docs/agents.md, docs/design.md).
import type { Tool as ListedTool } from "@modelcontextprotocol/server";
import * as z from "zod/mini";
import packageJson from "../../package.json" with { type: "json" };
import { IF_MATCH } from "../../src/http/etag.ts";
import type { Operation } from "../../src/operations/index.ts";
import { IDEMPOTENCY_KEY_HEADER } from "../../src/pets/idempotency.ts";
import { PetSchema } from "../../src/pets/schemas.ts";
import type { Tool } from "./calls.ts";
import { ARGUMENT_WORDS, type Facts, INSTRUCTIONS, TOOL_WORDS, type ToolWords } from "./words.ts";

type Json = Record<string, unknown>;

/**
 * What each method promises (RFC 9110: safe, idempotent), as MCP annotations. Nothing the API
 * does by POST removes or overwrites (it adds); PUT, PATCH and DELETE do. A PATCH here is a
 * JSON Merge Patch (RFC 7396), which sets fields: sent again, it changes nothing more.
 */
const ANNOTATIONS: Record<string, ListedTool["annotations"]> = {
  get: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  post: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  put: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  patch: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  delete: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
};

/** The arguments the tools add, sent as headers: their schemas and their headers. */
const HEADER_ARGUMENTS = {
  idempotencyKey: {
    header: IDEMPOTENCY_KEY_HEADER,
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
  },
  // An entity tag without its quotes (mcp/src/calls.ts adds them).
  etag: { header: IF_MATCH, schema: { type: "string", maxLength: 254, pattern: "^[!#-~]+$" } },
};

/** The properties a result adds to the API's body: the next page's cursor, the animal's tag. */
const NEXT_CURSOR = {
  type: "string",
  description: "Present while more follow: pass it as `cursor` to get the next page.",
};
const ETAG = {
  type: "string",
  description: "The animal's tag: pass it as `etag` to change or remove it only if unchanged.",
};

/** The schema as JSON Schema 2020-12, with every named part (`$defs`) written in place. */
function jsonSchema(schema: z.ZodMiniType, io: "input" | "output"): Json {
  const {
    $schema: _s,
    $defs: defs = {},
    ...root
  } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io,
  }) as Json & { $defs?: Record<string, Json> };
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (node === null || typeof node !== "object") return node;
    const { $ref, ...rest } = node as Json;
    const target = typeof $ref === "string" ? defs[$ref.replace("#/$defs/", "")] : undefined;
    const walked = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inline(v)]));
    return target ? { ...(inline(target) as Json), ...walked } : walked;
  };
  return inline(root) as Json;
}

/** `schema` without its prose (the document's, in HTTP terms): the tool's words say it. */
function withoutProse(node: unknown, names = false): unknown {
  if (Array.isArray(node)) return node.map((item) => withoutProse(item));
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node)
      // In `properties` the keys are names, not keywords.
      .filter(([key]) => names || (key !== "description" && key !== "examples"))
      .map(([key, value]) => [key, withoutProse(value, !names && key === "properties")]),
  );
}

const properties = (schema: Json) => (schema.properties ?? {}) as Record<string, Json>;
const required = (schema: Json) => (schema.required ?? []) as string[];
const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

function toolOf(op: Operation, words: ToolWords | undefined, facts: Facts): Tool {
  const name = op.operationId;
  if (!words) throw new Error(`${name}: a tool needs its words for agents (mcp/src/words.ts)`);
  const success = op.success;
  if (!success) throw new Error(`${name}: a tool must be able to succeed`);
  const [params, query, body] = [op.params, op.query, op.body].map((s) =>
    s ? jsonSchema(s, "input") : { properties: {} },
  ) as [Json, Json, Json];
  const added = {
    // The operations that read an Idempotency-Key (createPet), not every POST.
    ...(op.headers?.some((h) => h.name === IDEMPOTENCY_KEY_HEADER)
      ? { idempotencyKey: HEADER_ARGUMENTS.idempotencyKey }
      : {}),
    ...(op.ifMatch ? { etag: HEADER_ARGUMENTS.etag } : {}),
  };
  const names = [params, query, body].flatMap((s) => Object.keys(properties(s)));
  if (
    new Set([...names, ...Object.keys(added)]).size !==
    names.length + Object.keys(added).length
  ) {
    throw new Error(`${name}: two of its inputs share a name`);
  }
  const inputs: Record<string, Json> = {
    ...properties(params),
    ...properties(query),
    ...properties(body),
    ...Object.fromEntries(Object.entries(added).map(([arg, { schema }]) => [arg, schema])),
  };
  for (const [arg, schema] of Object.entries(inputs)) {
    const said = words.arguments?.[arg] ?? ARGUMENT_WORDS[arg];
    if (!said) throw new Error(`${name}: its argument ${arg} needs words for agents`);
    inputs[arg] = { ...schema, description: said };
  }

  const response =
    "schema" in success ? (withoutProse(jsonSchema(success.schema, "output")) as Json) : undefined;
  const pages = "cursor" in properties(query);
  const items = response !== undefined && response.type !== "object";
  const etag = "schema" in success && success.schema === PetSchema;
  const outputSchema = items
    ? {
        type: "object",
        properties: { items: response, ...(pages ? { nextCursor: NEXT_CURSOR } : {}) },
        required: ["items"],
        additionalProperties: false,
      }
    : response && etag
      ? { ...response, properties: { ...properties(response), etag: ETAG } }
      : response;

  const { deprecation } = op;
  if (deprecation && !words.replacement) {
    throw new Error(`${name}: a deprecated tool says what replaces it, or that nothing does`);
  }
  const description = [
    typeof words.description === "string" ? words.description : words.description(facts),
    op.stability === "experimental" ? "Experimental: it may change." : "",
    deprecation
      ? `Deprecated since ${day(deprecation.since)}, and removed on ${day(deprecation.sunset)}. ${words.replacement}`
      : "",
  ]
    .filter(Boolean)
    .join(" ");
  return {
    listed: {
      name,
      title: words.title,
      description,
      inputSchema: {
        type: "object",
        properties: inputs,
        required: [...required(params), ...required(query), ...required(body)],
      } as ListedTool["inputSchema"],
      ...(outputSchema ? { outputSchema: outputSchema as ListedTool["outputSchema"] } : {}),
      annotations: { title: words.title, ...ANNOTATIONS[op.method] },
      ...(deprecation ? { _meta: { deprecated: true } } : {}),
    },
    ...(op.scope ? { scope: op.scope } : {}),
    ...(deprecation ? { until: deprecation.sunset } : {}),
    request: {
      method: op.method.toUpperCase(),
      path: op.path,
      pathNames: Object.keys(properties(params)),
      queryNames: Object.keys(properties(query)),
      headers: Object.fromEntries(Object.entries(added).map(([arg, { header }]) => [arg, header])),
      body: op.body !== undefined,
    },
    result: {
      items,
      pages,
      etag,
      ...(success.status === 204 ? { empty: success.description } : {}),
    },
  };
}

/**
 * tools.json: the server's version and instructions, and a tool per operation that says it is
 * one (`mcp.tool`), for `document`, the OpenAPI document getOpenApiDocument returns.
 */
export function toolsFile(
  operations: readonly Operation[],
  document: unknown,
  words: Record<string, ToolWords> = TOOL_WORDS,
) {
  const facts = { documentBytes: new TextEncoder().encode(JSON.stringify(document)).byteLength };
  const tools = operations
    .filter((op) => op.mcp.tool)
    .map((op) => toolOf(op, words[op.operationId], facts));
  return { version: packageJson.version, instructions: INSTRUCTIONS, tools };
}
