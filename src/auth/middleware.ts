// Bearer authentication for everything under /v1 except OPTIONS and the public docs,
// and the scope check that each operation declares in src/operations.ts. Each stage's
// declaration for the document is an export of its own (src/http/stage.ts).
import { createMiddleware } from "hono/factory";
import { ApiError, DATABASE_UNAVAILABLE, toApiError } from "../errors.ts";
import { RATE_LIMITED, rateLimited } from "../http/rate-limit.ts";
import { waitUntil } from "../http/request-context.ts";
import type { Declaration, HeaderUse } from "../http/stage.ts";
import type { AppEnv } from "../http/types.ts";
import { SCOPE_DESCRIPTIONS, SCOPES, type Scope } from "../scopes.ts";
import type { KeyUseRecorder } from "./key-use.ts";
import type { ApiKeyVerifier } from "./verifier.ts";

const REALM = 'Bearer realm="petstore"';
const WWW_AUTHENTICATE = "WWW-Authenticate";

/** The challenge of a 401 and a 403, as the document describes it. */
const challenge = (): HeaderUse[] => [
  {
    header: {
      name: WWW_AUTHENTICATE,
      description:
        'RFC 6750: `Bearer realm="petstore"`; on 401 with `error="invalid_token"` when a key was sent but is not valid (unknown, revoked or expired); on 403 with `error="insufficient_scope", scope="<scope>"` naming the scope the operation needs.',
      schema: { type: "string", pattern: `^${REALM}` },
    },
    always: true,
  },
];

/** The security scheme of every operation that needs a key. */
const BEARER_AUTH = "bearerAuth";
/** RFC 6750 b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function unauthorized(message: string, invalidToken: boolean): ApiError {
  return new ApiError("unauthorized", message, {
    headers: {
      [WWW_AUTHENTICATE]: invalidToken ? `${REALM}, error="invalid_token"` : REALM,
    },
  });
}

/**
 * The key check: 401 for a missing or invalid key, 429 for an address sending too many
 * invalid keys, 503 when the key's lookup finds the database unavailable.
 */
export function keyCheck(verifier: ApiKeyVerifier, keyUse: KeyUseRecorder) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("Authorization");
    if (header === undefined || header.trim() === "") {
      throw unauthorized('Missing API key: send "Authorization: Bearer <API_KEY>".', false);
    }
    const token = BEARER.exec(header)?.[1];
    if (token === undefined && !/^Bearer(\s|$)/i.test(header)) {
      throw unauthorized('Authorization must use the Bearer scheme: "Bearer <API_KEY>".', false);
    }
    // The verifier's own work after the answer (cache puts), started once it is built.
    const later: Array<() => Promise<unknown>> = [];
    const afterAnswer = () => {
      for (const work of later.splice(0)) waitUntil(c, work());
    };
    // A malformed token is verified too (as no token at all): it is refused without a
    // lookup, but counts against the address's invalid-key limit like any invalid key.
    const verification = await verifier.verify(token ?? "", {
      env: c.env,
      clientAddress: c.req.header("CF-Connecting-IP") ?? "",
      origin: new URL(c.req.url).origin,
      afterAnswer: (work) => later.push(work),
      lookingUp: c.var.lookAhead,
    });
    if (!verification.ok) {
      afterAnswer(); // the refusal's answer needs nothing more
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
    c.set("apiKeyId", verification.key.id);
    c.set("apiKeyOwner", verification.key.owner);
    c.set("apiKeyScopes", verification.key.scopes);
    try {
      await next();
    } finally {
      // After the answer is built; this work goes to waitUntil, off the answer's path.
      afterAnswer();
    }
    const { status } = c.res;
    // What was thrown; else a 404 is the not-found answer, the one the app returns unthrown.
    const code = status < 400 ? "" : c.error ? toApiError(c.error).code : "not_found";
    const answer = { operation: c.var.operationId ?? "", status, code };
    keyUse.record(verification.key.id, answer, c.env, (work) => waitUntil(c, work));
  });
}

export function keyCheckDeclares(): Declaration {
  return {
    requestHeaders: ["Authorization"],
    errors: [{ code: "unauthorized", headers: challenge() }, RATE_LIMITED, DATABASE_UNAVAILABLE],
    securitySchemes: {
      [BEARER_AUTH]: {
        type: "http",
        scheme: "bearer",
        description: [
          'API keys start with `psk_`. Developers get theirs on the developer platform ("Get a key" on the reference page): an account with a passkey, then keys they create, rotate and revoke themselves; the operator issues keys with `npm run keys -- create`. Each key carries one or more scopes; each operation\'s `security` names the scope it needs, and a key without it gets 403 `insufficient_scope`. A key may also carry an expiry instant, from which it is refused with 401.',
          "",
          ...SCOPES.map((scope) => `- \`${scope}\`: ${SCOPE_DESCRIPTIONS[scope]}`),
        ].join("\n"),
      },
    },
  };
}

/**
 * 403 `insufficient_scope` (RFC 6750 section 3.1) unless the caller's key carries
 * `scope`. Runs after authentication and the rate limit, before anything else.
 * `operation` names the operation in the message.
 */
export function requireScope(scope: Scope, operation: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!c.var.apiKeyScopes.includes(scope)) {
      throw new ApiError(
        "insufficient_scope",
        `This API key lacks the "${scope}" scope that ${operation} needs.`,
        {
          headers: {
            [WWW_AUTHENTICATE]: `${REALM}, error="insufficient_scope", scope="${scope}"`,
          },
        },
      );
    }
    await next();
  });
}

export function requireScopeDeclares(scope: Scope): Declaration {
  return {
    errors: [{ code: "insufficient_scope", headers: challenge() }],
    operation: { security: [{ [BEARER_AUTH]: [scope] }] },
  };
}
