// One JSON-RPC exchange at /mcp with the official SDK's low-level Server: the key's tools listed,
// a tool call made as its API call, batches as 2025-03-26 has them, the 2025 revisions through
// the SDK's stateless transport and 2026-07-28 through its handler (docs/design.md).
import {
  type CallToolResult,
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  readRequestBody,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { type ApiAccess, KEY_SCOPES_HEADER } from "../../src/mcp-contract.ts";
import { allows, apiRequest, callToolResult, refusalText, TOOLS, type Tool } from "./calls.ts";
import { Allow, challenge, rpcError } from "./request.ts";

/** The largest MCP message read (a tool call's JSON body is at most 16 KiB at the API). */
const MAX_MESSAGE_BYTES = 64 * 1024;

/** The one protocol revision with JSON-RPC batches (2025-06-18 removed them). */
const BATCH_VERSION = "2025-03-26";

/**
 * The request as the 2025 revisions' transport takes it, which wants both their media types
 * named in `Accept`; every response here is JSON, so any field that admits JSON will do
 * (any type, any application type, or no field at all). Undefined when it excludes JSON (406).
 */
function acceptingJson(request: Request): Request | undefined {
  const accept = request.headers.get("Accept");
  if (accept?.includes("application/json") && accept.includes("text/event-stream")) return request;
  const ranges = accept?.split(",") ?? ["application/json"];
  if (!ranges.some((range) => /^\s*(\*|application)\/(\*|json)\s*(;|$)/i.test(range))) return;
  const headers = new Headers(request.headers);
  headers.set("Accept", "application/json, text/event-stream");
  // Its body was read: the transport is handed the message.
  return new Request(request.url, { method: request.method, headers });
}

/**
 * The message of a POST, read once (the SDK is handed it parsed, never the body), when it is
 * JSON within the bound.
 */
async function messageOf(request: Request): Promise<unknown> {
  const read = await readRequestBody(request, MAX_MESSAGE_BYTES);
  if (read.tooLarge) throw rpcError(413, `An MCP message is at most ${MAX_MESSAGE_BYTES} bytes.`);
  try {
    return JSON.parse(read.text) as unknown;
  } catch {
    return undefined;
  }
}

/** The tool a message calls, when it is one well-formed call of a tool there is now. */
function toolCalled(message: unknown, tools: Tool[]): Tool | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return;
  const { method, params } = message as { method?: unknown; params?: Record<string, unknown> };
  if (method !== "tools/call" || typeof params !== "object" || params === null) return;
  const args = params.arguments;
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
    return;
  }
  return tools.find((tool) => tool.listed.name === params.name);
}

/**
 * One request to /mcp with a key. A call of a tool is authenticated by the API call it makes
 * (its 401 or 403 becomes this response); any other message first passes /v1's key check
 * and rate limit, whose scopes choose the tools listed.
 */
export async function exchange(
  request: Request,
  api: ApiAccess,
  metadataUrl: string,
  tools: Tool[],
): Promise<Response> {
  const message = request.method === "POST" ? await messageOf(request) : undefined;
  let scopes: string[] = [];
  /** The key check and rate limit of /v1; the refusal to respond with instead, if any. */
  const authenticate = async () => {
    const verdict = await api.authenticate();
    if (verdict.status !== 204) return challenge(verdict, metadataUrl, tools);
    scopes = verdict.headers.get(KEY_SCOPES_HEADER)?.split(" ").filter(Boolean) ?? [];
  };
  const deferred = toolCalled(message, tools) !== undefined;
  if (!deferred) {
    const refused = await authenticate();
    if (refused) return refused;
  }
  if (request.method !== "POST") {
    return rpcError(405, "Method not allowed: this server is stateless (POST only).", { Allow });
  }
  // As the SDK refuses it, once the key is known good.
  if (message === undefined) return rpcError(400, "Parse error: Invalid JSON", {}, -32700);
  const batch = Array.isArray(message);
  const version = request.headers.get("MCP-Protocol-Version");
  // JSON-RPC batches are 2025-03-26's alone (a request without the header is 2025-03-26).
  if (batch && version !== null && version !== BATCH_VERSION) {
    const refused = `Invalid Request: protocol version ${version} has no JSON-RPC batches; send one message per request.`;
    return rpcError(400, refused, {}, -32600);
  }

  let refusal: Response | undefined;
  let called = false;
  const call = async (tool: Tool, args: Record<string, unknown>): Promise<CallToolResult> => {
    called = true;
    const response = await api.fetch(apiRequest(tool, args, request));
    // One message's 401 or 403 is the whole HTTP response, except in a batch, where each
    // message gets a response on its own and the others' results stand.
    if (!batch && (response.status === 401 || response.status === 403)) {
      refusal = challenge(response, metadataUrl, tools);
      return { content: [], isError: true };
    }
    if (response.ok) return callToolResult(tool, response, request.url);
    // Any refusal, the input's too (400), is the model's to read and correct (MCP 2025-11-25).
    const text = refusalText(tool, await response.text());
    return { content: [{ type: "text", text }], isError: true };
  };
  const server = () => {
    const mcp = new Server(
      { name: "petstore", title: "Pet Store API", version: TOOLS.version },
      { capabilities: { tools: {} }, instructions: TOOLS.instructions },
    );
    mcp.setRequestHandler("tools/list", () => ({
      tools: tools.filter((tool) => allows(scopes, tool)).map((tool) => tool.listed),
    }));
    mcp.setRequestHandler("tools/call", ({ params }) => {
      const tool = tools.find((t) => t.listed.name === params.name);
      if (!tool) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No tool named "${params.name}".`);
      }
      return call(tool, params.arguments ?? {});
    });
    return mcp;
  };

  const options = { parsedBody: message };
  let response: Response;
  if (await isLegacyRequest(request, message)) {
    // 2025 revisions: one stateless exchange, served as JSON once the result is known.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const accepted = acceptingJson(request);
    if (accepted) {
      await server().connect(transport);
      response = await transport.handleRequest(accepted, options);
    } else {
      response = rpcError(406, "Not Acceptable: every response is application/json.");
    }
  } else {
    response = await createMcpHandler(server).fetch(request, options);
  }
  // A call the SDK refused before it reached the API was never authenticated: it is now.
  if (deferred && !called) return (await authenticate()) ?? response;
  return refusal ?? response;
}
