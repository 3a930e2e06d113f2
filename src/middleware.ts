// Each operation's middleware, from its fields, in one order: 401, 429, 403 (access), the
// sunset's 410, the input's 400s, the D1 session, the conditional read, then the handler.
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { access } from "./auth/middleware.ts";
import type { ApiKeyVerifier } from "./auth/verifier.ts";
import type { EdgeCache } from "./cache/edge-cache.ts";
import type { OpenPetStore } from "./db/pet-store.ts";
import { conditionalRead, type Select } from "./http/conditional-read.ts";
import { bookmarkOf, d1Session } from "./http/d1-session.ts";
import { deprecationHeaders } from "./http/deprecation.ts";
import { ifMatch } from "./http/etag.ts";
import { jsonBody } from "./http/json-body.ts";
import { clientName } from "./http/request-context.ts";
import type { AppEnv } from "./http/types.ts";
import { validator } from "./http/validation.ts";
import type { Logger } from "./log.ts";
import built from "./openapi/worker.json" with { type: "json" };
import type { Operation } from "./operations/index.ts";

/** What the middleware is made of: the app factory's parts. */
export interface Deps {
  log: Logger;
  verifier: ApiKeyVerifier;
  edgeCache: () => EdgeCache;
  openPetStore: OpenPetStore;
}

/**
 * The operation's own first middleware: it names the operation for what follows (usage counts)
 * and, for a deprecated one, adds its headers to every response past the key check.
 */
function operation(op: Operation) {
  const headers = op.deprecation && Object.entries(deprecationHeaders(op.deprecation));
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("operationId", op.operationId);
    await next();
    if (headers && c.get("apiKeyId") !== undefined) {
      for (const [name, value] of headers) c.res.headers.set(name, value);
    }
  });
}

/** Everything a request to `op` meets, in order; the handler last. */
export function middlewareOf(op: Operation, deps: Deps): MiddlewareHandler<AppEnv>[] {
  const input = [
    ...(op.params ? [validator("param", op.params)] : []),
    ...(op.query ? [validator("query", op.query)] : []),
    clientName,
  ];
  const read =
    op.conditional &&
    conditionalRead(
      {
        path: op.path,
        // The document's digest of the response (a test's own operation: its id).
        shape: (built.shapes as Record<string, string>)[op.operationId] ?? op.operationId,
        until: op.deprecation?.sunset,
        cacheable: op.conditional.cacheable,
        select: op.handler as Select,
        input: [...input, ...(op.pets === "read" ? [bookmarkOf] : [])],
      },
      deps,
    );
  return [
    operation(op),
    ...(op.scope
      ? [
          access(deps.verifier, {
            scope: {
              scope: op.scope,
              operation: `${op.operationId} (${op.method.toUpperCase()} /v1${op.path})`,
            },
            deprecation: op.deprecation,
            prefetch: read ? read.prefetch : undefined,
          }),
        ]
      : []),
    ...input,
    ...(op.body ? [jsonBody(op.bodyMediaTypes), validator("json", op.body)] : []),
    ...(op.ifMatch ? [ifMatch] : []),
    ...(op.pets ? [d1Session(op.pets === "read" ? "read" : "write", deps.openPetStore)] : []),
    // A conditional read's handler selects; its middleware responds.
    read ? read.middleware : (op.handler as MiddlewareHandler<AppEnv>),
  ];
}
