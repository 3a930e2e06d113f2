// An OAuth client for the platform's tests, step by step as an MCP client takes them (each
// step can be bent to attack the server): PKCE, registration, the authorization request,
// the consent's decision as the page's script sends it, and the token request.
import { type HTMLElement, parse } from "node-html-parser";
import { expect } from "vitest";
import { base64url, sha256 } from "../../src/encoding.ts";
import type { Call, Send } from "./helpers.ts";
import { send as platformSend } from "./helpers.ts";

export const RESOURCE = "http://localhost:8787/mcp";
export const REDIRECT = "http://127.0.0.1:43117/callback";

export async function pkce() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { verifier, challenge: base64url(await sha256(verifier)) };
}

/** Registers a client (RFC 7591); its id. */
export async function register(
  metadata: Record<string, unknown> = {},
  send: Send = platformSend,
): Promise<string> {
  const response = await send("/oauth/register", {
    json: { client_name: "Claude", redirect_uris: [REDIRECT], ...metadata },
    origin: null,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json<{ client_id: string }>()).client_id;
}

export interface Ask {
  client_id: string;
  redirect_uri?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  scope?: string;
  state?: string;
  resource?: string;
  response_type?: string;
}

/** The authorization endpoint's address for `ask` (undefined fields are left out). */
export function authorizePath(ask: Ask): string {
  const params = new URLSearchParams();
  const full = {
    response_type: "code",
    redirect_uri: REDIRECT,
    code_challenge_method: "S256",
    state: "st-123",
    resource: RESOURCE,
    ...ask,
  };
  for (const [name, value] of Object.entries(full)) {
    if (value !== undefined) params.set(name, value);
  }
  return `/oauth/authorize?${params}`;
}

/** Opens the consent page as the signed-in holder: the page, and its grant id. */
export async function openConsent(ask: Ask, session: string, send: Send = platformSend) {
  const response = await send(authorizePath(ask), { session });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  // No other site may frame the consent (clickjacking) or run a script in it.
  expect(response.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
  expect(response.headers.get("Content-Security-Policy")).toContain("script-src 'self';");
  const page = parse(text);
  const grantId = page.querySelector("form[data-action=allow]")?.getAttribute("data-grant-id");
  if (!grantId) throw new Error(`no consent form:\n${text}`);
  return { page, grantId };
}

/** The holder's Allow, as app.js sends it. */
export function allow(
  grantId: string,
  session: string,
  body: Record<string, unknown> = { scopes: ["pets:read"], expiresInSeconds: 2592000 },
  call: Partial<Call> = {},
  send: Send = platformSend,
) {
  return send(`/api/oauth/grants/${grantId}/allow`, { json: body, session, ...call });
}

/** The Allow the consent page sends as it stands (app.js): its ticked scopes, its first lifetime. */
export function allowAsShown(page: HTMLElement) {
  const expires = page.querySelector("select#expires option")?.getAttribute("value");
  return {
    scopes: page
      .querySelectorAll("input[name=scopes]")
      .filter((box) => box.hasAttribute("checked"))
      .map((box) => box.getAttribute("value")),
    expiresInSeconds: expires ? Number(expires) : null,
  };
}

/** The code and the rest of the redirect that an Allow responded. */
export async function codeOf(response: Response) {
  const text = await response.text();
  expect(response.status, text).toBe(200);
  const url = new URL(JSON.parse(text).redirectTo);
  return { url, code: url.searchParams.get("code") ?? "" };
}

/** A token request, form-encoded, from no page at all (as MCP clients send it). */
export function token(params: Record<string, string>, send: Send = platformSend) {
  return send("/oauth/token", {
    body: new URLSearchParams(params).toString(),
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    origin: null,
  });
}

/** Asserts an OAuth error response, which is also the platform's Error object. */
export async function expectOAuthError(
  response: Response,
  status: number,
  error: string,
  text?: RegExp,
) {
  const body = await response.json<Record<string, unknown>>();
  expect(response.status, JSON.stringify(body)).toBe(status);
  expect(response.headers.get("Cache-Control")).toBe("no-store");
  expect(body).toMatchObject({ error, code: error, status });
  expect(body.error_description).toBe(body.message);
  if (text) expect(body.message).toMatch(text);
}

/** Everything up to a code, for a registered client and a signed-in holder. */
export async function codeFor(session: string, ask: Partial<Ask> = {}) {
  const clientId = ask.client_id ?? (await register());
  const { verifier, challenge } = await pkce();
  const { grantId } = await openConsent(
    { client_id: clientId, code_challenge: challenge, ...ask },
    session,
  );
  const { code } = await codeOf(await allow(grantId, session));
  return { clientId, verifier, code, grantId };
}

/** Redeems `code` as the client that asked for it would. */
export function redeem(
  got: { clientId: string; verifier: string; code: string },
  extra: Record<string, string> = {},
  send: Send = platformSend,
) {
  return token(
    {
      grant_type: "authorization_code",
      code: got.code,
      client_id: got.clientId,
      redirect_uri: REDIRECT,
      code_verifier: got.verifier,
      resource: RESOURCE,
      ...extra,
    },
    send,
  );
}
