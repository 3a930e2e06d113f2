// What each stage declares, as the document builder (src/openapi/document.ts) and
// scripts/openapi.ts read it: the declarations kit of src/stages.ts, the stages around
// every answer, and the CORS headers they add up to. Build time only: the worker imports
// none of it (the CORS headers reach it in src/openapi/worker.json, written from here).
import { keyCheckDeclares, requireScopeDeclares } from "../auth/middleware.ts";
import { listOrdersDeclares } from "../handlers/orders.ts";
import { petHandlerDeclares } from "../handlers/pets.ts";
import { conditionalReadDeclares, ifNoneMatchDeclares } from "../http/conditional-read.ts";
import { corsDeclares, corsHeaders } from "../http/cors.ts";
import { bookmarkDeclares, d1SessionDeclares } from "../http/d1-session.ts";
import { announceDeprecationDeclares, enforceSunsetDeclares } from "../http/deprecation.ts";
import { jsonBodyDeclares } from "../http/json-body.ts";
import { methodsDeclares } from "../http/methods.ts";
import { rateLimitDeclares } from "../http/rate-limit.ts";
import { requestContextDeclares } from "../http/request-context.ts";
import type { Declaration } from "../http/stage.ts";
import { validatorDeclares } from "../http/validation.ts";
import { OPERATIONS, type OperationId } from "../operations.ts";
import { type StageKit, stagesOf } from "../stages.ts";
import { documentFileDeclares } from "./docs-page.ts";

const HANDLERS: Record<OperationId, Declaration> = {
  ...petHandlerDeclares(),
  listOrders: listOrdersDeclares(),
  getOpenApiDocument: documentFileDeclares(),
  getDocs: {},
};

/** The stages as the document reads them: what each declares. */
const DECLARATIONS: StageKit<Declaration> = {
  lookAhead: () => ({}),
  keyCheck: keyCheckDeclares(),
  announceDeprecation: announceDeprecationDeclares,
  rateLimit: rateLimitDeclares(),
  requireScope: requireScopeDeclares,
  enforceSunset: enforceSunsetDeclares,
  validator: validatorDeclares,
  jsonBody: jsonBodyDeclares(),
  bookmark: bookmarkDeclares(),
  ifNoneMatch: ifNoneMatchDeclares(),
  d1Session: d1SessionDeclares,
  conditionalRead: conditionalReadDeclares,
  handler: (operationId) => HANDLERS[operationId],
};

/** What each operation's stages declare, in the order they run. */
export const declarationsOf = (op: (typeof OPERATIONS)[number]) => stagesOf(op, DECLARATIONS);

/** What a page on another origin may send and read: all the stages declare. */
export const CORS = corsHeaders([
  requestContextDeclares(),
  methodsDeclares(),
  ...OPERATIONS.flatMap(declarationsOf),
]);

/** The stages around every answer, an operation's or not: the request id, then CORS. */
export const APP_DECLARATIONS = [requestContextDeclares(), corsDeclares(CORS)];
