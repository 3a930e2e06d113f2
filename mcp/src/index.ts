// The MCP server: the API's MCP binding calls `serve` with each request to /mcp and to its
// metadata, and a way back into the API (src/mcp-contract.ts). Stateless: a new server per
// request, nothing kept between them; every store it reads is the API's (docs/agents.md).

import { WorkerEntrypoint } from "cloudflare:workers";
import {
  type ApiAccess,
  MCP_METADATA_PATH,
  MCP_PATH,
  type McpService,
  type McpSettings,
} from "../../src/mcp-contract.ts";
import { SCOPES } from "../../src/scopes.ts";
import { refusedOrigin, respond, rpcError } from "./request.ts";

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
    const refused = refusedOrigin(request, allowed);
    if (refused) return refused;
    const url = new URL(request.url);
    if (url.pathname === MCP_METADATA_PATH) {
      return request.method === "GET" || request.method === "HEAD"
        ? metadata(url, settings)
        : rpcError(405, "Method not allowed.", { Allow: "GET, HEAD" });
    }
    try {
      return await respond(request, api, new URL(MCP_METADATA_PATH, url).href);
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
