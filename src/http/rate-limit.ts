// Per-key rate limit through the Workers rate-limiting binding ([[ratelimits]]).
import { createMiddleware } from "hono/factory";
import { RATE_LIMIT_RETRY_AFTER_SECONDS } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./types.ts";

export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  // Keyed by the API key's id, never by the key itself.
  const { success } = await c.env.RATE_LIMITER.limit({ key: `key:${c.var.apiKeyId}` });
  if (!success) {
    throw new ApiError("rate_limited", "This API key exceeded its request rate; retry later.", {
      headers: { "Retry-After": String(RATE_LIMIT_RETRY_AFTER_SECONDS) },
    });
  }
  await next();
});
