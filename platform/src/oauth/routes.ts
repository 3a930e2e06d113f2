// The platform as an OAuth 2.1 authorization server for MCP clients (docs/platform.md,
// "Connecting agents"): metadata, registration, consent, the holder's decision (JSON, this
// origin only) and the token endpoint, whose access token is a key with audience /mcp.
import type { Context } from "hono";
import { Hono } from "hono";
import { cors } from "hono/cors";
import * as z from "zod/mini";
import { MAX_BODY_BYTES } from "../../../src/config.ts";
import { base64url, sha256, sha256Hex } from "../../../src/encoding.ts";
import { parseJsonBody, readBodyCapped } from "../../../src/http/json-body.ts";
import { MCP_PATH } from "../../../src/mcp-contract.ts";
import { isScope, SCOPES, type Scope } from "../../../src/scopes.ts";
import { MAX_ACTIVE_KEYS } from "../config.ts";
import { countActiveKeys, createAccountKey, revokeAccountKey } from "../db/keys.ts";
import { findClientRow, storeClient } from "../db/oauth-clients.ts";
import {
  allowGrant,
  denyGrant,
  openGrant,
  recordGrantKey,
  redeemCode,
  undecidedGrant,
  usedGrant,
} from "../db/oauth-grants.ts";
import { PlatformError } from "../errors.ts";
import { newApiKey } from "../new-key.ts";
import {
  authorizationErrorPage,
  consentPage,
  KEY_LIFETIMES,
  signInToConsent,
} from "../pages/consent.ts";
import { bodyOf, countAgainst, stateChange } from "../request.ts";
import { EmptyBody } from "../schemas.ts";
import { signedIn } from "../session.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";
import type { Client } from "./clients.ts";
import {
  ClientError,
  clientFromDocument,
  hostOf,
  newClientId,
  parseClientMetadata,
  redirectMatches,
  registeredClient,
} from "./clients.ts";

type C = Context<PlatformAppEnv>;

/** The holder decides within this many seconds of opening the consent page. */
const CONSENT_SECONDS = 10 * 60;
/** An authorization code is redeemed within this many seconds of the holder's Allow, once. */
const CODE_SECONDS = 60;

const METADATA_PATH = "/.well-known/oauth-authorization-server";
const AUTHORIZE_PATH = "/oauth/authorize";
const TOKEN_PATH = "/oauth/token";
const REGISTER_PATH = "/oauth/register";

/** The one resource this server grants (RFC 8707): the API's MCP server. */
const resourceOf = (env: Env) => `${env.API_ORIGIN}${MCP_PATH}`;

/** An OAuth error answer (RFC 6749 5.2, RFC 7591 3.2.2) that is also the platform's Error object. */
function oauthError(c: C, status: 400 | 401, error: string, description: string) {
  return c.json(
    { error, error_description: description, code: error, message: description, status },
    status,
  );
}

/** `uri` with the response parameters added to its query (RFC 6749 4.1.2, RFC 9207 `iss`). */
function withParams(uri: string, params: Record<string, string | null>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null) url.searchParams.set(name, value);
  }
  return url.href;
}

/** Request parameters, each sent at most once (RFC 6749 3.1); the name of one sent twice. */
function singleParams(params: URLSearchParams): Record<string, string> | string {
  const seen: Record<string, string> = {};
  for (const [name, value] of params) {
    if (Object.hasOwn(seen, name)) return name;
    seen[name] = value;
  }
  return seen;
}

const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const MAX_STATE_LENGTH = 1_000;

