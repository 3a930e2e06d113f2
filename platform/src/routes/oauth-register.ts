// Dynamic client registration (RFC 7591): a public client names itself and its redirect URIs;
// each registration counts against the address's sign-up limit.
import { Hono } from "hono";
import { MAX_BODY_BYTES } from "../../../src/config.ts";
import { parseJsonBody, readBodyCapped } from "../../../src/http/json-body.ts";
import { storeClient } from "../db/oauth-clients.ts";
import { newClientId, parseClientMetadata } from "../oauth/clients.ts";
import { OAUTH_PATHS } from "../oauth/metadata.ts";
import { machineCors, oauthError } from "../oauth/responses.ts";
import { countAgainst } from "../request.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";

/** At the origin's root (routes/index.ts); any origin may call it (no cookie is read). */
export const oauthRegisterRoutes = new Hono<PlatformAppEnv>();

oauthRegisterRoutes.use(OAUTH_PATHS.register, machineCors);
oauthRegisterRoutes.post(OAUTH_PATHS.register, async (c) => {
  await countAgainst(c, c.env.SIGN_UP_LIMITER, "client registrations");
  let body: unknown;
  try {
    body = parseJsonBody(await readBodyCapped(c.req.raw.body, MAX_BODY_BYTES));
  } catch {
    return oauthError(
      c,
      400,
      "invalid_client_metadata",
      `Send the client's metadata as one JSON object of at most ${MAX_BODY_BYTES} bytes.`,
    );
  }
  const parsed = parseClientMetadata(body, "registration");
  if (!parsed.ok) {
    const error = parsed.problem.startsWith("redirect_uris")
      ? "invalid_redirect_uri"
      : "invalid_client_metadata";
    return oauthError(c, 400, error, parsed.problem);
  }
  const now = nowOf(c);
  const client = {
    id: newClientId(),
    name: parsed.metadata.client_name,
    redirectUris: parsed.metadata.redirect_uris,
    now,
  };
  await storeClient(c.env.DB, client);
  return c.json(
    {
      client_id: client.id,
      client_id_issued_at: now,
      client_name: client.name,
      redirect_uris: client.redirectUris,
      // What is registered, whatever was asked (RFC 7591 3.2.1): a public client, no secret.
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
    201,
  );
});
