// Bearer authentication for everything under /v1 except OPTIONS and the public docs.
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "../http/types.ts";
import type { ApiKeyVerifier } from "./verifier.ts";

const REALM = 'Bearer realm="petstore"';
/** RFC 6750 b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function unauthorized(message: string, invalidToken: boolean): ApiError {
  return new ApiError("unauthorized", message, {
    headers: {
      "WWW-Authenticate": invalidToken ? `${REALM}, error="invalid_token"` : REALM,
    },
  });
}

export function authenticate(verifier: ApiKeyVerifier) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("Authorization");
    if (header === undefined || header.trim() === "") {
      throw unauthorized('Missing API key: send "Authorization: Bearer <API_KEY>".', false);
    }
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) {
      if (!/^Bearer(\s|$)/i.test(header)) {
        throw unauthorized('Authorization must use the Bearer scheme: "Bearer <API_KEY>".', false);
      }
      throw unauthorized("The API key is malformed.", true);
    }
    const keyId = await verifier.verify(token, c.env);
    if (keyId === null) throw unauthorized("The API key is invalid or revoked.", true);
    c.set("apiKeyId", keyId);
    await next();
  });
}
