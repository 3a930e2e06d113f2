// The app factory, for the worker and the tests: every operation of the table with its
// middleware, 404 / 405 / OPTIONS around them, and the one error handler.
import type { Context, ErrorHandler, MiddlewareHandler } from "hono";
import { HonoBase } from "hono/hono-base";
import type { KeyUseRecorder } from "./auth/key-use.ts";
import { createKeyUseRecorder } from "./auth/key-use.ts";
import { access } from "./auth/middleware.ts";
import type { ApiKeyVerifier } from "./auth/verifier.ts";
import { createApiKeyVerifier } from "./auth/verifier.ts";
import type { EdgeCache } from "./cache/edge-cache.ts";
import type { Clock } from "./clock.ts";
import { systemClock } from "./clock.ts";
import { openD1PetStore } from "./db/d1-pet-store.ts";
import { DatabaseSchemaError } from "./db/database.ts";
import type { OpenPetStore } from "./db/pet-store.ts";
import { schemaDiagnosis } from "./db/schema.ts";
import { ApiError, errorResponse, isFault, toApiError } from "./errors.ts";
import { cors } from "./http/cors.ts";
import { listMethods, methodsByPath, refuseMethod } from "./http/methods.ts";
import { requestContext, waitUntil } from "./http/request-context.ts";
import { CachedRouter } from "./http/router.ts";
import type { AppEnv } from "./http/types.ts";
import type { Logger } from "./log.ts";
import { consoleLogger, faultLine } from "./log.ts";
import { mountMcp } from "./mcp.ts";
import { type Deps, middlewareOf } from "./middleware.ts";
import built from "./openapi/worker.json" with { type: "json" };
import { OPERATIONS, type Operation, routePath } from "./operations/index.ts";

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  verifier?: ApiKeyVerifier;
  /** Last use and responses per key, written after the responses (src/auth/key-use.ts). */
  keyUse?: KeyUseRecorder;
  /** The Cache API of the data center; `caches.default` unless a test injects another. */
  edgeCache?: () => EdgeCache;
  /** The data center's cache of API key records (src/auth/verifier.ts); a named cache by default. */
  keyCache?: () => EdgeCache | Promise<EdgeCache>;
  /** Where pets are kept: one D1 database (the `DB` binding) unless given another store. */
  openPetStore?: OpenPetStore;
  /** The operations it serves: the table of src/operations/ unless a test gives its own. */
  operations?: readonly Operation[];
}

/**
 * The handlers of one route as one handler, run as Hono runs them: an error thrown in one
 * becomes `onError`'s response right there, so the handlers around it still see a response.
 * The router (hono/tiny's) tests every route's pattern for each method and path it has not
 * matched yet; a route per middleware made that a few dozen patterns.
 */
function oneRoute(
  handlers: MiddlewareHandler<AppEnv>[],
  onError: ErrorHandler<AppEnv>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const run = async (i: number): Promise<void> => {
      const handler = handlers[i];
      if (!handler) return void (await next());
      let response: unknown;
      let failed = false;
      try {
        response = await handler(c, () => run(i + 1));
      } catch (err) {
        if (!(err instanceof Error)) throw err;
        c.error = err;
        response = await onError(err, c);
        failed = true;
      }
      if (response instanceof Response && (!c.finalized || failed)) c.res = response;
    };
    await run(0);
  };
}

