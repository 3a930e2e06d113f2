// The outermost stage: the request id, the clock, one structured JSON log line per request,
// and work a request hands on past its answer.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Clock } from "../clock.ts";
import { isFault } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { AppEnv } from "./types.ts";

const RAY_ID = /^[A-Za-z0-9-]{1,64}$/;

export function requestIdFor(request: Request): string {
  const ray = request.headers.get("cf-ray");
  return ray && RAY_ID.test(ray) ? ray : crypto.randomUUID();
}

export const REQUEST_ID = "X-Request-Id";
/** The calling application, as a client names it (`@petstore/client`'s `appName`): logged. */
export const CLIENT_NAME = "X-Client-Name";

/** Every answer gets its request id; `answered` sees each answer once it is built. */
export function requestContext(log: Logger, clock: Clock, answered: (c: Context<AppEnv>) => void) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    const requestId = requestIdFor(c.req.raw);
    c.set("requestId", requestId);
    c.set("clock", clock);
    await next();
    c.res.headers.set(REQUEST_ID, requestId);
    answered(c);
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
