// The server's side of a WebAuthn ceremony (docs/platform.md, "Passkeys"): its challenge kept
// hashed and taken once, and a passkey's response checked against the stored passkey and account.
import type { Context } from "hono";
import { sha256Hex } from "../../src/encoding.ts";
import { CHALLENGE_TTL_SECONDS } from "./config.ts";
import type { Account } from "./db/accounts.ts";
import { findAccount } from "./db/accounts.ts";
import type { ChallengePurpose } from "./db/challenges.ts";
import { consumeChallenge, storeChallenge } from "./db/challenges.ts";
import type { Passkey } from "./db/passkeys.ts";
import { findPasskey, recordPasskeyUse } from "./db/passkeys.ts";
import { PlatformError } from "./errors.ts";
import { challengeHolder } from "./limits.ts";
import { nowOf } from "./time.ts";
import type { PlatformAppEnv } from "./types.ts";
import type { AuthenticationResponseJSON } from "./webauthn.ts";
import { accountIdOfUserHandle, challengeOf, verifyAuthentication } from "./webauthn.ts";

type C = Context<PlatformAppEnv>;

/**
 * Keeps a ceremony's challenge (hashed) with what its end needs, for 5 minutes, counted against its
 * holder.
 */
export async function issueChallenge(
  c: C,
  challenge: string,
  purpose: ChallengePurpose,
  pending: object,
) {
  await storeChallenge(
    c.env.DB,
    {
      hash: await sha256Hex(challenge),
      purpose,
      pending,
      expiresAt: nowOf(c) + CHALLENGE_TTL_SECONDS,
    },
    challengeHolder(c),
  );
}

/**
 * Takes the challenge that `response` answers out of the table, whatever happens next
 * (single use), and returns what its ceremony carried. A challenge that was never issued
 * for `purpose`, was used already, or is past its 5 minutes is invalid_challenge.
 */
export async function takeChallenge(
  c: C,
  response: { response: { clientDataJSON: string } },
  purpose: ChallengePurpose,
): Promise<{ challenge: string; pending: Record<string, unknown> }> {
  const challenge = challengeOf(response);
  const stored = await consumeChallenge(c.env.DB, await sha256Hex(challenge), purpose);
  if (!stored || stored.expiresAt <= nowOf(c)) {
    throw new PlatformError(
      "invalid_challenge",
      "This passkey request has expired or was already used; start again.",
    );
  }
  return { challenge, pending: (stored.pending ?? {}) as Record<string, unknown> };
}

/** A sign-in or confirmation with the passkey `response` names: its checked passkey. */
export async function checkedPasskey(
  c: C,
  response: AuthenticationResponseJSON,
  challenge: string,
): Promise<Passkey> {
  const passkey = await findPasskey(c.env.DB, response.id);
  if (!passkey) {
    throw new PlatformError(
      "unknown_passkey",
      "This passkey is not registered here: it may have been removed, or its account deleted. Use another passkey or a recovery code.",
    );
  }
  const handle = accountIdOfUserHandle(response.response.userHandle);
  if (handle !== undefined && handle !== passkey.accountId) {
    throw new PlatformError("sign_in_failed", "This passkey is not registered here.");
  }
  const counter = await verifyAuthentication(c.var.rp, response, challenge, passkey);
  if (!(await recordPasskeyUse(c.env.DB, passkey, counter, nowOf(c)))) {
    throw new PlatformError(
      "sign_in_failed",
      "This passkey was used at the same moment; try again.",
    );
  }
  return passkey;
}

/** The account a sign-in reaches, unless it is disabled (403) or gone. */
export async function accountToSignIn(c: C, accountId: string): Promise<Account> {
  const account = await findAccount(c.env.DB, accountId);
  if (!account) throw new PlatformError("sign_in_failed", "This passkey is not registered here.");
  if (account.disabledAt !== null) {
    throw new PlatformError("account_disabled", "This account has been disabled.");
  }
  return account;
}
