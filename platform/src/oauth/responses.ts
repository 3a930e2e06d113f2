// What the OAuth endpoints send besides pages: the error response, which is also the platform's
// Error object, the parameters of a redirect back to the client, and CORS for machine clients.
import type { Context } from "hono";
import { cors } from "hono/cors";
import type { PlatformAppEnv } from "../types.ts";

/** An OAuth error's code and its description (RFC 6749 section 5.2). */
export interface OAuthProblem {
  error: string;
  description: string;
}

/**
 * CORS of the endpoints a client calls from any origin (metadata, token, registration): no
 * cookie is ever read there, so any origin may read their responses.
 */
export const machineCors = cors({ origin: "*", allowMethods: ["GET", "POST"], maxAge: 86400 });

/**
 * An OAuth error response (RFC 6749 section 5.2, RFC 7591 section 3.2.2) that is also the
 * platform's Error object.
 */
export function oauthError(
  c: Context<PlatformAppEnv>,
  status: 400 | 401,
  error: string,
  description: string,
) {
  return c.json(
    { error, error_description: description, code: error, message: description, status },
    status,
  );
}

/**
 * `uri` with the response parameters added to its query (RFC 6749 section 4.1.2, RFC 9207's `iss`).
 */
export function withParams(uri: string, params: Record<string, string | null>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null) url.searchParams.set(name, value);
  }
  return url.href;
}
