// What the MCP worker takes from the API: the paths the API hands over, and the RPC each
// side offers the other (the API's MCP binding; src/mcp.ts). No imports: both workers
// bundle it, and the MCP worker depends on the API, never the other way.

/** Where the MCP server responds, and where its RFC 9728 metadata is (the API's origin). */
export const MCP_PATH = "/mcp";
export const MCP_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp";
/**
 * The API's public addresses (`API_ORIGINS` of the API's and the platform's wrangler.toml,
 * space-separated, the canonical one first): `/mcp` responds under these alone, and the
 * authorization server grants each followed by MCP_PATH (RFC 8707 resources).
 */
export function apiOrigins({ API_ORIGINS }: { API_ORIGINS: string }): [string, ...string[]] {
  const [first = "", ...rest] = API_ORIGINS.split(/\s+/).filter(Boolean);
  return [first, ...rest];
}

/** The header of `authenticate`'s 204: the key's scopes, space-separated. */
export const KEY_SCOPES_HEADER = "X-Key-Scopes";

/** What the MCP worker may ask of the API while it returns one request. */
export interface ApiAccess {
  /** The key check and rate limit of /v1 for this request: 204 with the key's scopes, or /v1's refusal. */
  authenticate(): Promise<Response>;
  /** One API call, served by the whole /v1 chain as if the client had sent it. */
  fetch(request: Request): Promise<Response>;
}

/** What the API tells the MCP worker with each request. */
export interface McpSettings {
  /** The developer platform: the authorization server the metadata names. */
  platformOrigin: string;
}

/** The MCP worker's RPC interface (its default entrypoint). */
export interface McpService {
  serve(request: Request, api: ApiAccess, settings: McpSettings): Promise<Response>;
}
