// Sign-in with any passkey of this site, or with a recovery code; every attempt and failure
// counts against the client address's sign-in limit.
import { Hono } from "hono";
import { accountToSignIn, checkedPasskey, issueChallenge, takeChallenge } from "../ceremonies.ts";
import { countRecoveryCodes, takeRecoveryCode } from "../db/recovery-codes.ts";
import { PlatformError } from "../errors.ts";
import { normalRecoveryCode, recoveryCodeHash } from "../recovery.ts";
import { bodyOf, countAgainst, stateChange } from "../request.ts";
import { accountJson } from "../responses.ts";
import { AuthenticationBody, EmptyBody, RecoveryCodeBody } from "../schemas.ts";
import { signIn } from "../session.ts";
import type { PlatformAppEnv } from "../types.ts";
import type { AuthenticationResponseJSON } from "../webauthn.ts";
import { authenticationOptions } from "../webauthn.ts";

/** Under /api (routes/index.ts): every change passes `stateChange` (request.ts) first. */
export const signInRoutes = new Hono<PlatformAppEnv>();

signInRoutes.post("/sign-in/options", stateChange, async (c) => {
  bodyOf(c, EmptyBody);
  await countAgainst(c, c.env.SIGN_IN_LIMITER, "sign-in attempts");
  const options = await authenticationOptions(c.var.rp);
  await issueChallenge(c, options.challenge, "sign-in", {});
  return c.json(options);
});

signInRoutes.post("/sign-in", stateChange, async (c) => {
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
signInRoutes.post("/sign-in/recovery", stateChange, async (c) => {
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
