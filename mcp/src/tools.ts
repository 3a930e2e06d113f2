// The MCP tools, derived from the API's operation table: one per operation that can
// succeed with JSON, named by its operationId, its schemas the zod schemas that validate
// it, its call the API call it names (docs/agents.md; the rules in docs/design.md).
import type { CallToolResult, Tool as ListedTool } from "@modelcontextprotocol/server";
import * as z from "zod/mini";
import { OPERATIONS, type Operation } from "../../src/operations/index.ts";
import { IDEMPOTENCY_KEY_HEADER } from "../../src/pets/idempotency.ts";

type Json = Record<string, unknown>;

export interface Tool {
  listed: ListedTool;
  /** The scope a key needs to see and call it; none for a public operation. */
  scope: string | undefined;
  operation: Operation;
  /** From its sunset on (seconds), the tool is gone. */
  until: number | undefined;
  /** Its answer is not an object: it is given as `{items}`. */
  wrapped: boolean;
  /** A page: the next page's `cursor` (from `Link`) is given as `nextCursor`. */
  pages: boolean;
  /** Whether `idempotencyKey` is sent as the `Idempotency-Key` header. */
  idempotencyKey: boolean;
  /** Which arguments go into the path and the query; the rest form the JSON body. */
  pathNames: string[];
  queryNames: string[];
}

/**
 * What each method promises (RFC 9110: safe, idempotent), as MCP annotations. Nothing the
 * API does by POST removes or overwrites (it adds); PUT, PATCH and DELETE would.
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
  patch: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  delete: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
};

const IDEMPOTENCY_KEY: Json = {
  type: "string",
  minLength: 1,
  maxLength: 255,
  pattern: "^[\\x20-\\x7E]+$",
  description:
    "Makes this call safe to retry: choose a new key (1 to 255 printable ASCII characters, e.g. a UUID) for each thing you mean to create, and send the same key when you retry it. The same key with the same arguments within 24 hours returns the first result instead of creating again; with other arguments the call fails. Keys are scoped to your API key.",
};

const CURSOR_DESCRIPTION =
  "The `nextCursor` of the previous page, to get the next one; omit it for the first page. Bound to the `status` filter it was issued for.";

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

const properties = (schema: Json) => (schema.properties ?? {}) as Record<string, Json>;
const required = (schema: Json) => (schema.required ?? []) as string[];

function toolOf(op: Operation, operations: readonly Operation[]): Tool {
  const [params, query, body] = [op.params, op.query, op.body].map((s) =>
    s ? jsonSchema(s, "input") : { properties: {} },
  ) as [Json, Json, Json];
  const pages = "cursor" in properties(query);
  // The operations that read an Idempotency-Key (createPet), not every POST.
  const idempotencyKey = op.headers?.some((h) => h.name === IDEMPOTENCY_KEY_HEADER) ?? false;
  const inputProperties: Record<string, Json> = {
    ...properties(params),
    ...properties(query),
    ...properties(body),
    ...(pages ? { cursor: { ...properties(query).cursor, description: CURSOR_DESCRIPTION } } : {}),
    ...(idempotencyKey ? { idempotencyKey: IDEMPOTENCY_KEY } : {}),
  };
  const names = [params, query, body].flatMap((s) => Object.keys(properties(s)));
  if (
    new Set(names).size !== names.length ||
    (idempotencyKey && names.includes("idempotencyKey"))
  ) {
    throw new Error(`${op.operationId}: two of its inputs share a name`);
  }
  const success = op.success;
  if (!success) throw new Error(`${op.operationId}: a tool must be able to succeed`);
  const answer = "schema" in success ? jsonSchema(success.schema, "output") : undefined;
  const outputSchema =
    answer === undefined || answer.type === "object"
      ? answer
      : {
          type: "object",
          properties: { items: answer, ...(pages ? { nextCursor: { type: "string" } } : {}) },
          required: ["items"],
          additionalProperties: false,
        };
  const successor = op.deprecation
    ? operations.find((o) => `/v1${o.path}` === op.deprecation?.successor && o.method === "get")
    : undefined;
  const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
  const description = [
    `${op.summary}.`,
    op.stability === "experimental" ? "Experimental: it may change." : "",
    pages
      ? "Answers one page as `items`; when more follow, pass its `nextCursor` as `cursor` to get the next page."
      : "",
    idempotencyKey ? "Send `idempotencyKey` so that retrying this call cannot create twice." : "",
    op.deprecation
      ? `Deprecated since ${day(op.deprecation.since)}${successor ? `: use \`${successor.operationId}\` instead` : ""}. This tool is removed on ${day(op.deprecation.sunset)}.`
      : "",
    op.scope ? `Needs the \`${op.scope}\` scope.` : "",
  ]
    .filter(Boolean)
    .join(" ");
  return {
    listed: {
      name: op.operationId,
      title: op.summary,
      description,
      inputSchema: {
        type: "object",
        properties: inputProperties,
        required: [...required(params), ...required(query), ...required(body)],
      } as ListedTool["inputSchema"],
      ...(outputSchema ? { outputSchema: outputSchema as ListedTool["outputSchema"] } : {}),
      annotations: { title: op.summary, ...ANNOTATIONS[op.method] },
      ...(op.deprecation ? { _meta: { deprecated: true } } : {}),
    },
    scope: op.scope,
    operation: op,
    until: op.deprecation?.sunset,
    wrapped: answer !== undefined && answer.type !== "object",
    pages,
    idempotencyKey,
    pathNames: Object.keys(properties(params)),
    queryNames: Object.keys(properties(query)),
  };
}

/** The tools of `operations`: one per operation that says it is one (`mcp.tool`). */
export const toolsFrom = (operations: readonly Operation[]) =>
  operations.filter((op) => op.mcp.tool).map((op) => toolOf(op, operations));

