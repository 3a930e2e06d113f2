// The tools as the MCP worker serves them: read from tools.json, which `npm run openapi` derives
// from the operation table at build time (mcp/src/tools.ts), so the worker bundles no schema
// library of ours and no API code; and each call as the API call it names.
import type { CallToolResult, Tool as ListedTool } from "@modelcontextprotocol/server";
import generated from "./tools.json" with { type: "json" };

/** One tool: what tools/list shows, who may call it, and the API call it makes. */
export interface Tool {
  listed: ListedTool;
  /** The scope a key needs to see and call it; none for a public operation. */
  scope?: string;
  /** From this instant on (seconds), the tool is gone: its operation's sunset. */
  until?: number;
  /** The API request: its method and path, which arguments go where; the rest is the JSON body. */
  request: {
    method: string;
    path: string;
    pathNames: string[];
    queryNames: string[];
    /** Arguments sent as a header, by argument (`etag` as `If-Match`, quoted). */
    headers: Record<string, string>;
    body: boolean;
  };
  /** How the API's success becomes the result. */
  result: {
    /** Its body is an array, given as `{items}`. */
    items: boolean;
    /** A page: the next page's `cursor` (from `Link`) is given as `nextCursor`. */
    pages: boolean;
    /** One animal: its tag (`ETag`, unquoted) is given as `etag`. */
    etag: boolean;
    /** The text of a success without content (204). */
    empty?: string;
  };
}

/** The server's version and instructions, and the tools, as `npm run openapi` wrote them. */
export const TOOLS = generated as unknown as {
  version: string;
  instructions: string;
  tools: Tool[];
};

/** The tools at `now` (seconds): a deprecated one is gone from its sunset on. */
export const toolsAt = (now: number): Tool[] =>
  TOOLS.tools.filter((tool) => tool.until === undefined || now < tool.until);

/** Whether a key with `scopes` may see and call `tool`. */
export const allows = (scopes: readonly string[], tool: Tool) =>
  tool.scope === undefined || scopes.includes(tool.scope);

/** A value as the API reads it from a path, a query or a header: a string as it is, else JSON. */
const wire = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/** The API request a call of `tool` with `args` makes, as `caller` (its key and address). */
export function apiRequest(tool: Tool, args: Record<string, unknown>, caller: Request): Request {
  const { method, path, pathNames, queryNames, headers: sent, body } = tool.request;
  const url = new URL(
    `/v1${path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(wire(args[name])))}`,
    caller.url,
  );
  for (const name of queryNames) {
    if (args[name] !== undefined) url.searchParams.set(name, wire(args[name]));
  }
  const headers = new Headers();
  // The caller's key and address; and its Ray ID, so the API logs the tool's call under the id
  // of the /mcp request that made it.
  for (const name of ["Authorization", "CF-Connecting-IP", "CF-Ray"]) {
    const value = caller.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  for (const [name, header] of Object.entries(sent)) {
    if (args[name] === undefined) continue;
    const value = wire(args[name]);
    // An entity tag is quoted on the wire; the tool gives and takes it bare (either is read).
    headers.set(header, header === "If-Match" ? `"${value.replace(/^"(.*)"$/, "$1")}"` : value);
  }
  const taken = new Set([...pathNames, ...queryNames, ...Object.keys(sent)]);
  const json = Object.fromEntries(Object.entries(args).filter(([name]) => !taken.has(name)));
  if (body) headers.set("Content-Type", "application/json");
  return new Request(url, { method, headers, body: body ? JSON.stringify(json) : null });
}

/**
 * An API refusal as the model reads it: a header the tool fills from an argument is named as
 * that argument (`etag`, not `If-Match`), in the Error's message and `details`. The refusal is
 * the API's Error object as JSON.stringify wrote it (quotes in its strings escaped).
 */
export const refusalText = (tool: Tool, text: string) =>
  Object.entries(tool.request.headers).reduce(
    (refusal, [argument, header]) =>
      refusal
        .replaceAll(`Header \\"${header}\\"`, `Argument \\"${argument}\\"`)
        .replaceAll(`\\"${header}\\"`, `\\"${argument}\\"`)
        .replaceAll(`"field":"${header}"`, `"field":"${argument}"`),
    text,
  );

/** The `cursor` of the `Link: <...>; rel="next"` of a page, if there is a next page. */
function nextCursor(link: string | null, base: string): string | undefined {
  const next = link && /<([^>]*)>\s*;\s*rel="next"/.exec(link)?.[1];
  return next ? (new URL(next, base).searchParams.get("cursor") ?? undefined) : undefined;
}

/**
 * A successful API response as the tool's result: its JSON as structured content and as
 * text (with the page's `nextCursor` or the animal's `etag`); a success without content
 * (204) as the tool's words for it.
 */
export async function callToolResult(
  tool: Tool,
  response: Response,
  base: string,
): Promise<CallToolResult> {
  const { items, pages, etag, empty } = tool.result;
  if (response.status === 204) return { content: [{ type: "text", text: empty ?? "Done." }] };
  const body = (await response.json()) as Record<string, unknown>;
  const cursor = pages ? nextCursor(response.headers.get("Link"), base) : undefined;
  // The API's tag of one animal is always strong: its quotes dropped.
  const tag = etag ? response.headers.get("ETag")?.slice(1, -1) : undefined;
  const structured = {
    ...(items ? { items: body } : body),
    ...(cursor ? { nextCursor: cursor } : {}),
    ...(tag ? { etag: tag } : {}),
  };
  return {
    content: [{ type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured,
  };
}
