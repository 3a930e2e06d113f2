// Bearer authentication for everything under /v1 except OPTIONS and the public docs,
// and the scope check that each operation declares in src/operations.ts.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "../http/types.ts";
import type { LastUseRecorder } from "./last-use.ts";
import type { Scope } from "./scopes.ts";
import type { ApiKeyVerifier } from "./verifier.ts";

const REALM = 'Bearer realm="petstore"';
/** RFC 6750 b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function unauthorized(message: string, invalidToken: boolean): ApiError {
  return new ApiError("unauthorized", message, {
    headers: {
      "WWW-Authenticate": invalidToken ? `${REALM}, error="invalid_token"` : REALM,
    },
  });
}

export function authenticate(verifier: ApiKeyVerifier, lastUse: LastUseRecorder) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("Authorization");
    if (header === undefined || header.trim() === "") {
      throw unauthorized('Missing API key: send "Authorization: Bearer <API_KEY>".', false);
    }
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) {
      if (!/^Bearer(\s|$)/i.test(header)) {
        throw unauthorized('Authorization must use the Bearer scheme: "Bearer <API_KEY>".', false);
      }
      throw unauthorized("The API key is malformed.", true);
    }
    const verification = await verifier.verify(token, c.env);
    if (!verification.ok) {
      throw unauthorized(
        verification.reason === "expired"
          ? "The API key has expired."
          : "The API key is invalid or revoked.",
        true,
      );
    }
    c.set("apiKeyId", verification.key.id);
    c.set("apiKeyScopes", verification.key.scopes);
    await next();
    // After the answer is built; the write (if any) goes to waitUntil, off the answer's path.
    lastUse.record(verification.key.id, c.env, (work) => waitUntil(c, work));
  });
}

/** The request's waitUntil; without an execution context the work simply runs detached. */
function waitUntil(c: Context<AppEnv>, work: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(work);
  } catch {
    // No ExecutionContext (app.fetch called without one): `work` already handles its errors.
  }
}

/**
 * 403 `insufficient_scope` (RFC 6750 section 3.1) unless the caller's key carries
 * `scope`. Runs after authentication and the rate limit, before anything else.
 */
export function requireScope(scope: Scope, operation: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!c.var.apiKeyScopes.includes(scope)) {
      throw new ApiError(
        "insufficient_scope",
        `This API key lacks the "${scope}" scope that ${operation} needs.`,
        {
          headers: {
            "WWW-Authenticate": `${REALM}, error="insufficient_scope", scope="${scope}"`,
          },
        },
      );
    }
    await next();
  });
}
