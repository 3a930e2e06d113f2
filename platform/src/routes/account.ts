// Accounts and passkeys: sign-up, sign-in, sign-out (here and everywhere), the account,
// adding and removing passkeys (docs/platform.md has the table of who may do what).

import type { Context } from "hono";
import { Hono } from "hono";
import { sha256Hex } from "../../../src/encoding.ts";
import { CHALLENGE_TTL_SECONDS, MAX_PASSKEYS } from "../config.ts";
import type { Account, ChallengePurpose, Passkey } from "../db/accounts.ts";
import {
  addPasskey,
  consumeChallenge,
  createAccount,
  endAccountSessions,
  findAccount,
  findPasskey,
  isUniqueViolation,
  listPasskeys,
  recordPasskeyUse,
  removePasskey,
  storeChallenge,
} from "../db/accounts.ts";
import { PlatformError } from "../errors.ts";
import { challengeHolder } from "../limits.ts";
import { bodyOf, countAgainst, stateChange } from "../request.ts";
import { AuthenticationBody, EmptyBody, RegistrationBody, SignUpOptionsBody } from "../schemas.ts";
import {
  clearSessionCookie,
  newSession,
  setSessionCookie,
  signedIn,
  signIn,
  signOut,
} from "../session.ts";
import { isoTime, nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "../webauthn.ts";
import {
  accountIdOfUserHandle,
  authenticationOptions,
  challengeOf,
  randomId,
  registrationOptions,
  verifyAuthentication,
  verifyRegistration,
} from "../webauthn.ts";

type C = Context<PlatformAppEnv>;

/** Keeps a ceremony's challenge (hashed) with what its end needs, for 5 minutes, counted against its holder. */
async function issueChallenge(c: C, challenge: string, purpose: ChallengePurpose, pending: object) {
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
 * (single use), and answers what its ceremony carried. A challenge that was never issued
 * for `purpose`, was used already, or is past its 5 minutes is invalid_challenge.
 */
async function takeChallenge(
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

/** The JSON of an account. */
export function accountJson(a: Pick<Account, "id" | "displayName" | "createdAt">) {
  return { id: a.id, displayName: a.displayName, createdAt: isoTime(a.createdAt) };
}

/** The JSON of a passkey: never its public key. */
export function passkeyJson(p: Passkey) {
  return {
    id: p.credentialId,
    transports: p.transports,
    createdAt: isoTime(p.createdAt),
    lastUsedAt: isoTime(p.lastUsedAt),
  };
}

export const accountRoutes = new Hono<PlatformAppEnv>();

// ---- sign-up: options (counted per client address), then the new passkey
accountRoutes.post("/sign-up/options", stateChange, async (c) => {
  const { displayName } = bodyOf(c, SignUpOptionsBody);
  await countAgainst(c, c.env.SIGN_UP_LIMITER, "sign-ups");
  const accountId = randomId("acct_");
  const options = await registrationOptions(c.var.rp, { accountId, displayName });
  await issueChallenge(c, options.challenge, "sign-up", { accountId, displayName });
  return c.json(options);
});

accountRoutes.post("/sign-up", stateChange, async (c) => {
  const response = bodyOf(c, RegistrationBody) as RegistrationResponseJSON;
  const { challenge, pending } = await takeChallenge(c, response, "sign-up");
  const passkey = await verifyRegistration(c.var.rp, response, challenge);
  const account = {
    id: String(pending.accountId),
    displayName: String(pending.displayName),
    createdAt: nowOf(c),
  };
  const { token, session, replaced } = await newSession(c, account.id);
  try {
    await createAccount(
      c.env.DB,
      account,
      { ...passkey, accountId: account.id, createdAt: account.createdAt },
      session,
      replaced,
    );
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new PlatformError(
        "passkey_exists",
        "This passkey is already registered; sign in with it.",
      );
    }
    throw err;
  }
  setSessionCookie(c, token);
  return c.json(accountJson(account), 201);
});

// ---- sign-in with any passkey of this site; attempts and failures counted per client address
accountRoutes.post("/sign-in/options", stateChange, async (c) => {
  bodyOf(c, EmptyBody);
  await countAgainst(c, c.env.SIGN_IN_LIMITER, "sign-in attempts");
  const options = await authenticationOptions(c.var.rp);
  await issueChallenge(c, options.challenge, "sign-in", {});
  return c.json(options);
});

accountRoutes.post("/sign-in", stateChange, async (c) => {
  const response = bodyOf(c, AuthenticationBody) as AuthenticationResponseJSON;
  try {
    const { challenge } = await takeChallenge(c, response, "sign-in");
    const passkey = await findPasskey(c.env.DB, response.id);
    const handle = accountIdOfUserHandle(response.response.userHandle);
    if (!passkey || (handle !== undefined && handle !== passkey.accountId)) {
      throw new PlatformError("sign_in_failed", "This passkey is not registered here.");
    }
    const counter = await verifyAuthentication(c.var.rp, response, challenge, passkey);
    const account = await findAccount(c.env.DB, passkey.accountId);
    if (!account) throw new PlatformError("sign_in_failed", "This passkey is not registered here.");
    if (account.disabledAt !== null) {
      throw new PlatformError("account_disabled", "This account has been disabled.");
    }
    if (!(await recordPasskeyUse(c.env.DB, passkey, counter, nowOf(c)))) {
      throw new PlatformError(
        "sign_in_failed",
        "This passkey was used at the same moment; try again.",
      );
    }
    await signIn(c, account.id);
    return c.json(accountJson(account));
  } catch (err) {
    if (err instanceof PlatformError)
      await countAgainst(c, c.env.SIGN_IN_LIMITER, "sign-in attempts");
    throw err;
  }
});

// ---- sign-out
accountRoutes.post("/sign-out", stateChange, async (c) => {
  bodyOf(c, EmptyBody);
  await signOut(c);
  return c.body(null, 204);
});

accountRoutes.post("/sign-out-everywhere", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  await endAccountSessions(c.env.DB, account.id);
  clearSessionCookie(c);
  return c.body(null, 204);
});

// ---- the account and its passkeys
accountRoutes.get("/account", async (c) => {
  const account = signedIn(c);
  return c.json({
    ...accountJson(account),
    passkeys: (await listPasskeys(c.env.DB, account.id)).map(passkeyJson),
  });
});

accountRoutes.post("/passkeys/options", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  const options = await registrationOptions(
    c.var.rp,
    { accountId: account.id, displayName: account.displayName },
    await listPasskeys(c.env.DB, account.id),
  );
  await issueChallenge(c, options.challenge, "add-passkey", { accountId: account.id });
  return c.json(options);
});

