// CORS: browsers may call the API (no cookies are used, so `*` is a safe default), read every
// header the document names and send every one it reads; a preflight for a method the path
// lacks is granted too, so the page reads the 405 Error instead of a network error.
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./types.ts";

/** How long a browser may reuse a preflight response, in seconds. */
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

/** What a page on another origin may read and send (from the document, written at build time). */
export interface CorsHeaders {
  exposed: string[];
  allowed: string[];
}

/** Adds CORS headers to every response, errors included, so browsers can read them. */
export function cors({ exposed, allowed }: CorsHeaders) {
  const expose = exposed.join(", ");
  return createMiddleware<AppEnv>(async (c, next) => {
    await next();
    const origin = c.req.header("Origin");
    if (!origin) return;
    const allow = allowedOrigin(c.env.CORS_ALLOWED_ORIGINS, origin);
    const headers = c.res.headers;
    if (allow !== "*") headers.append("Vary", "Origin");
    if (!allow) return;
    headers.set("Access-Control-Allow-Origin", allow);
    headers.set("Access-Control-Expose-Headers", expose);
    const requested = c.req.header("Access-Control-Request-Method");
    if (c.req.method === "OPTIONS" && requested) {
      const methods = allowedMethods(headers.get("Allow"), requested.trim());
      if (methods) headers.set("Access-Control-Allow-Methods", methods);
      // The MCP server (src/mcp.ts) names its transport's headers itself.
      if (!headers.has("Access-Control-Allow-Headers")) {
        headers.set("Access-Control-Allow-Headers", allowed.join(", "));
      }
      headers.set("Access-Control-Max-Age", String(PREFLIGHT_MAX_AGE));
    }
  });
}
