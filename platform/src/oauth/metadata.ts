// The authorization server's metadata (RFC 8414): where its endpoints are and what they
// support, for MCP clients to discover from the API's protected resource metadata.
import { apiOrigins } from "../../../src/mcp-contract.ts";
import { SCOPES } from "../../../src/scopes.ts";

/**
 * The server's endpoints, at the platform's origin (the metadata's own path: RFC 8414 section 3).
 */
export const OAUTH_PATHS = {
  metadata: "/.well-known/oauth-authorization-server",
  authorize: "/oauth/authorize",
  token: "/oauth/token",
  register: "/oauth/register",
} as const;

/**
 * The metadata document (RFC 8414 section 2): the code flow only, PKCE with S256 only (RFC
 * 7636), public clients (no secret), Client ID Metadata Documents and registration (RFC
 * 7591), and `iss` in every authorization response (RFC 9207).
 */
export function authorizationServerMetadata(env: Env) {
  const issuer = env.PLATFORM_ORIGIN;
  return {
    issuer,
    authorization_endpoint: `${issuer}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${issuer}${OAUTH_PATHS.token}`,
    registration_endpoint: `${issuer}${OAUTH_PATHS.register}`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    scopes_supported: SCOPES,
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${apiOrigins(env)[0]}/v1/docs`,
  };
}
