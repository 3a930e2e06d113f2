// /mcp's HTTP rules that need no JSON-RPC: the Origin rule, a browser's preflight, the 401 of a
// request without a key. The exchange (exchange.ts, with the SDK) is loaded by the first request
// that carries a key, so start-up, keyless requests and preflights never pay for the SDK.
import type { ApiAccess } from "../../src/mcp-contract.ts";
import { SCOPES } from "../../src/scopes.ts";
import { type Tool, toolsAt } from "./calls.ts";

/** A JSON-RPC error as the HTTP response (what the SDK responds before any message is read). */
export const rpcError = (
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
) => Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });

/**
 * A web page's request whose `Origin` names a host outside `allowed` (or no host: `null`),
 * refused with 403 before anything else, against DNS rebinding; clients send no Origin.
 */
export function refusedOrigin(request: Request, allowed: string[]): Response | undefined {
  const origin = request.headers.get("Origin");
  if (!origin) return;
  const host = URL.parse(origin)?.hostname;
  if (host && allowed.includes(host)) return;
  return rpcError(403, `Invalid Origin: ${origin}`);
}

/**
 * The API's refusal (401 or 403), its challenge pointing at the metadata (RFC 9728); a 401's
 * names the scopes the tools need (RFC 6750 3), which an OAuth client then asks for.
 */
export function challenge(refusal: Response, metadataUrl: string, tools: Tool[]): Response {
  const headers = new Headers(refusal.headers);
  const bearer = headers.get("WWW-Authenticate");
  if (bearer) {
    const needed = SCOPES.filter((scope) => tools.some((tool) => tool.scope === scope));
    const scope = refusal.status === 401 ? `, scope="${needed.join(" ")}"` : "";
    headers.set("WWW-Authenticate", `${bearer}${scope}, resource_metadata="${metadataUrl}"`);
  }
  return new Response(refusal.body, { status: refusal.status, headers });
}

/** The methods /mcp responds (GET and DELETE, a 2025 session's stream and end, are 405). */
export const Allow = "POST, OPTIONS";

/**
 * The request headers of the Streamable HTTP transport a page may send (the API's CORS adds
 * the origin, the methods and the rest): every one, so that a page reads the server's own
 * response (a 401, a 405) instead of a failed preflight, as the API grants methods it lacks.
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

/** OPTIONS, a browser's preflight included: responded without a key, as /v1 responds to it. */
function preflight(request: Request): Response {
  const headers = new Headers({ Allow });
  if (request.headers.has("Access-Control-Request-Method")) {
    headers.set("Access-Control-Allow-Headers", ALLOWED_HEADERS);
  }
  return new Response(null, { status: 204, headers });
}

/** One request to /mcp (its Origin already allowed). */
export async function respond(
  request: Request,
  api: ApiAccess,
  metadataUrl: string,
): Promise<Response> {
  if (request.method === "OPTIONS") return preflight(request);
  const tools = toolsAt(Date.now() / 1000);
  if (!request.headers.has("Authorization")) {
    // Refused as /v1 refuses a request without a key: the API's own 401.
    const refusal = await api.authenticate();
    if (refusal.status !== 204) return challenge(refusal, metadataUrl, tools);
  }
  const { exchange } = await import("./exchange.ts");
  return exchange(request, api, metadataUrl, tools);
}
