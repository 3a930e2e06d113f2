// The token endpoint (RFC 6749 section 3.2): a code, redeemed once by its own client, becomes a
// key of the account with audience /mcp, the access token; its client redeeming it again revokes
// the key its first use made (a failed attempt spends nothing: oauth/token.ts).
import type { Context } from "hono";
import { Hono } from "hono";
import { sha256Hex } from "../../../src/encoding.ts";
import { MCP_PATH } from "../../../src/mcp-contract.ts";
import { MAX_ACTIVE_KEYS } from "../config.ts";
import { createAccountKey, revokeAccountKey } from "../db/keys.ts";
import { type Grant, grantOfCode, recordGrantKey, redeemCode } from "../db/oauth-grants.ts";
import { keyChangesLimited } from "../limits.ts";
import { newApiKey } from "../new-key.ts";
import { OAUTH_PATHS } from "../oauth/metadata.ts";
import { machineCors, oauthError } from "../oauth/responses.ts";
import { codeVerdict, readTokenRequest } from "../oauth/token.ts";
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
  const grant = await grantOfCode(c.env.DB, codeHash);
  if (!grant?.scopes) return oauthError(c, 400, "invalid_grant", "The code is not valid.");
  const verdict = await codeVerdict(request, grant, now);
  if (verdict === "replay") return refuseReplay(c, grant, now);
  if (verdict !== "redeem") return oauthError(c, 400, verdict.error, verdict.description);
  // Once: of two redemptions at the same moment, the second is a replay.
  if (!(await redeemCode(c.env.DB, codeHash, now))) return refuseReplay(c, grant, now);
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
 * invalid_grant for a code its own client redeems again: the key its first use made (if it made
 * one) is revoked (RFC 6749 section 4.1.2: the server "SHOULD revoke" what the code granted).
 */
async function refuseReplay(c: Context<PlatformAppEnv>, grant: Grant, now: number) {
  if (grant.keyId === null)
    return oauthError(c, 400, "invalid_grant", "This code was already used.");
  await revokeAccountKey(c.env.DB, grant.accountId, grant.keyId, now);
  return oauthError(
    c,
    400,
    "invalid_grant",
    "This code was already used; the key it made is now revoked.",
  );
}
