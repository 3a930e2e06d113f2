// The platform's limits beyond the rate-limit bindings (docs/platform.md, "Limits"): keys
// made per account and per client address per hour, and what a WebAuthn challenge counts against.
import type { Context } from "hono";
import { MAX_KEY_CHANGES_PER_HOUR, OPEN_CHALLENGES } from "./config.ts";
import { nextKeyChangeAt } from "./db/keys.ts";
import { PlatformError } from "./errors.ts";
import { clientAddress } from "./request.ts";
import { nowOf } from "./time.ts";
import type { PlatformAppEnv } from "./types.ts";

type C = Context<PlatformAppEnv>;

/**
 * 429 with Retry-After when the account, or the client address it makes keys from, made its keys
 * of the hour; null when that is not why.
 */
export async function keyChangesLimited(
  c: C,
  accountId: string,
  createdFrom: string | null = clientAddress(c),
): Promise<PlatformError | null> {
  const now = nowOf(c);
  const next = await nextKeyChangeAt(c.env.DB, accountId, createdFrom, now);
  if (next === null) return null;
  const seconds = Math.max(1, next.at - now);
  const minutes = Math.ceil(seconds / 60);
  return new PlatformError(
    "rate_limited",
    next.by === "account"
      ? `An account may create or rotate ${MAX_KEY_CHANGES_PER_HOUR} keys an hour; the next one in ${minutes} min.`
      : `Keys made from this address (an IPv6 one counts by its /64), in any account, a deleted one too, are ${MAX_KEY_CHANGES_PER_HOUR} an hour at most; the next one in ${minutes} min.`,
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
