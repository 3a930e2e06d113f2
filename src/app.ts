// The app factory: the worker and the tests build the service through it.
// It owns the error handler, the not-found and method-not-allowed answers, and
// registers every route under /v1 from the operation table (src/operations.ts), each
// with its stages (src/stages.ts).

import { Hono } from "hono";
import type { KeyUseRecorder } from "./auth/key-use.ts";
import { createKeyUseRecorder } from "./auth/key-use.ts";
import type { ApiKeyVerifier } from "./auth/verifier.ts";
import { createApiKeyVerifier } from "./auth/verifier.ts";
import type { EdgeCache } from "./cache/edge-cache.ts";
import type { Clock } from "./clock.ts";
import { systemClock } from "./clock.ts";
import { DatabaseSchemaError } from "./db/database.ts";
import type { OpenPetStore } from "./db/pet-store.ts";
import { openD1PetStore } from "./db/pet-store.ts";
import { schemaDiagnosis } from "./db/schema.ts";
import { ApiError, errorResponse, isFault, toApiError } from "./errors.ts";
import { cors } from "./http/cors.ts";
import { listMethods, refuseMethod } from "./http/methods.ts";
import { rateLimit } from "./http/rate-limit.ts";
import { requestContext } from "./http/request-context.ts";
import type { AppEnv } from "./http/types.ts";
import type { Logger } from "./log.ts";
import { consoleLogger, errorText } from "./log.ts";
import { mountMcp } from "./mcp.ts";
import { docsAsset } from "./openapi/docs-page.ts";
import built from "./openapi/worker.json" with { type: "json" };
import { OPERATIONS, routePath } from "./operations.ts";
import { type Deps, middlewareKit, stagesOf } from "./stages.ts";

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  verifier?: ApiKeyVerifier;
  /** Last use and answers per key, written after the answers (src/auth/key-use.ts). */
  keyUse?: KeyUseRecorder;
  /** The Cache API of the data center; `caches.default` unless a test injects another. */
  edgeCache?: () => EdgeCache;
  /** The data center's cache of API key records (src/auth/verifier.ts); a named cache by default. */
  keyCache?: () => EdgeCache | Promise<EdgeCache>;
  /** Where pets are kept: one D1 database (the `DB` binding) unless given another store. */
  openPetStore?: OpenPetStore;
}

export function createApp(options: AppOptions = {}) {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? consoleLogger;
  const deps: Deps = {
    log,
    verifier:
      options.verifier ??
      createApiKeyVerifier(clock, {
        log,
        ...(options.keyCache ? { cache: options.keyCache } : {}),
      }),
    keyUse: options.keyUse ?? createKeyUseRecorder(clock, log),
    edgeCache: options.edgeCache ?? (() => caches.default),
    openPetStore: options.openPetStore ?? openD1PetStore,
  };
  const kit = middlewareKit(deps);
  const requireKey = kit.keyCheck;

  const app = new Hono<AppEnv>();

  // Around every answer: the request id, then CORS (what the stages declare, at build time).
  app.use(requestContext(log), cors(built.cors));
  app.use(async (c, next) => {
    c.set("clock", clock);
    await next();
  });

  app.get("/", (c) =>
    c.json({
      name: "Pet Store API",
      version: built.version,
      documentation: new URL("/v1/docs", c.req.url).href,
      openapi: new URL("/v1/openapi.json", c.req.url).href,
    }),
  );
  mountMcp(app, [requireKey, rateLimit]);
  /** Paths that need a key for any answer but OPTIONS (every path with a non-public operation). */
  const keyed = new Set<string>();
  for (const op of OPERATIONS) {
    const chain = stagesOf(op, kit);
    app.on(op.method.toUpperCase(), [routePath(op)], ...chain);
    // The files beside the operation pass the same stages but its handler.
    if (op.files) app.on("GET", [`/v1${op.files}/*`], ...chain.slice(0, -1), docsAsset);
    if (!op.public) keyed.add(routePath(op));
  }

  // The methods each path allows are the ones registered above (HEAD comes with GET):
  // OPTIONS answers them in Allow without a key; any other method is 405 with Allow,
  // after the key check and the rate limit where the path needs a key.
  const allowed = new Map<string, string[]>();
  for (const { path, method } of app.routes) {
    if (method === "ALL") continue;
    const methods = allowed.get(path) ?? [];
    for (const m of method === "GET" ? ["GET", "HEAD"] : [method]) {
      if (!methods.includes(m)) methods.push(m);
    }
    allowed.set(path, methods);
  }
  for (const [path, methods] of allowed) {
    const allow = [...methods, "OPTIONS"].join(", ");
    app.options(path, listMethods(allow));
    app.on("ALL", [path], ...(keyed.has(path) ? [requireKey, rateLimit] : []), refuseMethod(allow));
  }

  // Any other path under /v1 is 404, after the key check and the rate limit (OPTIONS: at once).
  app.all("/v1/*", async (c, next) => (c.req.method === "OPTIONS" ? next() : requireKey(c, next)));
  app.all("/v1/*", async (c, next) => (c.var.apiKeyId === undefined ? next() : rateLimit(c, next)));
  app.notFound((c) => errorResponse(new ApiError("not_found", `No such path: ${c.req.path}.`)));

  app.onError(async (err, c) => {
    const apiError = toApiError(err);
    if (isFault(err)) {
      log({
        level: "error",
        msg: "unhandled error",
        request_id: c.var.requestId,
        error: errorText(err),
        cause:
          err instanceof Error && err.cause instanceof Error ? errorText(err.cause) : undefined,
        // A missing table: which migrations the database lacks.
        ...(err instanceof DatabaseSchemaError ? await schemaDiagnosis(err, c.env.DB) : {}),
      });
    }
    return errorResponse(apiError);
  });

  return app;
}

export type App = ReturnType<typeof createApp>;
