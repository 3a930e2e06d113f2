// The MCP server: the API's MCP binding calls `serve` with each request to /mcp and to its
// metadata, and a way back into the API (src/mcp-contract.ts). Stateless: a new server per
// request, nothing kept between them; every store it reads is the API's (docs/agents.md).

import { WorkerEntrypoint } from "cloudflare:workers";
import {
  type CallToolResult,
  createMcpHandler,
  isLegacyRequest,
  originValidationResponse,
  ProtocolError,
  ProtocolErrorCode,
  readRequestBody,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import {
  type ApiAccess,
  KEY_SCOPES_HEADER,
  MCP_METADATA_PATH,
  MCP_PATH,
  type McpService,
  type McpSettings,
} from "../../src/mcp-contract.ts";
import { SCOPES } from "../../src/scopes.ts";
import { allows, apiRequest, TOOLS, type Tool, toolResult, toolsAt } from "./calls.ts";

/** The largest MCP message read (a tool call's JSON body is at most 16 KiB at the API). */
const MAX_MESSAGE_BYTES = 64 * 1024;

/** The one protocol revision with JSON-RPC batches (2025-06-18 removed them). */
const BATCH_VERSION = "2025-03-26";

/** A JSON-RPC error as the HTTP answer (what the SDK answers before any message is read). */
const rpcError = (
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
) => Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });

/**
 * The API's refusal (401 or 403), its challenge pointing at the metadata (RFC 9728); a 401's
 * names the scopes the tools need (RFC 6750 3), which an OAuth client then asks for.
 */
function challenge(refusal: Response, metadataUrl: string, tools: Tool[]): Response {
  const headers = new Headers(refusal.headers);
  const bearer = headers.get("WWW-Authenticate");
  if (bearer) {
    const needed = SCOPES.filter((scope) => tools.some((tool) => tool.scope === scope));
    const scope = refusal.status === 401 ? `, scope="${needed.join(" ")}"` : "";
    headers.set("WWW-Authenticate", `${bearer}${scope}, resource_metadata="${metadataUrl}"`);
  }
  return new Response(refusal.body, { status: refusal.status, headers });
}

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
  return new Request(request, { headers });
}

/** The methods /mcp answers (GET and DELETE, a 2025 session's stream and end, are 405). */
const Allow = "POST, OPTIONS";

/**
 * The request headers of the Streamable HTTP transport a page may send (the API's CORS adds
 * the origin, the methods and the rest): every one, so that a page reads the server's own
 * answer (a 401, a 405) instead of a failed preflight, as the API grants methods it lacks.
 */
const ALLOWED_HEADERS = [
  "Authorization",
  "Content-Type",
  "MCP-Protocol-Version",
  "Mcp-Session-Id",
  "Last-Event-ID",
  "Mcp-Method",
  "Mcp-Name",
].join(", ");

/** OPTIONS, a browser's preflight included: answered without a key, as /v1 answers it. */
function preflight(request: Request): Response {
  const headers = new Headers({ Allow });
  if (request.headers.has("Access-Control-Request-Method")) {
    headers.set("Access-Control-Allow-Headers", ALLOWED_HEADERS);
  }
  return new Response(null, { status: 204, headers });
}

/** The message of a POST, when it is JSON within the bound (read from a copy). */
async function messageOf(request: Request): Promise<unknown> {
  const read = await readRequestBody(request.clone(), MAX_MESSAGE_BYTES);
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
 * One request to /mcp. A call of a tool is authenticated by the API call it makes (its
 * 401 or 403 becomes this answer); any other message first passes /v1's key check and
 * rate limit, whose scopes choose the tools listed.
 */
async function answer(request: Request, api: ApiAccess, metadataUrl: string): Promise<Response> {
  if (request.method === "OPTIONS") return preflight(request);
  const tools = toolsAt(Date.now() / 1000);
  const message = request.method === "POST" ? await messageOf(request) : undefined;
  let scopes: string[] = [];
  /** The key check and rate limit of /v1; the refusal to answer instead, if any. */
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
    const answer = await api.fetch(apiRequest(tool, args, request));
    // One message's 401 or 403 is the whole HTTP answer, except in a batch, where each
    // message is answered on its own and the others' results stand.
    if (!batch && (answer.status === 401 || answer.status === 403)) {
      refusal = challenge(answer, metadataUrl, tools);
      return { content: [], isError: true };
    }
    if (answer.ok) return toolResult(tool, answer, request.url);
    // Any refusal, the input's too (400), is the model's to read and correct (MCP 2025-11-25).
    return { content: [{ type: "text", text: await answer.text() }], isError: true };
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

  const options = message === undefined ? {} : { parsedBody: message };
  let response: Response;
  if (await isLegacyRequest(request, message)) {
    // 2025 revisions: one stateless exchange, answered as JSON once the result is known.
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
    response = await createMcpHandler(server, { legacy: "reject" }).fetch(request, options);
  }
  // A call the SDK refused before it reached the API was never authenticated: it is now.
  if (deferred && !called) return (await authenticate()) ?? response;
  return refusal ?? response;
}

/** RFC 9728: the resource, its authorization server (the developer platform), its scopes. */
function metadata(url: URL, { platformOrigin }: McpSettings): Response {
  return Response.json(
    {
      resource: new URL(MCP_PATH, url).href,
      authorization_servers: [platformOrigin],
      scopes_supported: SCOPES,
      bearer_methods_supported: ["header"],
      resource_name: "Pet Store API",
      resource_documentation: new URL("/v1/docs", url).href,
    },
    { headers: { "Cache-Control": "public, max-age=3600" } },
  );
}

export default class extends WorkerEntrypoint<McpEnv> implements McpService {
  async serve(request: Request, api: ApiAccess, settings: McpSettings): Promise<Response> {
    const allowed = this.env.MCP_ALLOWED_ORIGINS.split(/[\s,]+/).filter(Boolean);
    const refused = originValidationResponse(request, allowed);
    if (refused) return refused;
    const url = new URL(request.url);
    if (url.pathname === MCP_METADATA_PATH) {
      return request.method === "GET" || request.method === "HEAD"
        ? metadata(url, settings)
        : rpcError(405, "Method not allowed.", { Allow: "GET, HEAD" });
    }
    try {
      return await answer(request, api, new URL(MCP_METADATA_PATH, url).href);
    } catch (thrown) {
      if (thrown instanceof Response) return thrown;
      throw thrown;
    }
  }

  /** Nothing reaches it but the API's binding, which calls `serve`. */
  fetch(): Response {
    return new Response(null, { status: 404 });
  }
}
