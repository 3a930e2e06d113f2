// The token request (RFC 6749 section 4.1.3): a form of single parameters, and the checks of
// its code against the grant: client, redirect URI, PKCE's verifier (RFC 7636), resource.
import type { Context } from "hono";
import { MAX_BODY_BYTES } from "../../../src/config.ts";
import { base64url, sha256 } from "../../../src/encoding.ts";
import { readBodyCapped } from "../../../src/http/json-body.ts";
import type { Grant } from "../db/oauth-grants.ts";
import type { PlatformAppEnv } from "../types.ts";
import { singleParams } from "./authorization.ts";
import type { OAuthProblem } from "./responses.ts";

/** A code verifier: 43 to 128 unreserved characters (RFC 7636 section 4.1). */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** The parameters a token request must send (RFC 6749 section 4.1.3, RFC 7636 section 4.5). */
const REQUIRED = ["code", "client_id", "redirect_uri", "code_verifier"] as const;

/** A token request's parameters: the required ones, and the resource it may name (RFC 8707). */
export type TokenRequest = Record<(typeof REQUIRED)[number], string> & { resource?: string };

const invalid = (description: string): OAuthProblem => ({ error: "invalid_request", description });

/**
 * The token request's parameters, or why it is invalid: a form (RFC 6749 appendix B) of UTF-8
 * within MAX_BODY_BYTES, each parameter once, the authorization_code grant (no refresh tokens
 * are issued), and every REQUIRED parameter.
 */
export async function readTokenRequest(
  c: Context<PlatformAppEnv>,
): Promise<TokenRequest | OAuthProblem> {
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(c.req.header("Content-Type") ?? "")) {
    return invalid("Send the token request as application/x-www-form-urlencoded.");
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      await readBodyCapped(c.req.raw.body, MAX_BODY_BYTES),
    );
  } catch {
    return invalid(`The token request must be UTF-8 of at most ${MAX_BODY_BYTES} bytes.`);
  }
  const p = singleParams(new URLSearchParams(text));
  if (typeof p === "string") return invalid(`The parameter ${p} is sent more than once.`);
  if (p.grant_type !== "authorization_code") {
    return {
      error: "unsupported_grant_type",
      description: 'The grant_type must be "authorization_code" (no refresh tokens are issued).',
    };
  }
  for (const name of REQUIRED) {
    if (!p[name]) return invalid(`The parameter ${name} is required.`);
  }
  return p as TokenRequest;
}

/**
 * What a token request may do with the grant of its code: redeem it, or why not. It must first
 * prove it is the request of the code's own client: the same client and redirect URI (RFC 6749
 * section 4.1.3), the verifier of the challenge (RFC 7636 section 4.6), the same resource (RFC
 * 8707); a request that does not spends nothing and ends nothing. Then a used code is a replay
 * (refused, and the key its first use made is revoked: RFC 6749 section 4.1.2, RFC 9700 section
 * 4.2.4), and an unused one must not have expired.
 */
export async function codeVerdict(
  request: TokenRequest,
  grant: Grant,
  now: number,
): Promise<OAuthProblem | "redeem" | "replay"> {
  const refused = (description: string) => ({ error: "invalid_grant", description });
  if (request.client_id !== grant.clientId)
    return refused("The code was issued to another client.");
  if (request.redirect_uri !== grant.redirectUri)
    return refused("The redirect_uri differs from the authorization request's.");
  if (!CODE_VERIFIER.test(request.code_verifier)) {
    return refused("The code_verifier must be 43 to 128 unreserved characters (RFC 7636).");
  }
  if (base64url(await sha256(request.code_verifier)) !== grant.codeChallenge) {
    return refused("The code_verifier does not match the code_challenge (S256).");
  }
  if (request.resource !== undefined && request.resource !== grant.resource) {
    return {
      error: "invalid_target",
      description: `The code grants access to ${grant.resource} alone.`,
    };
  }
  if (grant.usedAt !== null) return "replay";
  if (grant.expiresAt <= now) return refused("The code has expired.");
  return "redeem";
}
