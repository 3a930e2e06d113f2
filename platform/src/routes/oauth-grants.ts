// The holder's decision on the consent page (JSON from this origin, like every change): Allow
// stores a one-time code's hash and responds with the redirect; Deny with the refusal's.
import { Hono } from "hono";
import { base64url, sha256Hex } from "../../../src/encoding.ts";
import { CODE_SECONDS, MAX_ACTIVE_KEYS } from "../config.ts";
import { countActiveKeys } from "../db/keys.ts";
import { allowGrant, denyGrant, undecidedGrant } from "../db/oauth-grants.ts";
import { PlatformError } from "../errors.ts";
import { keyChangesLimited } from "../limits.ts";
import { withParams } from "../oauth/responses.ts";
import { bodyOf, clientAddress, stateChange } from "../request.ts";
import { AllowBody, EmptyBody } from "../schemas.ts";
import { signedIn } from "../session.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";

const noGrant = () =>
  new PlatformError(
    "not_found",
    "No such authorization is waiting for you: it was decided or expired. Start again from the app.",
  );

/** Under /api (routes/index.ts): every change passes `stateChange` (request.ts) first. */
export const oauthGrantRoutes = new Hono<PlatformAppEnv>();

oauthGrantRoutes.post("/oauth/grants/:id/allow", stateChange, async (c) => {
  const account = signedIn(c);
  const body = bodyOf(c, AllowBody);
  const now = nowOf(c);
  const grant = await undecidedGrant(c.env.DB, account.id, c.req.param("id"), now);
  if (!grant) throw noGrant();
  const beyond = body.scopes.filter((s) => !grant.requestedScopes.includes(s));
  if (beyond.length > 0) {
    const message = `${beyond.join(", ")} ${beyond.length > 1 ? "were" : "was"} not asked by ${grant.clientName}, which asked ${grant.requestedScopes.join(", ")}`;
    throw new PlatformError("validation_failed", `Body field "scopes": ${message}.`, {
      details: [{ field: "scopes", message }],
    });
  }
  if ((await countActiveKeys(c.env.DB, account.id, now)) >= MAX_ACTIVE_KEYS) {
    throw new PlatformError(
      "key_limit_reached",
      `An account may have ${MAX_ACTIVE_KEYS} active keys; revoke one before allowing another client.`,
    );
  }
  const limited = await keyChangesLimited(c, account.id);
  if (limited) throw limited;
  const code = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const allowed = await allowGrant(c.env.DB, {
    id: grant.id,
    accountId: account.id,
    now,
    codeHash: await sha256Hex(code),
    scopes: body.scopes,
    keyLifetime: body.expiresInSeconds,
    codeExpiresAt: now + CODE_SECONDS,
    allowedFrom: clientAddress(c),
  });
  if (!allowed) throw noGrant();
  return c.json({
    redirectTo: withParams(allowed.redirectUri, {
      code,
      state: allowed.state,
      iss: c.env.PLATFORM_ORIGIN,
    }),
  });
});

oauthGrantRoutes.post("/oauth/grants/:id/deny", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  const denied = await denyGrant(c.env.DB, account.id, c.req.param("id"), nowOf(c));
  if (!denied) throw noGrant();
  return c.json({
    redirectTo: withParams(denied.redirectUri, {
      error: "access_denied",
      error_description: "The account holder denied the request.",
      state: denied.state,
      iss: c.env.PLATFORM_ORIGIN,
    }),
  });
});
