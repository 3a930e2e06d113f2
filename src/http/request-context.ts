// X-Request-Id on every answer and one structured JSON log line per request; work a
// request hands on past its answer.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { isFault } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Declaration } from "./stage.ts";
import type { AppEnv } from "./types.ts";

const RAY_ID = /^[A-Za-z0-9-]{1,64}$/;

export function requestIdFor(request: Request): string {
  const ray = request.headers.get("cf-ray");
  return ray && RAY_ID.test(ray) ? ray : crypto.randomUUID();
}

const REQUEST_ID = "X-Request-Id";
/** The calling application, as a client names it (`@petstore/client`'s `appName`): logged. */
const CLIENT_NAME = "X-Client-Name";

/** The outermost stage: every answer gets its request id, and a fault anywhere is a 500. */
export function requestContext(log: Logger) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    const requestId = requestIdFor(c.req.raw);
    c.set("requestId", requestId);
    await next();
    c.res.headers.set(REQUEST_ID, requestId);
    log({
      level: isFault(c.error) ? "error" : "info",
      msg: "request",
      request_id: requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      client: c.req.header(CLIENT_NAME)?.slice(0, 200),
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
    });
  });
}

export const requestContextDeclares = (): Declaration => ({
  requestHeaders: [CLIENT_NAME],
  wraps: [
    {
      header: {
        name: REQUEST_ID,
        description:
          "Identifies the request in the logs (the `cf-ray` value when present). On every response.",
        schema: { type: "string", minLength: 1 },
      },
      always: true,
    },
  ],
  errors: [{ code: "internal_error", anywhere: true }],
});

/**
 * Hands `work` (which handles its own errors) to the request's waitUntil, so it runs past
 * the answer; without an execution context (app.fetch called without one) it runs detached.
 */
export function waitUntil(c: Context, work: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(work);
  } catch {
    // No ExecutionContext: `work` is already running.
  }
}
