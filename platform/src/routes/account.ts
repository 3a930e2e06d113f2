// Accounts and passkeys: sign-up, sign-in (with a passkey or a recovery code), sign-out
// (here, one session, everywhere), the account, its passkeys (add, rename, remove), its
// recovery codes, and its deletion (docs/platform.md has the table of who may do what).

import type { Context } from "hono";
import { Hono } from "hono";
import { isoTime } from "../../../src/clock.ts";
import { sha256Hex } from "../../../src/encoding.ts";
import { CHALLENGE_TTL_SECONDS, MAX_PASSKEYS } from "../config.ts";
import type { Account } from "../db/accounts.ts";
import { createAccount, deleteAccount, findAccount } from "../db/accounts.ts";
import type { ChallengePurpose } from "../db/challenges.ts";
import { consumeChallenge, storeChallenge } from "../db/challenges.ts";
import type { Passkey } from "../db/passkeys.ts";
import {
  addPasskey,
  findPasskey,
  isUniqueViolation,
  listPasskeys,
  recordPasskeyUse,
  removePasskey,
  renamePasskey,
} from "../db/passkeys.ts";
import {
  countRecoveryCodes,
  replaceRecoveryCodes,
  takeRecoveryCode,
} from "../db/recovery-codes.ts";
import type { ListedSession } from "../db/sessions.ts";
import { endAccountSessions, endRecovery, endSessionById, listSessions } from "../db/sessions.ts";
import { authenticatorName, newPasskeyName } from "../devices.ts";
import { PlatformError } from "../errors.ts";
import { challengeHolder } from "../limits.ts";
import { newRecoveryCodes, normalRecoveryCode, recoveryCodeHash } from "../recovery.ts";
import { bodyOf, countAgainst, stateChange } from "../request.ts";
import {
  AuthenticationBody,
  DeleteAccountBody,
  EmptyBody,
  PasskeyNameBody,
  RecoveryCodeBody,
  RegistrationBody,
  SignUpOptionsBody,
} from "../schemas.ts";
import {
  clearSessionCookie,
  newSession,
  setSessionCookie,
  signedIn,
  signIn,
  signOut,
} from "../session.ts";
import { nowOf } from "../time.ts";
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
    name: p.name,
    authenticator: authenticatorName(p.aaguid),
    transports: p.transports,
    createdAt: isoTime(p.createdAt),
    lastUsedAt: isoTime(p.lastUsedAt),
  };
}

/** The JSON of a signed-in session; `current`: the one this request came with. */
export function sessionJson(s: ListedSession, currentId: string | undefined) {
  return {
    id: s.id,
    browser: s.browser,
    createdAt: isoTime(s.createdAt),
    lastSeenAt: isoTime(s.lastSeenAt),
    current: s.id === currentId,
  };
}

/** A sign-in or confirmation with the passkey `response` names: its checked passkey. */
async function checkedPasskey(
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
async function accountToSignIn(c: C, accountId: string): Promise<Account> {
  const account = await findAccount(c.env.DB, accountId);
  if (!account) throw new PlatformError("sign_in_failed", "This passkey is not registered here.");
  if (account.disabledAt !== null) {
    throw new PlatformError("account_disabled", "This account has been disabled.");
  }
  return account;
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
      {
        ...passkey,
        accountId: account.id,
        createdAt: account.createdAt,
        name: newPasskeyName(passkey.aaguid, []),
      },
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
    const { challenge, pending } = await takeChallenge(c, response, "sign-in");
    if (pending.accountId !== undefined) {
      throw new PlatformError(
        "invalid_challenge",
        "This passkey request was made to confirm an action, not to sign in; start again.",
      );
    }
    const passkey = await checkedPasskey(c, response, challenge);
    const account = await accountToSignIn(c, passkey.accountId);
    await signIn(c, account.id);
    return c.json(accountJson(account));
  } catch (err) {
    if (err instanceof PlatformError)
      await countAgainst(c, c.env.SIGN_IN_LIMITER, "sign-in attempts");
    throw err;
  }
});