accountRoutes.post("/passkeys", stateChange, async (c) => {
  const account = signedIn(c);
  const response = bodyOf(c, RegistrationBody) as RegistrationResponseJSON;
  const { challenge, pending } = await takeChallenge(c, response, "add-passkey");
  if (pending.accountId !== account.id) {
    throw new PlatformError(
      "invalid_challenge",
      "This passkey request was made for another session; start again.",
    );
  }
  const verified = await verifyRegistration(c.var.rp, response, challenge);
  const passkey = { ...verified, accountId: account.id, createdAt: nowOf(c) };
  let added: boolean;
  try {
    added = await addPasskey(c.env.DB, passkey);
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new PlatformError("passkey_exists", "This passkey is already registered.");
    }
    throw err;
  }
  if (!added) {
    throw new PlatformError(
      "passkey_limit_reached",
      `An account may have ${MAX_PASSKEYS} passkeys; remove one before adding another.`,
    );
  }
  return c.json(passkeyJson({ ...passkey, lastUsedAt: null }), 201);
});

accountRoutes.delete("/passkeys/:id", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  const outcome = await removePasskey(c.env.DB, account.id, c.req.param("id"));
  if (outcome === "none") throw new PlatformError("not_found", "No such passkey.");
  if (outcome === "last") {
    throw new PlatformError(
      "last_passkey",
      "This is the account's only passkey: add another before removing it.",
    );
  }
  return c.body(null, 204);
});
