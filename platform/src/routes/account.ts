// The signed-in account; securing it after a recovery (lost passkeys removed, the other sessions
// ended, in one step); and its deletion, which one of its passkeys confirms (a session alone
// cannot: docs/platform.md, "Recovery").
import { Hono } from "hono";
import { checkedPasskey, issueChallenge, takeChallenge } from "../ceremonies.ts";
import { deleteAccount, secureAccount } from "../db/accounts.ts";
import { listPasskeys } from "../db/passkeys.ts";
import { countRecoveryCodes } from "../db/recovery-codes.ts";
import { PlatformError } from "../errors.ts";
import { bodyOf, stateChange } from "../request.ts";
import { accountJson, passkeyJson } from "../responses.ts";
import { DeleteAccountBody, EmptyBody, SecureAccountBody } from "../schemas.ts";
import { clearSessionCookie, signedIn } from "../session.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";
import type { AuthenticationResponseJSON } from "../webauthn.ts";
import { authenticationOptions } from "../webauthn.ts";

/** Under /api (routes/index.ts): every change passes `stateChange` (request.ts) first. */
export const accountRoutes = new Hono<PlatformAppEnv>();

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

// A recovery session asks for a passkey made on its device first: until then a code is the only
// way back in, so removing the lost passkeys could lock the holder out.
accountRoutes.post("/account/secure", stateChange, async (c) => {
  const account = signedIn(c);
  const session = c.var.session as NonNullable<typeof c.var.session>;
  const body = bodyOf(c, SecureAccountBody);
  const passkeys = await listPasskeys(c.env.DB, account.id);
  if (session.recovery && !passkeys.some((p) => p.createdAt >= session.createdAt)) {
    throw new PlatformError(
      "passkey_required",
      "Add a passkey on this device first: until then, a recovery code is your only way back in.",
    );
  }
  const ids = new Set(passkeys.map((p) => p.credentialId));
  if (body.removePasskeys.some((id) => !ids.has(id))) {
    throw new PlatformError("not_found", "No such passkey.");
  }
  if (passkeys.every((p) => body.removePasskeys.includes(p.credentialId))) {
    throw new PlatformError(
      "last_passkey",
      "This would remove every passkey of the account: keep one, or add another first.",
    );
  }
  return c.json(
    await secureAccount(c.env.DB, {
      accountId: account.id,
      sessionId: session.id,
      removePasskeys: body.removePasskeys,
      endOtherSessions: body.endOtherSessions,
    }),
  );
});

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
