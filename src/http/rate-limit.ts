// Per-key rate limit through the Workers rate-limiting binding ([[ratelimits]]).
import { createMiddleware } from "hono/factory";
import { RATE_LIMIT_RETRY_AFTER_SECONDS } from "../config.ts";
import { ApiError, RETRY_AFTER } from "../errors.ts";
import type { Declaration, ErrorUse } from "./stage.ts";
import type { AppEnv } from "./types.ts";

/** 429 with `Retry-After`: for a key over its rate, or an address over its invalid keys. */
export const RATE_LIMITED: ErrorUse = {
  code: "rate_limited",
  headers: [{ header: RETRY_AFTER, always: true }],
};

export function rateLimited(message: string): ApiError {
  return new ApiError("rate_limited", message, {
    headers: { "Retry-After": String(RATE_LIMIT_RETRY_AFTER_SECONDS) },
  });
}

export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  // Keyed by the API key's id, never by the key itself.
  const { success } = await c.env.RATE_LIMITER.limit({ key: `key:${c.var.apiKeyId}` });
  if (!success) throw rateLimited("This API key exceeded its request rate; retry later.");
  await next();
});

export const rateLimitDeclares = (): Declaration => ({ errors: [RATE_LIMITED] });
