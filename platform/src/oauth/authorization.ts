// The authorization request (RFC 6749 section 4.1.1): its client, its parameters each sent
// once, PKCE with S256 only (RFC 7636), its scopes, and the one resource granted (RFC 8707).
import type { Context } from "hono";
import { apiOrigins, MCP_PATH } from "../../../src/mcp-contract.ts";
import { isScope, SCOPES, type Scope } from "../../../src/scopes.ts";
import { findClientRow } from "../db/oauth-clients.ts";
import { countAgainst } from "../request.ts";
import type { PlatformAppEnv } from "../types.ts";
import { type Client, ClientError, clientFromDocument, registeredClient } from "./clients.ts";
import type { OAuthProblem } from "./responses.ts";

/** The API's MCP server at one of the API's addresses: a resource this server grants (RFC 8707). */
const resourceAt = (origin: string) => `${origin}${MCP_PATH}`;

/**
 * Request parameters, each sent at most once (RFC 6749 section 3.1); the name of one sent twice.
 */
export function singleParams(params: URLSearchParams): Record<string, string> | string {
  const seen: Record<string, string> = {};
  for (const [name, value] of params) {
    if (Object.hasOwn(seen, name)) return name;
    seen[name] = value;
  }
  return seen;
}

/** An S256 code challenge: base64url of a SHA-256, 43 characters (RFC 7636 section 4.2). */
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** The longest `state` kept for the client (RFC 6749 leaves it open). */
const MAX_STATE_LENGTH = 1_000;

/**
 * What an authorization request asks beyond its client and redirect, or its error: the code
 * flow, an S256 challenge (RFC 7636 section 4.2), a state of at most MAX_STATE_LENGTH, the
 * scopes asked that this server knows (none: all of them), and no resource but the MCP
 * server's at one of the API's addresses (RFC 8707 section 2; none named: the canonical one).
 */
export function authorizationProblem(
  q: Record<string, string>,
  env: Env,
): OAuthProblem | { scopes: Scope[]; resource: string } {
  if (q.response_type !== "code") {
    return { error: "unsupported_response_type", description: 'The response_type must be "code".' };
  }
  if (q.code_challenge === undefined) {
    return {
      error: "invalid_request",
      description: "PKCE is required: send a code_challenge (S256).",
    };
  }
  if (q.code_challenge_method !== "S256") {
    return {
      error: "invalid_request",
      description: 'The code_challenge_method must be "S256"; "plain" and no method are refused.',
    };
  }
  if (!CODE_CHALLENGE.test(q.code_challenge)) {
    return {
      error: "invalid_request",
      description: "The code_challenge is not an S256 challenge (43 base64url characters).",
    };
  }
  if ((q.state?.length ?? 0) > MAX_STATE_LENGTH) {
    return {
      error: "invalid_request",
      description: `The state is longer than ${MAX_STATE_LENGTH} characters.`,
    };
  }
  // A scope this server does not know (`openid`, `offline_access`) is left out (RFC 6749 3.3:
  // the server may ignore part of the scope asked; the token response names what was granted).
  const known = q.scope?.split(" ").filter(isScope) ?? [];
  const origins = apiOrigins(env);
  const resources = origins.map(resourceAt);
  const resource = q.resource ?? resourceAt(origins[0]);
  if (!resources.includes(resource)) {
    return {
      error: "invalid_target",
      description: `This server grants access to ${resources.join(" and ")} alone, not to ${JSON.stringify(resource.slice(0, 200))}.`,
    };
  }
  return { scopes: known.length > 0 ? known : [...SCOPES], resource };
}

/**
 * The client of `clientId`: a metadata document at its https URL (each fetch counted against
 * the address, as a sign-up is), or a registered one. ClientError when there is none.
 */
export async function clientOf(
  c: Context<PlatformAppEnv>,
  clientId: string | undefined,
): Promise<Client> {
  if (!clientId) throw new ClientError("The request names no client_id.");
  if (clientId.startsWith("https://")) {
    await countAgainst(c, c.env.SIGN_UP_LIMITER, "client metadata documents fetched");
    return clientFromDocument(c.var.clientFetch, clientId);
  }
  const row = await findClientRow(c.env.DB, clientId);
  if (!row) throw new ClientError("No client is registered with this client_id.");
  return registeredClient(row);
}