export function createApp(options: AppOptions = {}) {
  const clock = options.clock ?? systemClock;
  const operations = options.operations ?? OPERATIONS;
  const log = options.log ?? consoleLogger;
  const keyUse = options.keyUse ?? createKeyUseRecorder(clock, log);
  const deps: Deps = {
    log,
    verifier:
      options.verifier ??
      createApiKeyVerifier(clock, {
        log,
        ...(options.keyCache ? { cache: options.keyCache } : {}),
      }),
    edgeCache: options.edgeCache ?? (() => caches.default),
    openPetStore: options.openPetStore ?? openD1PetStore,
  };
  const requireKey = access(deps.verifier);
  /** An unknown path under /v1 is 404 after the key check and the rate limit (OPTIONS: at once). */
  const unknownPath: MiddlewareHandler<AppEnv> = async (c, next) =>
    c.req.method === "OPTIONS" || !c.req.path.startsWith("/v1/") ? next() : requireKey(c, next);

  // hono/tiny's router, its matches cached (src/http/router.ts).
  const app = new HonoBase<AppEnv>({ router: new CachedRouter() });

  // Around every response: the request id and clock, the key's usage once the response is made, then CORS.
  const countUse = (c: Context<AppEnv>) => {
    if (c.get("apiKeyId") === undefined) return;
    const { status } = c.res;
    // What was thrown; else a 404 is the not-found response, the one the app returns unthrown.
    const code = status < 400 ? "" : c.error ? toApiError(c.error).code : "not_found";
    const response = { operation: c.get("operationId") ?? "", status, code };
    keyUse.record(c.get("apiKeyId"), response, c.env, (work) => waitUntil(c, work));
  };
  app.use(requestContext(log, clock, isFault, countUse), cors(built.cors));
  // Paths are exact, but the router (hono/tiny's) takes /v1/pets/ for /v1/pets:
  // a trailing slash is an unknown path, served as the catch-all below returns one.
  const files = operations.flatMap((op) => (op.files ? [`/v1${op.files.path}/`] : []));
  app.use(async (c, next) => {
    const { path } = c.req;
    if (path === "/" || !path.endsWith("/") || files.some((f) => path.startsWith(f))) return next();
    await unknownPath(c, async () => {});
    return c.notFound();
  });

  app.get("/", (c) =>
    c.json({
      name: "Pet Store API",
      version: built.version,
      documentation: new URL("/v1/docs", c.req.url).href,
      openapi: new URL("/v1/openapi.json", c.req.url).href,
    }),
  );
  mountMcp(app, [requireKey]);
  const onError: ErrorHandler<AppEnv> = async (err, c) => {
    const apiError = toApiError(err);
    if (isFault(err)) {
      log({
        ...faultLine(c.get("requestId"), err),
        // A missing table: which migrations the database lacks.
        ...(err instanceof DatabaseSchemaError ? await schemaDiagnosis(err, c.env.DB) : {}),
      });
    }
    return errorResponse(apiError);
  };
  const route = (...handlers: MiddlewareHandler<AppEnv>[]) => oneRoute(handlers, onError);
  /** Paths that need a key for any response but OPTIONS (every path with a non-public operation). */
  const keyed = new Set<string>();
  for (const op of operations) {
    const chain = middlewareOf(op, deps);
    app.on(op.method.toUpperCase(), [routePath(op)], route(...chain));
    // The files beside the operation pass the same middleware but its handler.
    if (op.files) {
      app.on("GET", [`/v1${op.files.path}/*`], route(...chain.slice(0, -1), op.files.handler));
    }
    if (!op.public) keyed.add(routePath(op));
  }

  // The methods each path allows are the ones registered above (HEAD comes with GET):
  // OPTIONS responds to them in Allow without a key; any other method is 405 with Allow,
  // after the key check and the rate limit where the path needs a key.
  for (const [path, methods] of methodsByPath(app.routes)) {
    const allow = [...methods, "OPTIONS"].join(", ");
    app.options(path, listMethods(allow));
    const refuse = refuseMethod(allow, ApiError) as MiddlewareHandler<AppEnv>;
    app.on("ALL", [path], route(...(keyed.has(path) ? [requireKey] : []), refuse));
  }

  // Any other path under /v1 is 404, after the key check and the rate limit (OPTIONS: at once).
  app.all("/v1/*", unknownPath);
  app.notFound((c) => errorResponse(new ApiError("not_found", `No such path: ${c.req.path}.`)));

  app.onError(onError);

  return app;
}
