// Accounts and passkeys: sign-up, sign-in (with a passkey or a recovery code), sign-out
// (here, one session, everywhere), the account, its passkeys (add, rename, remove), its
// recovery codes, and its deletion (docs/platform.md has the table of who may do what).

import { Hono } from "hono";
import { accountToSignIn, checkedPasskey, issueChallenge, takeChallenge } from "../ceremonies.ts";
import { MAX_PASSKEYS } from "../config.ts";
import { createAccount, deleteAccount } from "../db/accounts.ts";
import {
  addPasskey,
  isUniqueViolation,
  listPasskeys,
  removePasskey,
  renamePasskey,
} from "../db/passkeys.ts";
import {
  countRecoveryCodes,
  replaceRecoveryCodes,
  takeRecoveryCode,
} from "../db/recovery-codes.ts";
import { endAccountSessions, endRecovery, endSessionById, listSessions } from "../db/sessions.ts";
import { newPasskeyName } from "../devices.ts";
import { PlatformError } from "../errors.ts";
import { newRecoveryCodes, normalRecoveryCode, recoveryCodeHash } from "../recovery.ts";
import { bodyOf, countAgainst, stateChange } from "../request.ts";
import { accountJson, passkeyJson, sessionJson } from "../responses.ts";
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
  authenticationOptions,
  randomId,
  registrationOptions,
  verifyRegistration,
} from "../webauthn.ts";

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
