// The outermost middleware of the API and the platform: the request id, the clock, one structured
// JSON log line per request, and work a request hands on past its response.
import type { Context, Env, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import type { Clock } from "../clock.ts";
import { CLIENT_NAME_MAX_LENGTH } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";

const RAY_ID = /^[A-Za-z0-9-]{1,64}$/;

function requestIdFor(request: Request): string {
  const ray = request.headers.get("cf-ray");
  return ray && RAY_ID.test(ray) ? ray : crypto.randomUUID();
}

/**
 * The origin of a request's URL as the runtime serialized it (scheme, lowercase host, no
 * default port): all before the path's first slash, without parsing it again.
 */
export const originOf = (url: string) => url.slice(0, url.indexOf("/", url.indexOf("//") + 2));

export const REQUEST_ID = "X-Request-Id";
/** The calling application, as a client names it (`@petstore/client`'s `appName`): logged. */
export const CLIENT_NAME = "X-Client-Name";
/** What X-Client-Name may hold, CLIENT_NAME_MAX_LENGTH at most (the document's pattern). */
export const CLIENT_NAME_CHARACTERS = /^[ -~]*$/;

/**
 * An operation's middleware: an X-Client-Name the document refuses is 400 naming the header, so
 * the log holds every name as the client sent it, never one cut short or garbled.
 */
export const clientName = createMiddleware(async (c, next) => {
  const sent = c.req.header(CLIENT_NAME);
  if (sent !== undefined) {
    const problem =
      sent.length > CLIENT_NAME_MAX_LENGTH
        ? `must be at most ${CLIENT_NAME_MAX_LENGTH} characters`
        : CLIENT_NAME_CHARACTERS.test(sent)
          ? undefined
          : "must be printable ASCII (U+0020-U+007E)";
    if (problem) {
      throw new ApiError("invalid_parameter", `Header "${CLIENT_NAME}" ${problem}.`, {
        details: [{ field: CLIENT_NAME, message: problem }],
      });
    }
  }
  await next();
});

/** What the middleware sets for every request. */
export interface RequestEnv extends Env {
  Variables: { requestId: string; clock: Clock };
}

/**
 * Every response gets its request id and a log line, at error level when `isFault` says
 * what was thrown is a fault; `onResponse` sees each response once it is built.
 */
export function requestContext<E extends RequestEnv>(
  log: Logger,
  clock: Clock,
  isFault: (err: unknown) => boolean,
  onResponse?: (c: Context<E>) => void,
): MiddlewareHandler<E> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = requestIdFor(c.req.raw);
    c.set("requestId", requestId);
    c.set("clock", clock);
    await next();
    c.res.headers.set(REQUEST_ID, requestId);
    onResponse?.(c);
    log({
      level: isFault(c.error) ? "error" : "info",
      msg: "request",
      request_id: requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      client: c.req.header(CLIENT_NAME)?.slice(0, CLIENT_NAME_MAX_LENGTH),
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
    });
  };
}

/**
 * Hands `work` (which handles its own errors) to the request's waitUntil, so it runs past
 * the response; without an execution context (app.fetch called without one) it runs detached.
 */
export function waitUntil(c: Context, work: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(work);
  } catch {
    // No ExecutionContext: `work` is already running.
  }
}
