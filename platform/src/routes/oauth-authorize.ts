// The authorization endpoint (RFC 6749 section 4.1.1): the consent page of a client's request,
// or the platform's page saying why it cannot go on (no redirect to a URI not verified).
import type { Context } from "hono";
import { Hono } from "hono";
import { base64url } from "../../../src/encoding.ts";
import type { Scope } from "../../../src/scopes.ts";
import { CONSENT_SECONDS, MAX_ACTIVE_KEYS } from "../config.ts";
import type { Account } from "../db/accounts.ts";
import { countActiveKeys } from "../db/keys.ts";
import { openGrant } from "../db/oauth-grants.ts";
import { authorizationProblem, clientOf, singleParams } from "../oauth/authorization.ts";
import type { Client } from "../oauth/clients.ts";
import { ClientError, hostOf, redirectMatches } from "../oauth/clients.ts";
import { OAUTH_PATHS } from "../oauth/metadata.ts";
import { withParams } from "../oauth/responses.ts";
import type { ConsentView } from "../pages/consent.ts";
import { authorizationErrorPage, consentPage, signInToConsent } from "../pages/consent.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";

/** At the origin's root (routes/index.ts): a page a browser opens, sent by the client. */
export const oauthAuthorizeRoutes = new Hono<PlatformAppEnv>();

oauthAuthorizeRoutes.get(OAUTH_PATHS.authorize, async (c) => {
  const q = singleParams(new URL(c.req.url).searchParams);
  if (typeof q === "string") {
    return authorizationErrorPage(c, { message: `The parameter ${q} is sent more than once.` });
  }
  let client: Client;
  try {
    client = await clientOf(c, q.client_id);
  } catch (err) {
    if (err instanceof ClientError) return authorizationErrorPage(c, { message: err.message });
    throw err;
  }
  const redirectUri = q.redirect_uri;
  if (redirectUri === undefined || !redirectMatches(client.redirectUris, redirectUri)) {
    return authorizationErrorPage(c, {
      message: `The redirect_uri is not one that ${client.name} registered, so nothing is sent there.`,
    });
  }
  const state = q.state ?? null;
  const asked = authorizationProblem(q, c.env);
  if ("error" in asked) {
    const back = withParams(redirectUri, {
      error: asked.error,
      error_description: asked.description,
      state,
      iss: c.env.PLATFORM_ORIGIN,
    });
    return authorizationErrorPage(c, {
      message: asked.description,
      back: { href: back, name: client.name },
    });
  }
  const view = {
    client,
    host: client.kind === "document" ? client.host : hostOf(redirectUri),
    redirectUri,
  };
  const account = c.var.account;
  if (!account) return signInToConsent(c, view);
  return openConsent(c, account, view, {
    state,
    codeChallenge: q.code_challenge as string,
    ...asked,
  });
});

/**
 * Signed in: the request kept as a pending grant of the account for CONSENT_SECONDS, and the
 * consent page that decides it (noting when the account is at its key limit).
 */
async function openConsent(
  c: Context<PlatformAppEnv>,
  account: Account,
  view: ConsentView,
  asked: { state: string | null; codeChallenge: string; scopes: Scope[]; resource: string },
) {
  const now = nowOf(c);
  const grantId = `grt_${base64url(crypto.getRandomValues(new Uint8Array(16)))}`;
  await openGrant(c.env.DB, {
    id: grantId,
    accountId: account.id,
    clientId: view.client.id,
    clientName: view.client.name,
    redirectUri: view.redirectUri,
    state: asked.state,
    codeChallenge: asked.codeChallenge,
    resource: asked.resource,
    requestedScopes: asked.scopes,
    now,
    expiresAt: now + CONSENT_SECONDS,
  });
  const atKeyLimit = (await countActiveKeys(c.env.DB, account.id, now)) >= MAX_ACTIVE_KEYS;
  return consentPage(c, { ...view, grantId, requestedScopes: asked.scopes, atKeyLimit });
}
