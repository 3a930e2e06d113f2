// The access middleware of every keyed response, in the contract's order: 401 (the key), 429 (its
// rate), 403 (its scope), then a deprecated operation's 410.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import { type Deprecation, enforceSunset } from "../http/deprecation.ts";
import { enforceRateLimit, rateLimited } from "../http/rate-limit.ts";
import { originOf, waitUntil } from "../http/request-context.ts";
import type { AppEnv } from "../http/types.ts";
import { MCP_PATH } from "../mcp-contract.ts";
import type { Scope } from "../scopes.ts";
import { acceptsAudience } from "./audience.ts";
import type { ApiKeyVerifier, VerifiedKey } from "./verifier.ts";

export const REALM = 'Bearer realm="petstore"';
export const WWW_AUTHENTICATE = "WWW-Authenticate";

/** RFC 6750 b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function unauthorized(message: string, invalidToken: boolean): ApiError {
  return new ApiError("unauthorized", message, {
    headers: {
      [WWW_AUTHENTICATE]: invalidToken ? `${REALM}, error="invalid_token"` : REALM,
    },
  });
}

/** What an operation asks of the access middleware. */
export interface AccessRule {
  /** The scope the key must carry, and the operation the 403 names. */
  scope?: { scope: Scope; operation: string };
  deprecation?: Deprecation;
  /** Work that may run beside the key's lookup when the key must be looked up. */
  prefetch?: (c: Context<AppEnv>) => void;
}

/** The key of the request, or 401 (or 429 for an address sending too many invalid keys). */
async function verifiedKey(
  c: Context<AppEnv>,
  verifier: ApiKeyVerifier,
  rule: AccessRule,
  afterResponse: (work: () => Promise<unknown>) => void,
): Promise<VerifiedKey> {
  const header = c.req.header("Authorization");
  if (header === undefined || header.trim() === "") {
    throw unauthorized('Missing API key: send "Authorization: Bearer <API_KEY>".', false);
  }
  const token = BEARER.exec(header)?.[1];
  if (token === undefined && !/^Bearer(\s|$)/i.test(header)) {
    throw unauthorized('Authorization must use the Bearer scheme: "Bearer <API_KEY>".', false);
  }
  // A malformed token is verified too (as no token at all): it is refused without a
  // lookup, but counts against the address's invalid-key limit like any invalid key.
  const verification = await verifier.verify(token ?? "", {
    env: c.env,
    clientAddress: c.req.header("CF-Connecting-IP") ?? "",
    // Only a lookup needs it: a key this isolate knows is checked without parsing the URL.
    get origin() {
      return originOf(c.req.url);
    },
    afterResponse,
    lookingUp: rule.prefetch && (() => rule.prefetch?.(c)),
  });
  if (verification.ok) {
    if (acceptsAudience(c, verification.key.audience)) return verification.key;
    throw unauthorized(
      `This API key was granted to an MCP client: it is accepted only at ${MCP_PATH}.`,
      true,
    );
  }
  if (verification.reason === "rate_limited") {
    throw rateLimited(
      "Too many requests with invalid API keys came from this address; retry later.",
    );
  }
  throw unauthorized(
    token === undefined
      ? "The API key is malformed."
      : verification.reason === "expired"
        ? "The API key has expired."
        : "The API key is invalid or revoked.",
    true,
  );
}

/** The access middleware: the key, its rate, its scope and the sunset. */
export function access(verifier: ApiKeyVerifier, rule: AccessRule = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    // The verifier's own work after the response (cache puts), started once it is built.
    const later: Array<() => Promise<unknown>> = [];
    const afterResponse = () => {
      for (const work of later.splice(0)) waitUntil(c, work());
    };
    const key = await verifiedKey(c, verifier, rule, (work) => later.push(work)).catch(
      (err: unknown) => {
        afterResponse(); // a refusal's response needs nothing more
        throw err;
      },
    );
    c.set("apiKeyId", key.id);
    c.set("apiKeyOwner", key.owner);
    c.set("apiKeyScopes", key.scopes);
    try {
      await enforceRateLimit(c);
      const needed = rule.scope;
      if (needed && !key.scopes.includes(needed.scope)) {
        throw new ApiError(
          "insufficient_scope",
          `This API key lacks the "${needed.scope}" scope that ${needed.operation} needs.`,
          {
            headers: {
              [WWW_AUTHENTICATE]: `${REALM}, error="insufficient_scope", scope="${needed.scope}"`,
            },
          },
        );
      }
      if (rule.deprecation) enforceSunset(rule.deprecation, c.get("clock")());
      await next();
    } finally {
      afterResponse();
    }
  });
}
