// Sign-up (docs/platform.md, "Pages"): options for a new account's first passkey (counted per
// client address), then the passkey, which makes the account and signs it in.
import { Hono } from "hono";
import { issueChallenge, takeChallenge } from "../ceremonies.ts";
import { createAccount } from "../db/accounts.ts";
import { isUniqueViolation } from "../db/passkeys.ts";
import { newPasskeyName } from "../devices.ts";
import { PlatformError } from "../errors.ts";
import { bodyOf, countAgainst, stateChange } from "../request.ts";
import { accountJson } from "../responses.ts";
import { RegistrationBody, SignUpOptionsBody } from "../schemas.ts";
import { newSession, setSessionCookie } from "../session.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";
import type { RegistrationResponseJSON } from "../webauthn.ts";
import { randomId, registrationOptions, verifyRegistration } from "../webauthn.ts";

/** Under /api (routes/index.ts): every change passes `stateChange` (request.ts) first. */
export const signUpRoutes = new Hono<PlatformAppEnv>();

signUpRoutes.post("/sign-up/options", stateChange, async (c) => {
  const { displayName } = bodyOf(c, SignUpOptionsBody);
  await countAgainst(c, c.env.SIGN_UP_LIMITER, "sign-ups");
  const accountId = randomId("acct_");
  const options = await registrationOptions(c.var.rp, { accountId, displayName });
  await issueChallenge(c, options.challenge, "sign-up", { accountId, displayName });
  return c.json(options);
});

signUpRoutes.post("/sign-up", stateChange, async (c) => {
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
