// The app factory: the worker and the tests build the service through it.
// It owns the error handler, the not-found and method-not-allowed answers, and
// registers every route under /v1 from the operation table (src/operations.ts).
import { zValidator } from "@hono/zod-validator";
import type { Handler, MiddlewareHandler } from "hono";
import { Hono } from "hono";
import type { H } from "hono/types";
import type * as z from "zod/mini";
import type { LastUseRecorder } from "./auth/last-use.ts";
import { createLastUseRecorder } from "./auth/last-use.ts";
import { authenticate, requireScope } from "./auth/middleware.ts";
import type { ApiKeyVerifier } from "./auth/verifier.ts";
import { createApiKeyVerifier } from "./auth/verifier.ts";
import type { Clock } from "./clock.ts";
import { systemClock } from "./clock.ts";
import { DatabaseSchemaError } from "./db/database.ts";
import type { OpenPetStore } from "./db/pet-store.ts";
import { openD1PetStore } from "./db/pet-store.ts";
import { schemaDiagnosis } from "./db/schema.ts";
import { ApiError, errorResponse, isFault, toApiError } from "./errors.ts";
import { petHandlers } from "./handlers/pets.ts";
import type { EdgeCache } from "./http/conditional-read.ts";
import { conditionalRead } from "./http/conditional-read.ts";
import { cors } from "./http/cors.ts";
import { d1Session } from "./http/d1-session.ts";
import { announceDeprecation, enforceSunset } from "./http/deprecation.ts";
import { jsonBody } from "./http/json-body.ts";
import { rateLimit } from "./http/rate-limit.ts";
import { requestContext } from "./http/request-context.ts";
import type { AppEnv } from "./http/types.ts";
import { validationHook } from "./http/validation.ts";
import type { Logger } from "./log.ts";
import { consoleLogger } from "./log.ts";
import { docsAsset, docsPage } from "./openapi/docs-page.ts";
import openApiDocument from "./openapi/openapi.json" with { type: "json" };
import { OPERATIONS, type Operation, type OperationId, routePath } from "./operations.ts";

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  verifier?: ApiKeyVerifier;
  lastUse?: LastUseRecorder;
  /** The Cache API of the data center; `caches.default` unless a test injects another. */
  edgeCache?: () => EdgeCache;
  /** The data center's cache of API key records (src/auth/verifier.ts); a named cache by default. */
  keyCache?: () => EdgeCache | Promise<EdgeCache>;
  /** Where pets are kept: one D1 database (the `DB` binding) unless given another store. */
  openPetStore?: OpenPetStore;
}

/** What each operation of the table does once its middleware let the request through. */
const HANDLERS: Record<OperationId, Handler<AppEnv>> = {
  ...petHandlers,
  listOrders: () => {
    throw new ApiError(
      "not_implemented",
      "GET /v1/store/orders is not available yet: its contract has not been published.",
    );
  },
  getOpenApiDocument: (c) => c.json(openApiDocument),
  getDocs: docsPage,
};

const validate = (target: "param" | "query" | "json", schema: z.ZodMiniType) =>
  zValidator(target, schema, validationHook) as unknown as MiddlewareHandler<AppEnv>;

/** The validators of an operation's path parameters, query and JSON body, from its schemas. */
function validators(op: Operation): MiddlewareHandler<AppEnv>[] {
  return [
    ...(op.params ? [validate("param", op.params)] : []),
    ...(op.query ? [validate("query", op.query)] : []),
    ...(op.body ? [jsonBody, validate("json", op.body)] : []),
  ];
}

export function createApp(options: AppOptions = {}) {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? consoleLogger;
  const verifier =
    options.verifier ??
    createApiKeyVerifier(clock, { log, ...(options.keyCache ? { cache: options.keyCache } : {}) });
  const lastUse = options.lastUse ?? createLastUseRecorder(clock, log);
  const requireKey = authenticate(verifier, lastUse);
  const edgeCache = options.edgeCache ?? (() => caches.default);
  const openPetStore = options.openPetStore ?? openD1PetStore;

  /**
   * Everything a request to `op` meets before its handler, in this order (the same for
   * every operation; the table says which apply): 401, then 429, then 403, then the
   * rest. A deprecated operation's headers wrap everything after the key check, so
   * every answer past 401 carries them; its sunset (410) comes after the scope check.
   * Input is validated before any database or cache work, and a conditional read
   * (ETag, 304, the edge cache) comes last, right before the handler.
   */
  const middlewareOf = (op: Operation): MiddlewareHandler<AppEnv>[] => [
    ...(op.public ? [] : [requireKey]),
    ...(op.deprecation ? [announceDeprecation(op.deprecation)] : []),
    ...(op.scope
      ? [
          rateLimit,
          requireScope(op.scope, `${op.operationId} (${op.method.toUpperCase()} /v1${op.path})`),
        ]
      : []),
    ...(op.deprecation ? [enforceSunset(op.deprecation)] : []),
    ...validators(op),
    ...(op.session ? [d1Session(op.session, openPetStore)] : []),
    ...(op.conditional
      ? [
          conditionalRead(
            {
              ...op.conditional,
              path: op.path,
              ...(op.deprecation ? { until: op.deprecation.sunset } : {}),
            },
            { cache: edgeCache, log },
          ),
        ]
      : []),
  ];

  const app = new Hono<AppEnv>();

  app.use(requestContext(log));
  app.use(cors);
  app.use(async (c, next) => {
    c.set("clock", clock);
    await next();
  });

  app.get("/", (c) =>
    c.json({
      name: "Pet Store API",
      version: openApiDocument.info.version,
      documentation: new URL("/v1/docs", c.req.url).href,
      openapi: new URL("/v1/openapi.json", c.req.url).href,
    }),
  );
  /** Paths that need a key for any answer but OPTIONS (every path with a non-public operation). */
  const keyed = new Set<string>();
  for (const op of OPERATIONS) {
    const chain: H<AppEnv>[] = [...middlewareOf(op), HANDLERS[op.operationId as OperationId]];
    app.on(op.method.toUpperCase(), [routePath(op)], ...chain);
    if (op.files) app.on("GET", [`/v1${op.files}/*`], ...middlewareOf(op), docsAsset);
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
    app.options(path, (c) => c.body(null, 204, { Allow: allow }));
    const refuse: Handler<AppEnv> = (c) => {
      throw new ApiError(
        "method_not_allowed",
        `Method ${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow}.`,
        { headers: { Allow: allow } },
      );
    };
    app.on("ALL", [path], ...(keyed.has(path) ? [requireKey, rateLimit] : []), refuse);
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
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
        cause:
          err instanceof Error && err.cause instanceof Error
            ? `${err.cause.name}: ${err.cause.message}`
            : undefined,
        // A missing table: which migrations the database lacks.
        ...(err instanceof DatabaseSchemaError ? await schemaDiagnosis(err, c.env.DB) : {}),
      });
    }
    return errorResponse(apiError);
  });

  return app;
}

export type App = ReturnType<typeof createApp>;
