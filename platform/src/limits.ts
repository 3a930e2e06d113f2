// The platform's limits beyond the rate-limit bindings (docs/platform.md, "Limits"): keys
// made per account per hour, and what a WebAuthn challenge counts against.
import type { Context } from "hono";
import { MAX_KEY_CHANGES_PER_HOUR, OPEN_CHALLENGES } from "./config.ts";
import { nextKeyChangeAt } from "./db/keys.ts";
import { PlatformError } from "./errors.ts";
import { clientAddress } from "./request.ts";
import { nowOf } from "./time.ts";
import type { PlatformAppEnv } from "./types.ts";

type C = Context<PlatformAppEnv>;

/** 429 with Retry-After when the account made its keys of the hour; null when that is not why. */
export async function keyChangesLimited(c: C, accountId: string): Promise<PlatformError | null> {
  const now = nowOf(c);
  const at = await nextKeyChangeAt(c.env.DB, accountId, now);
  if (at === null) return null;
  const seconds = Math.max(1, at - now);
  return new PlatformError(
    "rate_limited",
    `An account may create or rotate ${MAX_KEY_CHANGES_PER_HOUR} keys an hour; the next one in ${Math.ceil(seconds / 60)} min.`,
    { headers: { "Retry-After": String(seconds) } },
  );
}

/**
 * What a new challenge counts against: the signed-in session, else the client address
 * (an IPv6 one by its /64). Each holds a few open challenges; a new one ends the oldest.
 */
export function challengeHolder(c: C) {
  const now = nowOf(c);
  const { session } = c.var;
  return session
    ? { id: `session:${session.id}`, keepOpen: OPEN_CHALLENGES.session, now }
    : { id: `address:${clientAddress(c)}`, keepOpen: OPEN_CHALLENGES.address, now };
}
