// The signed-in account, and its deletion, which one of its passkeys confirms (a session alone
// cannot: docs/platform.md, "Recovery").
import { Hono } from "hono";
import { checkedPasskey, issueChallenge, takeChallenge } from "../ceremonies.ts";
import { deleteAccount } from "../db/accounts.ts";
import { listPasskeys } from "../db/passkeys.ts";
import { countRecoveryCodes } from "../db/recovery-codes.ts";
import { PlatformError } from "../errors.ts";
import { bodyOf, stateChange } from "../request.ts";
import { accountJson, passkeyJson } from "../responses.ts";
import { DeleteAccountBody, EmptyBody } from "../schemas.ts";
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
