// Each operation's stages, from the operation table: the app factory (src/app.ts) chains
// their middleware, and the document builder (src/openapi/document.ts) merges what they
// declare. One list for both, so the document cannot drift from what runs.
import type { KeyUseRecorder } from "./auth/key-use.ts";
import { keyCheck, requireScope } from "./auth/middleware.ts";
import type { ApiKeyVerifier } from "./auth/verifier.ts";
import type { EdgeCache } from "./cache/edge-cache.ts";
import type { OpenPetStore } from "./db/pet-store.ts";
import { listOrders } from "./handlers/orders.ts";
import { petHandlers } from "./handlers/pets.ts";
import { conditionalRead } from "./http/conditional-read.ts";
import { cors, corsHeaders } from "./http/cors.ts";
import { d1Session } from "./http/d1-session.ts";
import { announceDeprecation, enforceSunset } from "./http/deprecation.ts";
import { readJsonBody } from "./http/json-body.ts";
import { methodsDeclaration } from "./http/methods.ts";
import { rateLimit } from "./http/rate-limit.ts";
import { requestContext } from "./http/request-context.ts";
import type { Stage } from "./http/stage.ts";
import { validator } from "./http/validation.ts";
import type { Logger } from "./log.ts";
import { docsPage } from "./openapi/docs-page.ts";
import { OPERATIONS, type Operation, type OperationId } from "./operations.ts";

/** What the stages' middleware is made of: the app factory's parts. */
export interface Deps {
  log: Logger;
  verifier: ApiKeyVerifier;
  keyUse: KeyUseRecorder;
  edgeCache: () => EdgeCache;
  openPetStore: OpenPetStore;
  /** The OpenAPI document that GET /v1/openapi.json answers. */
  document: unknown;
}

/** The last stage of each operation: its handler. */
const HANDLERS: Record<OperationId, Stage<Deps>> = {
  ...petHandlers,
  listOrders,
  getOpenApiDocument: {
    declares: {},
    middleware:
      ({ document }) =>
      (c) =>
        c.json(document),
  },
  getDocs: { declares: {}, middleware: () => docsPage },
};

/**
 * Everything a request to `op` meets, in this order (the same for every operation; the
 * table says which apply): 401, then 429, then 403, then the rest. A deprecated
 * operation's headers wrap everything after the key check, so every answer past 401
 * carries them; its sunset (410) comes after the scope check. Input is validated before
 * any database or cache work, and a conditional read (ETag, 304, the edge cache) comes
 * last, right before the handler.
 */
export function stagesOf(op: Operation): Stage<Deps>[] {
  const where = `${op.operationId} (${op.method.toUpperCase()} /v1${op.path})`;
  const until = op.deprecation ? { until: op.deprecation.sunset } : {};
  return [
    ...(op.public ? [] : [keyCheck]),
    ...(op.deprecation ? [announceDeprecation(op.deprecation)] : []),
    ...(op.scope ? [rateLimit, requireScope(op.scope, where)] : []),
    ...(op.deprecation ? [enforceSunset(op.deprecation)] : []),
    ...(op.params ? [validator("param", op.params)] : []),
    ...(op.query ? [validator("query", op.query)] : []),
    ...(op.body ? [readJsonBody, validator("json", op.body)] : []),
    ...(op.session ? [d1Session(op.session)] : []),
    ...(op.conditional ? [conditionalRead({ ...op.conditional, path: op.path, ...until })] : []),
    HANDLERS[op.operationId as OperationId],
  ];
}

/** What CORS lets a page on another origin send and read: all the stages declare. */
export const CORS = corsHeaders([
  requestContext.declares,
  methodsDeclaration,
  ...OPERATIONS.flatMap((op) => stagesOf(op).map((stage) => stage.declares)),
]);

/** The stages around every answer, an operation's or not: the request id, then CORS. */
export const APP_STAGES: Stage<Deps>[] = [requestContext, cors(CORS)];
