// The platform's app factory, used by the worker and the tests alike: request ids and
// logs, security headers (a CSP that allows only this origin's files), the session, the
// JSON endpoints under /api, the pages, and the Error object for every JSON failure.
import type { Context } from "hono";
import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Clock } from "../../src/clock.ts";
import { systemClock } from "../../src/clock.ts";
import { methodsByPath, refuseMethod } from "../../src/http/methods.ts";
import { requestContext } from "../../src/http/request-context.ts";
import type { Logger } from "../../src/log.ts";
import { consoleLogger, faultLine } from "../../src/log.ts";
import { isPlatformFault, PlatformError, toPlatformError } from "./errors.ts";
import { API_ROUTES, SITE_ROUTES } from "./routes/index.ts";
import { loadSession } from "./session.ts";
import type { PlatformAppEnv } from "./types.ts";
import { relyingParty } from "./webauthn.ts";

/** The OAuth server's options. */
export interface OAuthOptions {
  /** How client metadata documents are fetched (the global fetch unless a test serves them). */
  fetch?: typeof fetch;
}

/** What the worker and the tests may set; every option has the production default. */
export interface PlatformAppOptions {
  /** The time of each request (default: the system's), so tests can move it past an expiry. */
  clock?: Clock;
  /** Where the request log and faults go (default: the console, as Workers Logs reads it). */
  log?: Logger;
  /** The OAuth server's options: how client metadata documents are fetched. */
  oauth?: OAuthOptions;
}

/**
 * The headers of every response: a Content-Security-Policy that allows only this origin's
 * files and no inline script or style, no framing by any page (clickjacking), and a Referer
 * only to this origin.
 */
const securityHeaders = secureHeaders({
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
});

/** The JSON endpoints; a known path with another method is 405 with Allow, any other 404. */
function apiRoutes() {
  const api = new Hono<PlatformAppEnv>();
  for (const routes of API_ROUTES) api.route("/", routes);
  for (const [path, methods] of methodsByPath(api.routes)) {
    api.all(path, refuseMethod(methods.join(", "), PlatformError));
  }
  api.all("*", (c) => {
    throw new PlatformError("not_found", `No such path: ${c.req.path}.`);
  });
  return api;
}

/**
 * The platform's app, for the worker and the tests alike: middleware (request id and log, no
 * cache, security headers, the session), the route table, and the Error object for every failure.
 */
export function createPlatformApp(options: PlatformAppOptions = {}) {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? consoleLogger;
  const clientFetch: typeof fetch = options.oauth?.fetch ?? ((input, init) => fetch(input, init));
  const app = new Hono<PlatformAppEnv>();

  // Everything here is about one person's account: no cache may keep it.
  const noStore = (c: Context) => c.res.headers.set("Cache-Control", "no-store");
  app.use(requestContext(log, clock, isPlatformFault, noStore), async (c, next) => {
    c.set("log", log);
    c.set("rp", relyingParty(c.env.PLATFORM_ORIGIN));
    c.set("clientFetch", clientFetch);
    await next();
  });
  app.use(securityHeaders);
  app.use(loadSession);

  app.route("/api", apiRoutes());
  for (const routes of SITE_ROUTES) app.route("/", routes);
  app.notFound(() => {
    throw new PlatformError("not_found", "No such path.");
  });

  app.onError((err, c) => {
    const error = toPlatformError(err);
    if (isPlatformFault(err)) log(faultLine(c.var.requestId, err));
    // The Error object, with what the request already set (a cleared session cookie).
    return c.body(JSON.stringify(error.body()), error.status as ContentfulStatusCode, {
      ...error.headers,
      "Content-Type": "application/json",
    });
  });
  return app;
}