/** What an authorization request asks beyond its client and redirect, or its error. */
function authorizationProblem(
  q: Record<string, string>,
  env: Env,
): { error: string; description: string } | { scopes: Scope[]; resource: string } {
  if (q.response_type !== "code") {
    return { error: "unsupported_response_type", description: 'The response_type must be "code".' };
  }
  if (q.code_challenge === undefined) {
    return {
      error: "invalid_request",
      description: "PKCE is required: send a code_challenge (S256).",
    };
  }
  if (q.code_challenge_method !== "S256") {
    return {
      error: "invalid_request",
      description: 'The code_challenge_method must be "S256"; "plain" and no method are refused.',
    };
  }
  if (!CODE_CHALLENGE.test(q.code_challenge)) {
    return {
      error: "invalid_request",
      description: "The code_challenge is not an S256 challenge (43 base64url characters).",
    };
  }
  if ((q.state?.length ?? 0) > MAX_STATE_LENGTH) {
    return {
      error: "invalid_request",
      description: `The state is longer than ${MAX_STATE_LENGTH} characters.`,
    };
  }
  const words = (q.scope ?? "").split(" ").filter(Boolean);
  const unknown = words.filter((w) => !isScope(w));
  if (unknown.length > 0) {
    return {
      error: "invalid_scope",
      description: `Unknown scope ${unknown.map((w) => JSON.stringify(w.slice(0, 40))).join(", ")}: the scopes are ${SCOPES.join(", ")}.`,
    };
  }
  const resource = resourceOf(env);
  if (q.resource !== undefined && q.resource !== resource) {
    return {
      error: "invalid_target",
      description: `This server grants access to ${resource} alone, not to ${JSON.stringify(q.resource.slice(0, 200))}.`,
    };
  }
  return { scopes: words.length > 0 ? words.filter(isScope) : [...SCOPES], resource };
}

const AllowBody = z.strictObject({
  scopes: z
    .array(z.enum(SCOPES, { error: `must each be one of ${SCOPES.join(", ")}` }))
    .check(z.minLength(1, "must name at least one scope")),
  expiresInSeconds: z.nullable(
    z.number().check(
      z.refine((n) => KEY_LIFETIMES.some(([seconds]) => seconds === n), {
        error: `must be one of ${KEY_LIFETIMES.flatMap(([s]) => (s === null ? [] : [s])).join(", ")} or null`,
      }),
    ),
  ),
});

const noGrant = () =>
  new PlatformError(
    "not_found",
    "No such authorization is waiting for you: it was decided or expired. Start again from the app.",
  );

export interface OAuthOptions {
  /** How client metadata documents are fetched (the global fetch unless a test serves them). */
  fetch?: typeof fetch;
}

