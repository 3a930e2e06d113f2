// Per-key rate limit through the Workers rate-limiting binding ([[ratelimits]]).
import type { Context } from "hono";
import { RATE_LIMIT_RETRY_AFTER_SECONDS } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./types.ts";

/** 429 with `Retry-After`: for a key over its rate, or an address over its invalid keys. */
export function rateLimited(message: string): ApiError {
  return new ApiError("rate_limited", message, {
    headers: { "Retry-After": String(RATE_LIMIT_RETRY_AFTER_SECONDS) },
  });
}

/** 429 when the request's key is over its rate. */
export async function enforceRateLimit(c: Context<AppEnv>): Promise<void> {
  // Keyed by the API key's id, never by the key itself.
  const { success } = await c.env.RATE_LIMITER.limit({ key: `key:${c.var.apiKeyId}` });
  if (!success) throw rateLimited("This API key exceeded its request rate; retry later.");
}