// A recovery code signs in once (every attempt counted per client address); the session
// it makes asks for a new passkey until one is added.
accountRoutes.post("/sign-in/recovery", stateChange, async (c) => {
  const { code } = bodyOf(c, RecoveryCodeBody);
  await countAgainst(c, c.env.SIGN_IN_LIMITER, "sign-in attempts");
  if (normalRecoveryCode(code) === null) {
    throw new PlatformError(
      "validation_failed",
      "A recovery code has 16 letters and digits, such as 7KQ4-M2ZD-9XWB-H3TR.",
      {
        details: [
          {
            field: "code",
            message: "must have 16 letters and digits, such as 7KQ4-M2ZD-9XWB-H3TR",
          },
        ],
      },
    );
  }
  const accountId = await takeRecoveryCode(c.env.DB, await recoveryCodeHash(code));
  if (!accountId) {
    throw new PlatformError(
      "sign_in_failed",
      "This recovery code is not valid, or it has been used. Check it, or use another one.",
      { details: [{ field: "code", message: "is not valid, or it has been used" }] },
    );
  }
  const account = await accountToSignIn(c, accountId);
  await signIn(c, account.id, true);
  return c.json({
    ...accountJson(account),
    recoveryCodesLeft: await countRecoveryCodes(c.env.DB, account.id),
  });
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
  const [passkeys, recoveryCodesLeft] = await Promise.all([
    listPasskeys(c.env.DB, account.id),
    countRecoveryCodes(c.env.DB, account.id),
  ]);
  return c.json({
    ...accountJson(account),
    passkeys: passkeys.map(passkeyJson),
    recoveryCodesLeft,
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
  const taken = (await listPasskeys(c.env.DB, account.id)).map((p) => p.name);
  const passkey = {
    ...verified,
    accountId: account.id,
    createdAt: nowOf(c),
    name: newPasskeyName(verified.aaguid, taken),
  };
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
  await endRecovery(c.env.DB, account.id);
  return c.json(passkeyJson({ ...passkey, lastUsedAt: null }), 201);
});

accountRoutes.post("/passkeys/:id/name", stateChange, async (c) => {
  const account = signedIn(c);
  const { name } = bodyOf(c, PasskeyNameBody);
  const passkey = await renamePasskey(c.env.DB, account.id, c.req.param("id"), name);
  if (!passkey) throw new PlatformError("not_found", "No such passkey.");
  return c.json(passkeyJson(passkey));
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

// ---- the account's sessions, each ended on its own
accountRoutes.get("/sessions", async (c) => {
  const account = signedIn(c);
  const sessions = await listSessions(c.env.DB, account.id, nowOf(c));
  return c.json(sessions.map((s) => sessionJson(s, c.var.session?.id)));
});

accountRoutes.post("/sessions/:id/end", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  const id = c.req.param("id");
  if (!(await endSessionById(c.env.DB, account.id, id))) {
    throw new PlatformError("not_found", "No such session.");
  }
  if (id === c.var.session?.id) clearSessionCookie(c);
  return c.body(null, 204);
});

// ---- recovery codes: new ones replace the old, shown in this answer only
accountRoutes.post("/recovery-codes", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(
    c.env.DB,
    account.id,
    await Promise.all(codes.map(recoveryCodeHash)),
    nowOf(c),
  );
  return c.json({ codes }, 201);
});

// ---- deletion, confirmed with one of the account's passkeys (a session alone cannot)
accountRoutes.post("/account/delete/options", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  const options = await authenticationOptions(c.var.rp, await listPasskeys(c.env.DB, account.id));
  await issueChallenge(c, options.challenge, "sign-in", {
    accountId: account.id,
    action: "delete-account",
  });
  return c.json(options);
});

accountRoutes.post("/account/delete", stateChange, async (c) => {
  const account = signedIn(c);
  const response = bodyOf(c, DeleteAccountBody).passkey as AuthenticationResponseJSON;
  const { challenge, pending } = await takeChallenge(c, response, "sign-in");
  if (pending.accountId !== account.id || pending.action !== "delete-account") {
    throw new PlatformError(
      "invalid_challenge",
      "This passkey request was not made to delete this account; start again.",
    );
  }
  const passkey = await checkedPasskey(c, response, challenge);
  if (passkey.accountId !== account.id) {
    throw new PlatformError(
      "sign_in_failed",
      "Confirm with a passkey of this account, not another one.",
    );
  }
  await deleteAccount(c.env.DB, account.id, nowOf(c));
  clearSessionCookie(c);
  return c.body(null, 204);
});
