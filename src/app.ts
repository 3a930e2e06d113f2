// The app factory: the worker and the tests build the service through it.
// It owns the error handler, the not-found and method-not-allowed answers, and
// the order of the cross-cutting middleware.
import type { MiddlewareHandler } from "hono";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { LastUseRecorder } from "./auth/last-use.ts";
import { createLastUseRecorder } from "./auth/last-use.ts";
import { authenticate, requireScope } from "./auth/middleware.ts";
import type { ApiKeyVerifier } from "./auth/verifier.ts";
import { createApiKeyVerifier } from "./auth/verifier.ts";
import { ApiError, errorResponse, toApiError } from "./errors.ts";
import type { Clock } from "./http/clock.ts";
import { systemClock } from "./http/clock.ts";
import type { EdgeCache } from "./http/conditional-read.ts";
import { conditionalRead } from "./http/conditional-read.ts";
import { cors } from "./http/cors.ts";
import { d1Session } from "./http/d1-session.ts";
import { rateLimit } from "./http/rate-limit.ts";
import type { Logger } from "./http/request-context.ts";
import { consoleLogger, requestContext } from "./http/request-context.ts";
import type { AppEnv } from "./http/types.ts";
import { DOCS_ASSETS_PATH, docsAsset, docsPage } from "./openapi/docs-page.ts";
import openApiDocument from "./openapi/openapi.json" with { type: "json" };
import { OPERATIONS, type Operation } from "./operations.ts";
import { getPetDeprecationHeaders, getPetSunset } from "./pets/deprecation.ts";
import { petRoutes } from "./pets/routes.ts";

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  verifier?: ApiKeyVerifier;
  lastUse?: LastUseRecorder;
  /** The Cache API of the data center; `caches.default` unless a test injects another. */
  edgeCache?: () => EdgeCache;
}

/** Paths that exist, with the methods each allows (HEAD comes with GET). */
export const ALLOWED_METHODS: Record<string, string> = {
  "/": "GET, HEAD, OPTIONS",
  "/v1/pets": "GET, HEAD, POST, OPTIONS",
  "/v1/pets/:petId": "GET, HEAD, OPTIONS",
  "/v1/store/orders": "GET, HEAD, OPTIONS",
  "/v1/openapi.json": "GET, HEAD, OPTIONS",
  "/v1/docs": "GET, HEAD, OPTIONS",
  [`${DOCS_ASSETS_PATH}/:file`]: "GET, HEAD, OPTIONS",
};

/** Public without a key: the documentation and its files, and any OPTIONS request. */
const PUBLIC_PATHS = new Set(["/v1/openapi.json", "/v1/docs"]);
const isPublic = (path: string) =>
  PUBLIC_PATHS.has(path) || path.startsWith(`${DOCS_ASSETS_PATH}/`);

/** The operation's path as Hono routes it: under /v1, `{petId}` as `:petId`. */
const routePath = (op: Operation) => `/v1${op.path.replaceAll(/\{(\w+)\}/g, ":$1")}`;

export function createApp(options: AppOptions = {}) {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? consoleLogger;
  const verifier = options.verifier ?? createApiKeyVerifier(clock);
  const lastUse = options.lastUse ?? createLastUseRecorder(clock, log);
  const requireKey = authenticate(verifier, lastUse);
  const edgeCache = options.edgeCache ?? (() => caches.default);

  const app = new Hono<AppEnv>();

  app.use(requestContext(log));
  app.use(cors);
  app.use(async (c, next) => {
    c.set("clock", clock);
    await next();
  });
  app.use("/v1/*", async (c, next) => {
    if (c.req.method === "OPTIONS" || isPublic(c.req.path)) return next();
    return requireKey(c, next);
  });
  app.on("GET", "/v1/pets/:petId", getPetDeprecationHeaders);
  // Order under /v1 (decisions.md): 401 above, then 429, then 403, then everything else.
  const authenticated =
    (middleware: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> =>
    async (c, next) =>
      c.var.apiKeyId === undefined ? next() : middleware(c, next);
  app.use("/v1/*", authenticated(rateLimit));
  // Each operation's scope, as the operation table declares it. A method the path
  // does not have matches no operation here, so it stays a 405 whatever the scopes.
  for (const op of OPERATIONS) {
    if (!op.scope) continue;
    const method = op.method.toUpperCase();
    app.on(
      method,
      routePath(op),
      requireScope(op.scope, `${op.operationId} (${method} /v1${op.path})`),
    );
  }
  app.on("GET", "/v1/pets/:petId", getPetSunset);
  app.use("/v1/*", authenticated(d1Session));
  // ETag, 304 and the edge cache, for the reads the table marks: after 401, 429, 403.
  for (const op of OPERATIONS) {
    if (!op.conditional) continue;
    app.on("GET", routePath(op), conditionalRead(op.conditional, { cache: edgeCache, log }));
  }

  app.get("/", (c) =>
    c.json({
      name: "Pet Store API",
      version: openApiDocument.info.version,
      documentation: new URL("/v1/docs", c.req.url).href,
      openapi: new URL("/v1/openapi.json", c.req.url).href,
    }),
  );
  app.get("/v1/openapi.json", (c) => c.json(openApiDocument));
  app.get("/v1/docs", docsPage);
  app.get(`${DOCS_ASSETS_PATH}/:file`, docsAsset);
  app.route("/v1", petRoutes);
  app.get("/v1/store/orders", () => {
    throw new ApiError(
      "not_implemented",
      "GET /v1/store/orders is not available yet: its contract has not been published.",
    );
  });

  for (const [path, allow] of Object.entries(ALLOWED_METHODS)) {
    app.options(path, (c) => c.body(null, 204, { Allow: allow }));
    app.all(path, (c) => {
      throw new ApiError(
        "method_not_allowed",
        `Method ${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow}.`,
        { headers: { Allow: allow } },
      );
    });
  }

  app.notFound((c) => errorResponse(new ApiError("not_found", `No such path: ${c.req.path}.`)));

  app.onError((err, c) => {
    let apiError: ApiError;
    if (err instanceof HTTPException && err.status === 400) {
      // Hono's own validator only throws this for a body it could not parse.
      apiError = new ApiError("invalid_json", "Request body is not valid JSON.");
    } else {
      apiError = toApiError(err);
    }
    if (apiError.status >= 500) {
      log({
        level: "error",
        msg: "unhandled error",
        request_id: c.var.requestId,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
        cause:
          err instanceof Error && err.cause instanceof Error
            ? `${err.cause.name}: ${err.cause.message}`
            : undefined,
      });
    }
    return errorResponse(apiError);
  });

  return app;
}

export type App = ReturnType<typeof createApp>;
