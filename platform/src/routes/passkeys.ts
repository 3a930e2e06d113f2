// The account's passkeys: add one (a registration ceremony), rename one, remove one (never the
// last).
import { Hono } from "hono";
import { issueChallenge, takeChallenge } from "../ceremonies.ts";
import { MAX_PASSKEYS } from "../config.ts";
import {
  addPasskey,
  isUniqueViolation,
  listPasskeys,
  removePasskey,
  renamePasskey,
} from "../db/passkeys.ts";
import { newPasskeyName } from "../devices.ts";
import { PlatformError } from "../errors.ts";
import { bodyOf, stateChange } from "../request.ts";
import { passkeyJson } from "../responses.ts";
import { EmptyBody, PasskeyNameBody, RegistrationBody } from "../schemas.ts";
import { signedIn } from "../session.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";
import type { RegistrationResponseJSON } from "../webauthn.ts";
import { registrationOptions, verifyRegistration } from "../webauthn.ts";

/** Under /api (routes/index.ts): every change passes `stateChange` (request.ts) first. */
export const passkeyRoutes = new Hono<PlatformAppEnv>();

passkeyRoutes.post("/passkeys/options", stateChange, async (c) => {
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

passkeyRoutes.post("/passkeys", stateChange, async (c) => {
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
  return c.json(passkeyJson({ ...passkey, lastUsedAt: null }), 201);
});

passkeyRoutes.post("/passkeys/:id/name", stateChange, async (c) => {
  const account = signedIn(c);
  const { name } = bodyOf(c, PasskeyNameBody);
  const passkey = await renamePasskey(c.env.DB, account.id, c.req.param("id"), name);
  if (!passkey) throw new PlatformError("not_found", "No such passkey.");
  return c.json(passkeyJson(passkey));
});

passkeyRoutes.delete("/passkeys/:id", stateChange, async (c) => {
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
