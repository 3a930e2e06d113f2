// CORS: browsers may call the API. No cookies are used, so `*` is safe as the default.
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./types.ts";

export const EXPOSED_HEADERS = [
  "Link",
  "Location",
  "Deprecation",
  "Sunset",
  "Retry-After",
  "Idempotent-Replayed",
  "X-Request-Id",
  "x-d1-bookmark",
] as const;

export const ALLOWED_REQUEST_HEADERS = [
  "Authorization",
  "Content-Type",
  "Idempotency-Key",
  "x-d1-bookmark",
] as const;

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
  if (c.req.method === "OPTIONS" && c.req.header("Access-Control-Request-Method")) {
    const allowMethods = headers.get("Allow");
    if (allowMethods) headers.set("Access-Control-Allow-Methods", allowMethods);
    headers.set("Access-Control-Allow-Headers", ALLOWED_REQUEST_HEADERS.join(", "));
    headers.set("Access-Control-Max-Age", "86400");
  }
});
