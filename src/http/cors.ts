// CORS: browsers may call the API. No cookies are used, so `*` is safe as the default.
// docs/api.md "Browsers and the docs page": a page on another origin reads every header the
// stages declare and sends every request header they read; a preflight for a method the
// path does not have is granted too, so the page reads the 405 Error (with Allow) instead
// of failing with a network error.
import { createMiddleware } from "hono/factory";
import type { Declaration } from "./stage.ts";
import type { AppEnv } from "./types.ts";

/** Response headers a page may read without their being exposed (Fetch: CORS-safelisted). */
const SAFELISTED = [
  "cache-control",
  "content-language",
  "content-length",
  "content-type",
  "expires",
  "last-modified",
  "pragma",
];

const byName = (a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase());

/**
 * What a page on another origin may send and read: every request header the stages read
 * and every response header they send (the CORS headers and safelisted ones aside).
 */
export function corsHeaders(declarations: Declaration[]): CorsHeaders {
  const sent = declarations.flatMap((d) => [
    ...(d.wraps ?? []),
    ...(d.answers ?? []),
    ...(d.notModified?.headers ?? []),
    ...(d.errors ?? []).flatMap((e) => e.headers ?? []),
  ]);
  const read = declarations.flatMap((d) => [
    ...(d.requestHeaders ?? []),
    ...(d.parameters ?? []).filter((p) => p.in === "header").map((p) => String(p.name)),
  ]);
  return {
    exposed: [...new Set(sent.map((use) => use.header.name))]
      .filter((n) => !SAFELISTED.includes(n.toLowerCase()) && !/^access-control-/i.test(n))
      .sort(byName),
    allowed: [...new Set(read)].sort(byName),
  };
}

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

/** What a page on another origin may read and send (`corsHeaders`, written at build time). */
export interface CorsHeaders {
  exposed: string[];
  allowed: string[];
}

/** Adds CORS headers to every answer, errors included, so browsers can read them. */
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
      headers.set("Access-Control-Allow-Headers", allowed.join(", "));
      headers.set("Access-Control-Max-Age", String(PREFLIGHT_MAX_AGE));
    }
  });
}

export function corsDeclares({ exposed }: CorsHeaders): Declaration {
  return {
    wraps: [
      {
        header: {
          name: "Access-Control-Allow-Origin",
          description:
            "CORS: on every response to a request with an `Origin` the service allows (`*` by default; else that origin, with `Vary: Origin`).",
          schema: { type: "string", minLength: 1 },
        },
      },
      {
        header: {
          name: "Access-Control-Expose-Headers",
          description:
            "CORS: the response headers a page on another origin may read, sent with `Access-Control-Allow-Origin`.",
          schema: { type: "string" },
        },
        value: exposed.join(", "),
      },
    ],
  };
}
