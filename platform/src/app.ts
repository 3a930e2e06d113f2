// The platform's app factory, used by the worker and the tests alike: request ids and
// logs, security headers (a CSP that allows only this origin's files), the session, the
// JSON endpoints under /api, the pages, and the Error object for every JSON failure.
import type { Handler } from "hono";
import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Clock } from "../../src/clock.ts";
import { systemClock } from "../../src/clock.ts";
import { requestIdFor } from "../../src/http/request-context.ts";
import type { Logger } from "../../src/log.ts";
import { consoleLogger, errorText } from "../../src/log.ts";
import { isPlatformFault, PlatformError, toPlatformError } from "./errors.ts";
import { type OAuthOptions, oauthRoutes } from "./oauth/routes.ts";
import { pageRoutes } from "./pages/routes.ts";
import { accountRoutes } from "./routes/account.ts";
import { keyRoutes } from "./routes/keys.ts";
import { loadSession } from "./session.ts";
import type { PlatformAppEnv } from "./types.ts";
import { relyingParty } from "./webauthn.ts";

export interface PlatformAppOptions {
  clock?: Clock;
  log?: Logger;
  /** The OAuth server's options: how client metadata documents are fetched. */
  oauth?: OAuthOptions;
}

export function createPlatformApp(options: PlatformAppOptions = {}) {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? consoleLogger;
  const app = new Hono<PlatformAppEnv>();

  app.use(async (c, next) => {
    const started = performance.now();
    c.set("requestId", requestIdFor(c.req.raw));
    c.set("clock", clock);
    c.set("log", log);
    c.set("rp", relyingParty(c.env.PLATFORM_ORIGIN));
    await next();
    c.res.headers.set("X-Request-Id", c.var.requestId);
    // Everything here is about one person's account: no cache may keep it.
    c.res.headers.set("Cache-Control", "no-store");
    log({
      level: isPlatformFault(c.error) ? "error" : "info",
      msg: "request",
      request_id: c.var.requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
    });
  });
  app.use(
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
      referrerPolicy: "same-origin",
    }),
  );
  app.use(loadSession);

  const oauth = oauthRoutes(options.oauth);
  const api = new Hono<PlatformAppEnv>();
  api.route("/", oauth.api);
  api.route("/", accountRoutes);
  api.route("/", keyRoutes);
  // A known path with another method: 405 with Allow; any other path: 404 (both JSON).
  const allowed = new Map<string, Set<string>>();
  for (const { path, method } of api.routes) {
    const methods = allowed.get(path) ?? new Set<string>();
    for (const m of method === "GET" ? ["GET", "HEAD"] : [method]) methods.add(m);
    allowed.set(path, methods);
  }
  for (const [path, methods] of allowed) {
    const allow = [...methods].join(", ");
    const refuse: Handler<PlatformAppEnv> = (c) => {
      throw new PlatformError(
        "method_not_allowed",
        `Method ${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow}.`,
        { headers: { Allow: allow } },
      );
    };
    api.all(path, refuse);
  }
  api.all("*", (c) => {
    throw new PlatformError("not_found", `No such path: ${c.req.path}.`);
  });
  app.route("/api", api);
  app.route("/", oauth.routes);
  app.route("/", pageRoutes);
  app.notFound(() => {
    throw new PlatformError("not_found", "No such path.");
  });

  app.onError((err, c) => {
    const error = toPlatformError(err);
    if (isPlatformFault(err)) {
      log({
        level: "error",
        msg: "unhandled error",
        request_id: c.var.requestId,
        error: errorText(err),
      });
    }
    // The Error object, with what the request already set (a cleared session cookie).
    return c.body(JSON.stringify(error.body()), error.status as ContentfulStatusCode, {
      ...error.headers,
      "Content-Type": "application/json",
    });
  });
  return app;
}
