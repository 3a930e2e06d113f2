// Rate limits through the Workers rate-limiting bindings: per API key, and per owner of the
// key (its account, or an operator key's rotation chain), so a second key or a rotation does
// not reset the owner's budget (docs/keys.md).
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

/** 429 when the request's key, or its owner, is over its rate. */
export async function enforceRateLimit(c: Context<AppEnv>): Promise<void> {
  // Keyed by the key's id and owner, never the key; both counted in the location, side by side.
  const [key, owner] = await Promise.all([
    c.env.RATE_LIMITER.limit({ key: `key:${c.get("apiKeyId")}` }),
    c.env.ACCOUNT_RATE_LIMITER.limit({ key: `owner:${c.get("apiKeyOwner")}` }),
  ]);
  if (!key.success) throw rateLimited("This API key exceeded its request rate; retry later.");
  if (!owner.success) {
    throw rateLimited(
      "This API key's account (or, for a key without one, the key and its rotations) exceeded the request rate its keys share; retry later.",
    );
  }
}