/** The server's endpoints (`routes`, at the origin's root) and the consent's JSON (`api`, under /api). */
export function oauthRoutes(options: OAuthOptions = {}) {
  const fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  const routes = new Hono<PlatformAppEnv>();
  const api = new Hono<PlatformAppEnv>();
  // Machine endpoints: any origin may read them (no cookie is ever used there).
  const open = cors({ origin: "*", allowMethods: ["GET", "POST"], maxAge: 86400 });

  /** The client of `clientId`: a metadata document at its https URL, or a registered one. */
  async function clientOf(c: C, clientId: string | undefined): Promise<Client> {
    if (!clientId) throw new ClientError("The request names no client_id.");
    if (clientId.startsWith("https://")) {
      // Each fetch of a document counts against the address, as a sign-up does.
      await countAgainst(c, c.env.SIGN_UP_LIMITER, "client metadata documents fetched");
      return clientFromDocument(fetcher, clientId);
    }
    const row = await findClientRow(c.env.DB, clientId);
    if (!row) throw new ClientError("No client is registered with this client_id.");
    return registeredClient(row);
  }

  routes.use(METADATA_PATH, open);
  routes.get(METADATA_PATH, (c) => {
    const issuer = c.env.PLATFORM_ORIGIN;
    return c.json({
      issuer,
      authorization_endpoint: `${issuer}${AUTHORIZE_PATH}`,
      token_endpoint: `${issuer}${TOKEN_PATH}`,
      registration_endpoint: `${issuer}${REGISTER_PATH}`,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      scopes_supported: SCOPES,
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${c.env.API_ORIGIN}/v1/docs`,
    });
  });

  routes.get(AUTHORIZE_PATH, async (c) => {
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
    const iss = c.env.PLATFORM_ORIGIN;
    const state = q.state ?? null;
    const asked = authorizationProblem(q, c.env);
    if ("error" in asked) {
      const back = withParams(redirectUri, {
        error: asked.error,
        error_description: asked.description,
        state,
        iss,
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
    const now = nowOf(c);
    const grantId = `grt_${base64url(crypto.getRandomValues(new Uint8Array(16)))}`;
    await openGrant(c.env.DB, {
      id: grantId,
      accountId: account.id,
      clientId: client.id,
      clientName: client.name,
      redirectUri,
      state,
      codeChallenge: q.code_challenge as string,
      resource: asked.resource,
      requestedScopes: asked.scopes,
      now,
      expiresAt: now + CONSENT_SECONDS,
    });
    const atKeyLimit = (await countActiveKeys(c.env.DB, account.id, now)) >= MAX_ACTIVE_KEYS;
    return consentPage(c, { ...view, grantId, requestedScopes: asked.scopes, atKeyLimit });
  });

  api.post("/oauth/grants/:id/allow", stateChange, async (c) => {
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
    const code = base64url(crypto.getRandomValues(new Uint8Array(32)));
    const allowed = await allowGrant(c.env.DB, {
      id: grant.id,
      accountId: account.id,
      now,
      codeHash: await sha256Hex(code),
      scopes: body.scopes,
      keyLifetime: body.expiresInSeconds,
      codeExpiresAt: now + CODE_SECONDS,
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

  api.post("/oauth/grants/:id/deny", stateChange, async (c) => {
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

  routes.use(TOKEN_PATH, open);
  routes.post(TOKEN_PATH, async (c) => {
    if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(c.req.header("Content-Type") ?? "")) {
      return oauthError(
        c,
        400,
        "invalid_request",
        "Send the token request as application/x-www-form-urlencoded.",
      );
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
        await readBodyCapped(c.req.raw.body, MAX_BODY_BYTES),
      );
    } catch {
      return oauthError(
        c,
        400,
        "invalid_request",
        `The token request must be UTF-8 of at most ${MAX_BODY_BYTES} bytes.`,
      );
    }
    const p = singleParams(new URLSearchParams(text));
    if (typeof p === "string")
      return oauthError(c, 400, "invalid_request", `The parameter ${p} is sent more than once.`);
    if (p.grant_type !== "authorization_code") {
      return oauthError(
        c,
        400,
        "unsupported_grant_type",
        'The grant_type must be "authorization_code" (no refresh tokens are issued).',
      );
    }
    for (const name of ["code", "client_id", "redirect_uri", "code_verifier"]) {
      if (!p[name])
        return oauthError(c, 400, "invalid_request", `The parameter ${name} is required.`);
    }
    const now = nowOf(c);
    const codeHash = await sha256Hex(p.code as string);
    const grant = await redeemCode(c.env.DB, codeHash, now);
    if (!grant) {
      // A code used twice: the key its first use made ends (RFC 6749 4.1.2).
      const replayed = await usedGrant(c.env.DB, codeHash);
      if (replayed?.keyId != null)
        await revokeAccountKey(c.env.DB, replayed.accountId, replayed.keyId, now);
      return oauthError(
        c,
        400,
        "invalid_grant",
        replayed
          ? "This code was already used; the key it made is now revoked."
          : "The code is not valid.",
      );
    }
    const refused = (description: string) => oauthError(c, 400, "invalid_grant", description);
    if (grant.expiresAt <= now || grant.scopes === null) return refused("The code has expired.");
    if (p.client_id !== grant.clientId) return refused("The code was issued to another client.");
    if (p.redirect_uri !== grant.redirectUri)
      return refused("The redirect_uri differs from the authorization request's.");
    if (!CODE_VERIFIER.test(p.code_verifier as string)) {
      return refused("The code_verifier must be 43 to 128 unreserved characters (RFC 7636).");
    }
    if (base64url(await sha256(p.code_verifier as string)) !== grant.codeChallenge) {
      return refused("The code_verifier does not match the code_challenge (S256).");
    }
    if (p.resource !== undefined && p.resource !== grant.resource) {
      return oauthError(
        c,
        400,
        "invalid_target",
        `The code grants access to ${grant.resource} alone.`,
      );
    }
    const issued = await newApiKey(c.env);
    const key = await createAccountKey(c.env.DB, {
      ...issued,
      accountId: grant.accountId,
      label: grant.clientName,
      scopes: grant.scopes,
      now,
      expiresAt: grant.keyLifetime === null ? null : now + grant.keyLifetime,
      audience: MCP_PATH,
    });
    if (!key) {
      return refused(
        `The account has ${MAX_ACTIVE_KEYS} active keys; its holder must revoke one first.`,
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

  routes.use(REGISTER_PATH, open);
  routes.post(REGISTER_PATH, async (c) => {
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
    const parsed = parseClientMetadata(body);
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
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      201,
    );
  });

  return { routes, api };
}
