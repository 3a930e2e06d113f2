// CORS: browsers may call the API. No cookies are used, so `*` is safe as the default.
// docs/api.md "Browsers and the docs page": a page on another origin reads every header the
// contract names and sends every request header it defines; a preflight for a method
// the path does not have is granted too, so the page reads the 405 Error (with Allow)
// instead of failing with a network error.
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./types.ts";

/**
 * Every response header of the contract that is not CORS-safelisted (Cache-Control
 * and Content-Type are readable anyway). The OpenAPI document publishes this list as
 * the value of Access-Control-Expose-Headers.
 */
export const EXPOSED_HEADERS = [
  "Link",
  "Location",
  "Deprecation",
  "Sunset",
  "Retry-After",
  "Idempotent-Replayed",
  "X-Request-Id",
  "x-d1-bookmark",
  "WWW-Authenticate",
  "Allow",
  "ETag",
] as const;

export const ALLOWED_REQUEST_HEADERS = [
  "Authorization",
  "Content-Type",
  "Idempotency-Key",
  "If-None-Match",
  "x-d1-bookmark",
] as const;

/** How long a browser may reuse a preflight answer, in seconds. */
export const PREFLIGHT_MAX_AGE = 86400;

/** An HTTP method is a token (RFC 9110 section 9.1). */
const METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The methods a preflight grants: the path's own (its Allow header) and the one the
 * browser asks about, so that a method the path lacks reaches the 405 Error.
 */
function allowedMethods(allow: string | null, requested: string): string | undefined {
  const methods = (allow ?? "")
    .split(",")
    .map((m) => m.trim())
    .filter(Boolean);
  if (METHOD_TOKEN.test(requested) && !methods.includes(requested)) methods.push(requested);
  return methods.length > 0 ? methods.join(", ") : undefined;
}

function allowedOrigin(setting: string | undefined, origin: string): string | undefined {
  const allowed = (setting ?? "*")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (allowed.includes("*")) return "*";
  return allowed.includes(origin) ? origin : undefined;
}

/** Adds CORS headers to every answer, errors included, so browsers can read them. */
export const cors = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const origin = c.req.header("Origin");
  if (!origin) return;
  const allow = allowedOrigin(c.env.CORS_ALLOWED_ORIGINS, origin);
  const headers = c.res.headers;
  if (allow !== "*") headers.append("Vary", "Origin");
  if (!allow) return;
  headers.set("Access-Control-Allow-Origin", allow);
  headers.set("Access-Control-Expose-Headers", EXPOSED_HEADERS.join(", "));
  const requested = c.req.header("Access-Control-Request-Method");
  if (c.req.method === "OPTIONS" && requested) {
    const methods = allowedMethods(headers.get("Allow"), requested.trim());
    if (methods) headers.set("Access-Control-Allow-Methods", methods);
    headers.set("Access-Control-Allow-Headers", ALLOWED_REQUEST_HEADERS.join(", "));
    headers.set("Access-Control-Max-Age", String(PREFLIGHT_MAX_AGE));
  }
});
