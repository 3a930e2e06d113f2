// Each operation's stages, from the operation table, in one order for two uses: the app
// factory (src/app.ts) chains their middleware, and the document builder
// (src/openapi/declarations.ts) merges what they declare. A stage's middleware and its
// declaration are separate exports of one module, side by side: the worker imports the
// middleware only, so no declaration is bundled into it.
import type { H } from "hono/types";
import type * as z from "zod/mini";
import type { KeyUseRecorder } from "./auth/key-use.ts";
import { keyCheck, requireScope } from "./auth/middleware.ts";
import type { ApiKeyVerifier } from "./auth/verifier.ts";
import type { EdgeCache } from "./cache/edge-cache.ts";
import type { OpenPetStore } from "./db/pet-store.ts";
import { listOrders } from "./handlers/orders.ts";
import { petHandlers } from "./handlers/pets.ts";
import {
  type ConditionalReadRoute,
  conditionalRead,
  ifNoneMatch,
  lookAhead,
} from "./http/conditional-read.ts";
import { bookmark, d1Session } from "./http/d1-session.ts";
import { announceDeprecation, type Deprecation, enforceSunset } from "./http/deprecation.ts";
import { jsonBody } from "./http/json-body.ts";
import { rateLimit } from "./http/rate-limit.ts";
import type { AppEnv } from "./http/types.ts";
import { type Target, validator } from "./http/validation.ts";
import type { Logger } from "./log.ts";
import { docsAsset, docsPage } from "./openapi/docs-page.ts";
import type { Operation, OperationId } from "./operations.ts";
import type { Scope } from "./scopes.ts";

/** Every kind of stage, made into `S`: its middleware (the app) or its declaration (the document). */
export interface StageKit<S> {
  /** Names the operation for the work after its answer (usage counts); the app's kit only. */
  operation?(operationId: OperationId): S;
  /** A conditional read's first stage: lets the key check start the kept answer's lookup. */
  lookAhead(read: ConditionalReadRoute, input: S[]): S;
  keyCheck: S;
  announceDeprecation(deprecation: Deprecation): S;
  rateLimit: S;
  requireScope(scope: Scope, operation: string): S;
  enforceSunset(deprecation: Deprecation): S;
  validator(target: Target, schema: z.ZodMiniType): S;
  jsonBody: S;
  /** A read's `x-d1-bookmark`. */
  bookmark: S;
  ifNoneMatch: S;
  d1Session(kind: "read" | "write"): S;
  conditionalRead(read: ConditionalReadRoute): S;
  handler(operationId: OperationId): S;
}

/**
 * Everything a request to `op` meets, in this order (the same for every operation; the
 * table says which apply): 401, then 429, then 403, then the rest. A deprecated
 * operation's headers wrap everything after the key check, so every answer past 401
 * carries them; its sunset (410) comes after the scope check. The input is checked
 * before any database or cache work, and a conditional read (ETag, 304, the edge cache)
 * comes last, right before the handler; where the key must be looked up, its kept
 * answer is looked up side by side (`lookAhead`, first), and released only there.
 */
export function stagesOf<S>(op: Operation, kit: StageKit<S>): S[] {
  const where = `${op.operationId} (${op.method.toUpperCase()} /v1${op.path})`;
  const read = op.conditional
    ? { path: op.path, ...(op.deprecation ? { until: op.deprecation.sunset } : {}) }
    : undefined;
  const validated = [
    ...(op.params ? [kit.validator("param", op.params)] : []),
    ...(op.query ? [kit.validator("query", op.query)] : []),
  ];
  const headers = [
    ...(op.session === "read" ? [kit.bookmark] : []),
    ...(read ? [kit.ifNoneMatch] : []),
  ];
  return [
    ...(kit.operation ? [kit.operation(op.operationId as OperationId)] : []),
    ...(read ? [kit.lookAhead(read, [...validated, ...headers])] : []),
    ...(op.public ? [] : [kit.keyCheck]),
    ...(op.deprecation ? [kit.announceDeprecation(op.deprecation)] : []),
    ...(op.scope ? [kit.rateLimit, kit.requireScope(op.scope, where)] : []),
    ...(op.deprecation ? [kit.enforceSunset(op.deprecation)] : []),
    ...validated,
    ...(op.body ? [kit.jsonBody, kit.validator("json", op.body)] : []),
    ...headers,
    ...(op.session ? [kit.d1Session(op.session)] : []),
    ...(read ? [kit.conditionalRead(read)] : []),
    kit.handler(op.operationId as OperationId),
  ];
}

/** What the stages' middleware is made of: the app factory's parts. */
export interface Deps {
  log: Logger;
  verifier: ApiKeyVerifier;
  keyUse: KeyUseRecorder;
  edgeCache: () => EdgeCache;
  openPetStore: OpenPetStore;
}

/** The last stage of each operation: its handler. */
const HANDLERS: Record<OperationId, H<AppEnv>> = {
  ...petHandlers,
  listOrders,
  getOpenApiDocument: docsAsset,
  getDocs: docsPage,
};

/** The stages as the app chains them: middleware made of the app's parts. */
export function middlewareKit(deps: Deps): StageKit<H<AppEnv>> {
  return {
    operation: (operationId) => async (c, next) => {
      c.set("operationId", operationId);
      await next();
    },
    lookAhead: (read, input) => lookAhead(read, input, deps),
    keyCheck: keyCheck(deps.verifier, deps.keyUse),
    announceDeprecation,
    rateLimit,
    requireScope,
    enforceSunset,
    validator,
    jsonBody,
    bookmark,
    ifNoneMatch,
    d1Session: (kind) => d1Session(kind, deps.openPetStore),
    conditionalRead: (read) => conditionalRead(read, deps),
    handler: (operationId) => HANDLERS[operationId],
  };
}
