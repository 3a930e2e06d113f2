// The token endpoint (RFC 6749 section 3.2): a code, redeemed once, becomes a key of the account
// with audience /mcp, the access token; a code redeemed twice revokes the key its first use made.
import type { Context } from "hono";
import { Hono } from "hono";
import { sha256Hex } from "../../../src/encoding.ts";
import { MCP_PATH } from "../../../src/mcp-contract.ts";
import { MAX_ACTIVE_KEYS } from "../config.ts";
import { createAccountKey, revokeAccountKey } from "../db/keys.ts";
import { recordGrantKey, redeemCode, usedGrant } from "../db/oauth-grants.ts";
import { keyChangesLimited } from "../limits.ts";
import { newApiKey } from "../new-key.ts";
import { OAUTH_PATHS } from "../oauth/metadata.ts";
import { machineCors, oauthError } from "../oauth/responses.ts";
import { codeProblem, readTokenRequest } from "../oauth/token.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";

/** At the origin's root (routes/index.ts); any origin may call it (no cookie is read). */
export const oauthTokenRoutes = new Hono<PlatformAppEnv>();

oauthTokenRoutes.use(OAUTH_PATHS.token, machineCors);
oauthTokenRoutes.post(OAUTH_PATHS.token, async (c) => {
  const request = await readTokenRequest(c);
  if ("error" in request) return oauthError(c, 400, request.error, request.description);
  const now = nowOf(c);
  const codeHash = await sha256Hex(request.code);
  const grant = await redeemCode(c.env.DB, codeHash, now);
  if (!grant) return refuseUnknownCode(c, codeHash, now);
  if (grant.expiresAt <= now || grant.scopes === null) {
    return oauthError(c, 400, "invalid_grant", "The code has expired.");
  }
  const problem = await codeProblem(request, grant);
  if (problem) return oauthError(c, 400, problem.error, problem.description);
  const issued = await newApiKey(c.env);
  const key = await createAccountKey(c.env.DB, {
    ...issued,
    accountId: grant.accountId,
    label: grant.clientName,
    scopes: grant.scopes,
    now,
    expiresAt: grant.keyLifetime === null ? null : now + grant.keyLifetime,
    audience: MCP_PATH,
    createdFrom: grant.allowedFrom,
  });
  if (!key) {
    const limited = await keyChangesLimited(c, grant.accountId, grant.allowedFrom);
    return oauthError(
      c,
      400,
      "invalid_grant",
      limited
        ? `${limited.message} Ask again then.`
        : `The account has ${MAX_ACTIVE_KEYS} active keys; its holder must revoke one first.`,
    );
  }
  await recordGrantKey(c.env.DB, grant, key.id, now);
  c.header("Pragma", "no-cache");
  return c.json({
    access_token: issued.key,
    token_type: "Bearer",
    ...(grant.keyLifetime === null ? {} : { expires_in: grant.keyLifetime }),
    scope: grant.scopes.join(" "),
  });
});

/**
 * invalid_grant for a code that is unknown or used; a code used twice revokes the key its first
 * use made (RFC 6749 section 4.1.2: the server "SHOULD revoke" what the code granted).
 */
async function refuseUnknownCode(c: Context<PlatformAppEnv>, codeHash: string, now: number) {
  const replayed = await usedGrant(c.env.DB, codeHash);
  if (replayed?.keyId != null) {
    await revokeAccountKey(c.env.DB, replayed.accountId, replayed.keyId, now);
  }
  return oauthError(
    c,
    400,
    "invalid_grant",
    replayed
      ? "This code was already used; the key it made is now revoked."
      : "The code is not valid.",
  );
}