let derived: Tool[] | undefined;
/** The tools at `now` (seconds): a deprecated one is gone from its sunset on. */
export function toolsAt(now: number): Tool[] {
  derived ??= toolsFrom(OPERATIONS);
  return derived.filter((tool) => tool.until === undefined || now < tool.until);
}

/** Whether a key with `scopes` may see and call `tool`. */
export const allows = (scopes: readonly string[], tool: Tool) =>
  tool.scope === undefined || scopes.includes(tool.scope);

/** A value as the API reads it from a path or a query: a string as it is, the rest as JSON. */
const wire = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/** The API request a call of `tool` with `args` makes, as `caller` (its key and address). */
export function apiRequest(tool: Tool, args: Record<string, unknown>, caller: Request): Request {
  const op = tool.operation;
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(wire(args[name])),
  );
  const url = new URL(`/v1${path}`, caller.url);
  for (const name of tool.queryNames) {
    if (args[name] !== undefined) url.searchParams.set(name, wire(args[name]));
  }
  const headers = new Headers({ Accept: "application/json" });
  for (const name of ["Authorization", "CF-Connecting-IP"]) {
    const value = caller.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  let body: string | undefined;
  if (tool.idempotencyKey && args.idempotencyKey !== undefined) {
    headers.set("Idempotency-Key", wire(args.idempotencyKey));
  }
  if (op.body) {
    const taken = new Set([...tool.pathNames, ...tool.queryNames, "idempotencyKey"]);
    body = JSON.stringify(Object.fromEntries(Object.entries(args).filter(([k]) => !taken.has(k))));
    headers.set("Content-Type", "application/json");
  }
  return new Request(url, { method: op.method.toUpperCase(), headers, body: body ?? null });
}

/** The `cursor` of the `Link: <...>; rel="next"` of a page, if there is a next page. */
function nextCursor(link: string | null, base: string): string | undefined {
  const next = link && /<([^>]*)>\s*;\s*rel="next"/.exec(link)?.[1];
  return next ? (new URL(next, base).searchParams.get("cursor") ?? undefined) : undefined;
}

/**
 * A successful API response as the tool's result: its JSON as structured content and as
 * text; a success without content (204) as the operation's own words for it.
 */
export async function toolResult(
  tool: Tool,
  answer: Response,
  base: string,
): Promise<CallToolResult> {
  if (answer.status === 204) {
    return { content: [{ type: "text", text: tool.operation.success?.description ?? "Done." }] };
  }
  const body = (await answer.json()) as unknown;
  const cursor = tool.pages ? nextCursor(answer.headers.get("Link"), base) : undefined;
  const structured = (
    tool.wrapped ? { items: body, ...(cursor ? { nextCursor: cursor } : {}) } : body
  ) as Record<string, unknown>;
  return {
    content: [{ type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured,
  };
}
