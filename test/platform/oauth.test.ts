// The platform as an OAuth 2.1 authorization server for MCP clients: metadata, a client's
// way from registration (or its metadata document) through the consent page to a key of
// the account whose audience is /mcp, and the attacks on each step (docs/platform.md,
// "Connecting agents"). The API's own refusal of such a key on /v1: test/audience.test.ts.
import { env } from "cloudflare:workers";
import { parse } from "node-html-parser";
import { describe, expect, it } from "vitest";
import { CLIENT_UNGRANTED_DAYS } from "../../platform/src/config.ts";
import { displayPrefix, hashApiKey } from "../../src/auth/keys.ts";
import { findApiKeyByHash } from "../../src/db/api-keys.ts";
import { sha256Hex } from "../../src/encoding.ts";
import {
  count,
  expectError,
  freshAddress,
  ORIGIN,
  platformWith,
  runCron,
  send,
  signUp,
} from "./helpers.ts";
import {
  allow,
  allowAsShown,
  authorizePath,
  codeFor,
  codeOf,
  expectOAuthError,
  openConsent,
  pkce,
  REDIRECT,
  redeem,
  register,
  token,
} from "./oauth-client.ts";

/**
 * What the API's verifier reads of `key` in D1 at once (src/db/api-keys.ts, the primary's
 * word it falls back to for a new key): refused, expired, or its scopes and audience.
 */
async function apiView(key: string) {
  const row = await findApiKeyByHash(env.DB, await hashApiKey(key));
  if (!row || row.revoked) return "refused";
  if (row.expiresAt !== null && row.expiresAt <= Date.now() / 1000) return "expired";
  return { id: row.id, scopes: row.scopes, audience: row.audience };
}

/** A client's metadata documents, served as its own host would (the platform fetches them). */
function documents(served: Record<string, () => Response>) {
  const fetched: string[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    fetched.push(url);
    expect(init?.redirect).toBe("manual");
    const serve = served[url];
    return serve ? serve() : new Response("not here", { status: 404 });
  }) as typeof globalThis.fetch;
  return { send: platformWith({ oauth: { fetch } }), fetched };
}

const DOCUMENT_ID = "https://agent.example/oauth/client.json";
const documentOf =
  (fields: Record<string, unknown> = {}) =>
  () =>
    Response.json({
      client_id: DOCUMENT_ID,
      client_name: "Agent Desktop",
      redirect_uris: ["https://agent.example/callback", "http://127.0.0.1/callback"],
      token_endpoint_auth_method: "none",
      ...fields,
    });

/** An authorization request's refusal: a page of the platform, never a redirect. */
async function expectRefusedPage(response: Response, text: RegExp | string) {
  const html = await response.text();
  expect(response.status, html).toBe(400);
  expect(response.headers.get("Location")).toBeNull();
  expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
  const page = parse(html);
  expect(page.querySelector("h1")?.text).toBe("This connection cannot go on");
  const said = page.querySelector("main p")?.text;
  if (typeof text === "string") expect(said).toBe(text);
  else expect(page.querySelector("main")?.text).toMatch(text);
  return page;
}

describe("metadata (RFC 8414)", () => {
  it("names this origin as issuer, its endpoints, S256 alone, public clients and CIMD", async () => {
    const response = await send("/.well-known/oauth-authorization-server", {
      headers: { Origin: "https://any.example" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(await response.json()).toEqual({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      scopes_supported: ["pets:read", "pets:write", "orders:read"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      service_documentation: "http://localhost:8787/v1/docs",
    });
  });
});

describe("a registered client's way to a key", () => {
  it("signed out: the consent page asks for a passkey and comes back to itself", async () => {
    const clientId = await register();
    const path = authorizePath({ client_id: clientId, code_challenge: (await pkce()).challenge });
    const response = await send(path);
    expect(response.status).toBe(200);
    const page = parse(await response.text());
    expect(page.querySelector("[data-next]")?.getAttribute("data-next")).toBe(path);
    expect(page.querySelector("button[data-action=sign-in]")).not.toBeNull();
    expect(page.querySelector("form[data-action=allow]")).toBeNull();
    expect(page.querySelector("main")?.text).toContain("an app on this computer (127.0.0.1:43117)");
    expect(await count("oauth_grants", "client_id = ?1", clientId)).toBe(0);
    // An ended session is none: the same sign-in, which comes back here.
    const { session } = await signUp();
    expect((await send("/api/sign-out", { json: {}, session })).status).toBe(204);
    const ended = parse(await (await send(path, { session })).text());
    expect(ended.querySelector("[data-next]")?.getAttribute("data-next")).toBe(path);
    expect(ended.querySelector("form[data-action=allow]")).toBeNull();
  });

  it("consent shows the client, its host and the scopes asked, all ticked; Allow gives a code with state and iss; the token is a key of the account with audience /mcp", async () => {
    const { session, account } = await signUp();
    const clientId = await register({ client_name: "Claude" });
    const { verifier, challenge } = await pkce();
    const { page, grantId } = await openConsent(
      { client_id: clientId, code_challenge: challenge, scope: "pets:write pets:read" },
      session,
    );
    expect(page.querySelector("h1")?.text).toBe("Allow Claude to use the Pet Store API as you?");
    expect(page.querySelectorAll("script:not([src]), [style], [onclick]")).toHaveLength(0);
    expect(page.querySelector(".facts")?.text).toContain(
      "an app on this computer (127.0.0.1:43117)",
    );
    const boxes = page
      .querySelectorAll("input[name=scopes]")
      .map((b) => [b.getAttribute("value"), b.hasAttribute("checked")]);
    expect(boxes).toEqual([
      ["pets:read", true],
      ["pets:write", true],
    ]);
    expect(page.querySelector("select#expires option")?.getAttribute("value")).toBe("2592000");
    expect(page.querySelector("button[data-action=deny]")?.getAttribute("data-grant-id")).toBe(
      grantId,
    );

    const { url, code } = await codeOf(await allow(grantId, session));
    expect(`${url.origin}${url.pathname}`).toBe(REDIRECT);
    expect(url.searchParams.get("state")).toBe("st-123");
    expect(url.searchParams.get("iss")).toBe(ORIGIN);
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only the code's hash is stored.
    expect(await count("oauth_grants", "code_hash = ?1", await sha256Hex(code))).toBe(1);

    const response = await redeem({ clientId, verifier, code });
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const tokens = await response.json<Record<string, unknown>>();
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^psk_[A-Za-z0-9_-]{65}$/),
      token_type: "Bearer",
      expires_in: 2592000,
      scope: "pets:read",
    });
    const key = tokens.access_token as string;
    const row = await env.DB.prepare(
      "SELECT account_id, label, scopes, audience, expires_at - created_at AS lifetime FROM api_keys WHERE key_hash = ?1",
    )
      .bind(await sha256Hex(key))
      .first();
    expect(row).toEqual({
      account_id: account.id,
      label: "Claude",
      scopes: "pets:read",
      audience: "/mcp",
      lifetime: 2592000,
    });
    // The API's verifier takes it at once (no store lags behind the token), for /mcp alone.
    expect(await apiView(key)).toEqual({
      id: expect.any(Number),
      scopes: ["pets:read"],
      audience: "/mcp",
    });
    // Listed with the account's keys under the client's name.
    const listed = await (await send("/api/keys", { session })).json<
      Array<{ label: string; audience: string | null }>
    >();
    expect(listed.map((k) => [k.label, k.audience])).toEqual([["Claude", "/mcp"]]);
  });

  it("grants what the client asked in one click: every scope asked that it knows is ticked; a step-up after a 403 is one more Allow", async () => {
    const { session } = await signUp();
    const clientId = await register();
    const connect = async (scope: string) => {
      const { verifier, challenge } = await pkce();
      const { page, grantId } = await openConsent(
        { client_id: clientId, code_challenge: challenge, scope },
        session,
      );
      const shown = allowAsShown(page);
      const { code } = await codeOf(await allow(grantId, session, shown));
      const tokens = await (await redeem({ clientId, verifier, code })).json<{
        access_token: string;
        scope: string;
      }>();
      return { shown, tokens };
    };
    // What mcp-remote and the SDK ask (the metadata's scopes_supported), with OpenID Connect's
    // beside, which this server does not know and leaves out (RFC 6749 3.3).
    const all = await connect("openid pets:read pets:write orders:read offline_access");
    expect(all.shown).toEqual({
      scopes: ["pets:read", "orders:read", "pets:write"],
      expiresInSeconds: 2592000,
    });
    expect(all.tokens.scope).toBe("pets:read pets:write orders:read");
    expect(await apiView(all.tokens.access_token)).toMatchObject({
      scopes: ["pets:read", "pets:write", "orders:read"],
    });
    // A key that may only read meets a create: the API's 403 names the scope, and the client
    // asks for it; the holder, still signed in, allows it as shown.
    // Only scopes it does not know: as if it named none, all of them (the holder may narrow).
    expect((await connect("openid offline_access")).shown.scopes).toEqual([
      "pets:read",
      "orders:read",
      "pets:write",
    ]);
    const reader = await connect("pets:read");
    expect(reader.tokens.scope).toBe("pets:read");
    const stepUp = await connect("pets:read pets:write");
    expect(stepUp.shown.scopes).toEqual(["pets:read", "pets:write"]);
    expect(await apiView(stepUp.tokens.access_token)).toMatchObject({
      scopes: ["pets:read", "pets:write"],
    });
  });

  it("Deny sends the client back with access_denied, state and iss, and grants nothing", async () => {
    const { session } = await signUp();
    const clientId = await register();
    const { grantId } = await openConsent(
      { client_id: clientId, code_challenge: (await pkce()).challenge },
      session,
    );
    const denied = await send(`/api/oauth/grants/${grantId}/deny`, { json: {}, session });
    expect(denied.status).toBe(200);
    const url = new URL((await denied.json<{ redirectTo: string }>()).redirectTo);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      error: "access_denied",
      error_description: "The account holder denied the request.",
      state: "st-123",
      iss: ORIGIN,
    });
    await expectError(await allow(grantId, session), 404, "not_found");
    expect(await count("oauth_grants", "id = ?1", grantId)).toBe(0);
  });

  it("a loopback redirect may change its port (RFC 8252 7.3), nothing else may change", async () => {
    const { session } = await signUp();
    const clientId = await register();
    const { challenge } = await pkce();
    await openConsent(
      {
        client_id: clientId,
        code_challenge: challenge,
        redirect_uri: "http://127.0.0.1:51000/callback",
      },
      session,
    );
    for (const changed of [
      "http://127.0.0.1:51000/callback/",
      "http://127.0.0.1:51000/other",
      "http://localhost:43117/callback",
      "https://127.0.0.1:43117/callback",
      "http://127.0.0.1:43117/callback?x=1",
      "http://127.0.0.2:43117/callback",
    ]) {
      await expectRefusedPage(
        await send(
          authorizePath({ client_id: clientId, code_challenge: challenge, redirect_uri: changed }),
          { session },
        ),
        /redirect_uri is not one that Claude registered/,
      );
    }
  });
});

describe("the purge of registrations", () => {
  it(`the hourly cron deletes a registered client that got no grant in ${CLIENT_UNGRANTED_DAYS} days; one that did, or is younger, or is being asked for, stays`, async () => {
    const { session } = await signUp();
    const granted = await codeFor(session);
    expect((await redeem(granted)).status).toBe(200);
    const pending = await register();
    await openConsent({ client_id: pending, code_challenge: (await pkce()).challenge }, session);
    const [idle, young] = [await register(), await register()];
    const now = Math.floor(Date.now() / 1000);
    const registered = (clientId: string, daysAgo: number) =>
      env.DB.prepare("UPDATE oauth_clients SET created_at = ?2 WHERE client_id = ?1").bind(
        clientId,
        now - daysAgo * 86400,
      );
    await env.DB.batch([
      registered(granted.clientId, CLIENT_UNGRANTED_DAYS + 5),
      registered(pending, CLIENT_UNGRANTED_DAYS + 1),
      registered(idle, CLIENT_UNGRANTED_DAYS + 1),
      registered(young, CLIENT_UNGRANTED_DAYS - 1),
    ]);

    await runCron();

    const kept = async (clientId: string) =>
      (await count("oauth_clients", "client_id = ?1", clientId)) === 1;
    expect(await kept(idle)).toBe(false);
    expect(await kept(granted.clientId)).toBe(true);
    expect(await kept(pending)).toBe(true);
    expect(await kept(young)).toBe(true);
    // The purged client is unknown: it must register again.
    const again = await send(
      authorizePath({ client_id: idle, code_challenge: (await pkce()).challenge }),
      { session },
    );
    await expectRefusedPage(again, /No client is registered with this client_id/);
  });
});

describe("a client named by its metadata document (CIMD)", () => {
  it("is fetched without following redirects, shown by its host, and gets a key", async () => {
    const { session, account } = await signUp();
    const server = documents({ [DOCUMENT_ID]: documentOf() });
    const { verifier, challenge } = await pkce();
    const { page, grantId } = await openConsent(
      {
        client_id: DOCUMENT_ID,
        code_challenge: challenge,
        redirect_uri: "https://agent.example/callback",
      },
      session,
      server.send,
    );
    expect(server.fetched).toEqual([DOCUMENT_ID]);
    expect(page.querySelector(".facts")?.text).toContain("agent.example");
    expect(page.querySelector(".notice")).toBeNull(); // not a self-registered client
    const { code } = await codeOf(await allow(grantId, session, undefined, {}, server.send));
    const response = await token({
      grant_type: "authorization_code",
      code,
      client_id: DOCUMENT_ID,
      redirect_uri: "https://agent.example/callback",
      code_verifier: verifier,
    });
    expect(response.status).toBe(200);
    expect(
      await count(
        "api_keys",
        "account_id = ?1 AND label = 'Agent Desktop' AND audience = '/mcp'",
        account.id,
      ),
    ).toBe(1);
  });

  it("refuses a document that is not where it says, redirects, is too large, carries a secret or is not JSON", async () => {
    const { session } = await signUp();
    const { challenge } = await pkce();
    const cases: Array<[() => Response, RegExp]> = [
      [documentOf({ client_id: "https://agent.example/other.json" }), /does not name itself/],
      [
        () => new Response(null, { status: 302, headers: { Location: "http://169.254.169.254/" } }),
        /responded with 302.*redirects are not followed/,
      ],
      [documentOf({ client_name: "x".repeat(6000) }), /at most 5120 bytes/],
      [documentOf({ client_secret: "s3cret" }), /must not carry a client secret/],
      [() => new Response("<html>", { headers: { "Content-Type": "text/html" } }), /is not JSON/],
      [documentOf({ redirect_uris: ["javascript:alert(1)"] }), /redirect_uris\.0 must be https/],
      [documentOf({ client_name: "" }), /client_name must be 1 to/],
    ];
    for (const [serve, text] of cases) {
      const server = documents({ [DOCUMENT_ID]: serve });
      await expectRefusedPage(
        await server.send(
          authorizePath({
            client_id: DOCUMENT_ID,
            code_challenge: challenge,
            redirect_uri: "https://agent.example/callback",
          }),
          { session },
        ),
        text,
      );
    }
  });

  it("never fetches a client_id on a private host, another port, plain http or without a path (SSRF)", async () => {
    const { session } = await signUp();
    const { challenge } = await pkce();
    const server = documents({});
    for (const [clientId, text] of [
      ["https://127.0.0.1/client.json", /public host/],
      ["https://[::1]/client.json", /public host/],
      ["https://localhost/client.json", /public host/],
      ["https://metadata.internal/client.json", /public host/],
      ["https://intranet/client.json", /public host/],
      ["https://agent.example:8443/client.json", /default https port/],
      ["https://agent.example", /normal form|must have a path/],
      ["https://agent.example/", /must have a path/],
      ["https://user@agent.example/client.json", /credentials/],
      ["https://agent.example/a/../client.json", /normal form/],
    ] as const) {
      await expectRefusedPage(
        await server.send(authorizePath({ client_id: clientId, code_challenge: challenge }), {
          session,
        }),
        text,
      );
    }
    await expectRefusedPage(
      await server.send(
        authorizePath({ client_id: "http://agent.example/client.json", code_challenge: challenge }),
        { session },
      ),
      /No client is registered/,
    );
    expect(server.fetched).toEqual([]);
  });
});

describe("attacks", () => {
  it("a flood of authorizations naming documents from one address stops fetching at its limit", async () => {
    const server = documents({ [DOCUMENT_ID]: documentOf() });
    const { challenge } = await pkce();
    const address = freshAddress();
    const path = authorizePath({
      client_id: DOCUMENT_ID,
      code_challenge: challenge,
      redirect_uri: "https://agent.example/callback",
    });
    for (let i = 0; i < env.TEST_PLATFORM_LIMIT; i++) {
      expect((await server.send(path, { address })).status).toBe(200);
    }
    const refused = await server.send(path, { address });
    await expectError(refused, 429, "rate_limited", /client metadata documents fetched/);
    expect(refused.headers.get("Retry-After")).toBe("60");
    expect(server.fetched).toHaveLength(env.TEST_PLATFORM_LIMIT);
    expect((await server.send(path, { address: freshAddress() })).status).toBe(200);
  });

  it("a token for another resource: refused at the authorization (a page) and at the token endpoint", async () => {
    const { session } = await signUp();
    const clientId = await register();
    const { challenge } = await pkce();
    for (const resource of [
      "https://evil.example/mcp",
      "http://localhost:8787/v1",
      "http://localhost:8787/mcp/",
      "http://localhost:8788/mcp",
      "https://localhost:8787/mcp",
      "http://[::1]:8787/mcp",
      "",
    ]) {
      const page = await expectRefusedPage(
        await send(authorizePath({ client_id: clientId, code_challenge: challenge, resource }), {
          session,
        }),
        `This server grants access to http://localhost:8787/mcp and http://127.0.0.1:8787/mcp alone, not to ${JSON.stringify(resource)}.`,
      );
      const back = new URL(page.querySelector("main a")?.getAttribute("href") ?? "");
      expect(back.searchParams.get("error")).toBe("invalid_target");
      expect(back.searchParams.get("iss")).toBe(ORIGIN);
    }
    const got = await codeFor(session, { client_id: clientId });
    await expectOAuthError(
      await redeem(got, { resource: "https://evil.example/mcp" }),
      400,
      "invalid_target",
    );
    expect(await count("oauth_grants", "id = ?1 AND key_id IS NOT NULL", got.grantId)).toBe(0);
  });

  it("grants the MCP server at each of the API's addresses: the grant's resource is the one asked (none: the first), and the token names no other", async () => {
    const { session } = await signUp();
    for (const [asked, granted] of [
      ["http://127.0.0.1:8787/mcp", "http://127.0.0.1:8787/mcp"],
      ["http://localhost:8787/mcp", "http://localhost:8787/mcp"],
      [undefined, "http://localhost:8787/mcp"],
    ] as const) {
      const got = await codeFor(session, { resource: asked });
      expect(await count("oauth_grants", "id = ?1 AND resource = ?2", got.grantId, granted)).toBe(
        1,
      );
      const other = granted.includes("127.0.0.1")
        ? "http://localhost:8787/mcp"
        : "http://127.0.0.1:8787/mcp";
      await expectOAuthError(
        await redeem(got, { resource: other }),
        400,
        "invalid_target",
        new RegExp(`grants access to ${granted.replaceAll(".", "\\.")} alone`),
      );
      expect((await redeem(got, { resource: granted })).status).toBe(200);
    }
  });

  it("no PKCE, plain PKCE, or a wrong verifier: no code, or no token", async () => {
    const { session } = await signUp();
    const clientId = await register();
    const { challenge } = await pkce();
    await expectRefusedPage(
      await send(authorizePath({ client_id: clientId }), { session }),
      /PKCE is required/,
    );
    await expectRefusedPage(
      await send(
        authorizePath({
          client_id: clientId,
          code_challenge: challenge,
          code_challenge_method: "plain",
        }),
        { session },
      ),
      /must be "S256"/,
    );
    await expectRefusedPage(
      await send(
        authorizePath({
          client_id: clientId,
          code_challenge: challenge,
          code_challenge_method: undefined,
        }),
        { session },
      ),
      /must be "S256"/,
    );
    await expectRefusedPage(
      await send(authorizePath({ client_id: clientId, code_challenge: "short" }), { session }),
      /not an S256 challenge/,
    );
    const got = await codeFor(session, { client_id: clientId });
    await expectOAuthError(
      await redeem(got, { code_verifier: (await pkce()).verifier }),
      400,
      "invalid_grant",
      /does not match/,
    );
    // A failed attempt spends nothing: the client's own request, with its verifier, gets the key.
    expect(await count("oauth_grants", "id = ?1 AND used_at IS NULL", got.grantId)).toBe(1);
    expect((await redeem(got)).status).toBe(200);
    const other = await codeFor(session, { client_id: clientId });
    const { code_verifier: _, ...withoutVerifier } = {
      code_verifier: "",
      grant_type: "authorization_code",
      code: other.code,
      client_id: clientId,
      redirect_uri: REDIRECT,
    };
    await expectOAuthError(
      await token(withoutVerifier),
      400,
      "invalid_request",
      /code_verifier is required/,
    );
  });

  it("a changed redirect URI: no consent page for an unregistered one, no token for a different one", async () => {
    const { session } = await signUp();
    const clientId = await register();
    const { challenge } = await pkce();
    const page = await expectRefusedPage(
      await send(
        authorizePath({
          client_id: clientId,
          code_challenge: challenge,
          redirect_uri: "https://evil.example/cb",
        }),
        { session },
      ),
      /not one that Claude registered/,
    );
    expect(page.querySelector("main a")).toBeNull(); // no way back to a place nobody registered
    const got = await codeFor(session, { client_id: clientId });
    await expectOAuthError(
      await redeem(got, { redirect_uri: "http://127.0.0.1:43117/other" }),
      400,
      "invalid_grant",
      /redirect_uri differs/,
    );
  });

  it("a code redeemed again by its own client gets no second key and ends the first (RFC 9700 4.2.4); anyone else holding the used code ends nothing; another client's code gets none", async () => {
    const { session } = await signUp();
    const got = await codeFor(session);
    const first = await (await redeem(got)).json<{ access_token: string }>();
    expect(await apiView(first.access_token)).toMatchObject({ audience: "/mcp" });
    // Whoever holds the used code without the client's verifier: the check it fails, nothing more.
    const thief = await register({ client_name: "Thief" });
    for (const [extra, text] of [
      [{ code_verifier: (await pkce()).verifier }, /does not match the code_challenge/],
      [{ client_id: thief }, /issued to another client/],
      [{ redirect_uri: "http://127.0.0.1:43117/other" }, /redirect_uri differs/],
      [{ code_verifier: "short" }, /43 to 128 unreserved characters/],
      [
        { resource: "http://127.0.0.1:8787/mcp" },
        /grants access to http:\/\/localhost:8787\/mcp alone/,
      ],
    ] as const) {
      const refused = await redeem(got, extra);
      await expectOAuthError(
        refused,
        400,
        extra.resource ? "invalid_target" : "invalid_grant",
        text,
      );
    }
    expect(await apiView(first.access_token)).toMatchObject({ audience: "/mcp" });
    // The client itself again (a retry after a lost response, or a thief with its verifier too).
    await expectOAuthError(
      await redeem(got),
      400,
      "invalid_grant",
      /^This code was already used; the key it made is now revoked\.$/,
    );
    expect(await apiView(first.access_token)).toBe("refused");
    await expectOAuthError(
      await redeem({ ...got, code: "nope" }),
      400,
      "invalid_grant",
      /^The code is not valid\.$/,
    );

    const stolen = await codeFor(session);
    await expectOAuthError(
      await redeem({ ...stolen, clientId: thief }),
      400,
      "invalid_grant",
      /issued to another client/,
    );
    expect(await count("api_keys", "label = 'Thief'")).toBe(0);
  });

  it("consent posted from another origin, or not as JSON, decides nothing", async () => {
    const { session } = await signUp();
    const clientId = await register();
    const { grantId } = await openConsent(
      { client_id: clientId, code_challenge: (await pkce()).challenge },
      session,
    );
    for (const origin of [
      "https://evil.example",
      "null",
      null,
      "http://localhost:8788.evil.example",
    ]) {
      await expectError(
        await allow(grantId, session, undefined, { origin }),
        403,
        "cross_origin_request",
      );
    }
    await expectError(
      await send(`/api/oauth/grants/${grantId}/allow`, {
        body: "scopes=pets:read",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        session,
      }),
      403,
      "json_required",
    );
    // A GET (a link, an image) is no decision either.
    const get = await send(`/api/oauth/grants/${grantId}/allow`, { session });
    expect(get.status).toBe(405);
    expect(await count("oauth_grants", "id = ?1 AND code_hash IS NULL", grantId)).toBe(1);
  });

  it("scopes beyond the consent: a decision may only narrow what was asked, and the key has what was allowed", async () => {
    const { session } = await signUp();
    const clientId = await register();
    const { verifier, challenge } = await pkce();
    const { grantId } = await openConsent(
      { client_id: clientId, code_challenge: challenge, scope: "pets:read" },
      session,
    );
    const body = await expectError(
      await allow(grantId, session, {
        scopes: ["pets:read", "pets:write"],
        expiresInSeconds: null,
      }),
      400,
      "validation_failed",
      /pets:write was not asked by Claude/,
    );
    expect(body.details).toEqual([{ field: "scopes", message: expect.any(String) }]);
    for (const bad of [
      { scopes: [], expiresInSeconds: null },
      { scopes: ["admin"], expiresInSeconds: null },
      { scopes: ["pets:read"], expiresInSeconds: 5 },
      { scopes: ["pets:read"] },
    ]) {
      await expectError(await allow(grantId, session, bad), 400, "validation_failed");
    }
    // A scope this server does not know is no way in: it is left out of what may be ticked.
    const widened = await openConsent(
      { client_id: clientId, code_challenge: challenge, scope: "pets:read admin" },
      session,
    );
    expect(allowAsShown(widened.page).scopes).toEqual(["pets:read"]);
    await expectError(
      await allow(widened.grantId, session, { scopes: ["admin"], expiresInSeconds: null }),
      400,
      "validation_failed",
    );
    const { code } = await codeOf(
      await allow(grantId, session, { scopes: ["pets:read"], expiresInSeconds: null }),
    );
    const tokens = await (await redeem({ clientId, verifier, code })).json<{
      access_token: string;
      scope: string;
      expires_in?: number;
    }>();
    expect(tokens.scope).toBe("pets:read");
    expect(tokens.expires_in).toBeUndefined();
    expect(await apiView(tokens.access_token)).toMatchObject({ scopes: ["pets:read"] });
  });

  it("a revoked grant: its key, revoked on the platform, is refused by the API's verifier; a rotated one keeps its audience", async () => {
    const { session } = await signUp();
    const got = await codeFor(session);
    const { access_token: key } = await (await redeem(got)).json<{ access_token: string }>();
    const [listed] = await (await send("/api/keys", { session })).json<Array<{ id: number }>>();
    const rotated = await send(`/api/keys/${listed?.id}/rotate`, {
      json: { graceSeconds: 0 },
      session,
    });
    const fresh = await rotated.json<{ id: number; key: string; curl: string; label: string }>();
    expect(fresh.label).toBe("Claude");
    expect(await apiView(fresh.key)).toMatchObject({ audience: "/mcp" });
    // Its first call, as the page offers it, goes to /mcp: /v1 would refuse it.
    expect(fresh.curl).toMatch(/ http:\/\/localhost:8787\/mcp$/);
    expect(fresh.curl).toContain('"method":"tools/list"');
    // The keys page and the key's page say where it works.
    const list = parse(await (await send("/keys", { session })).text());
    // The old key ended at once (no grace), so the page's default filter (active) shows the new one.
    const badged = list
      .querySelectorAll("table.keys tbody th")
      .map((th) => th.text.replace(/\s+/g, " ").trim());
    expect(badged).toEqual([`Claude MCP client ${displayPrefix(fresh.key)}…`]);
    const own = parse(await (await send(`/keys/${fresh.id}`, { session })).text());
    expect(own.querySelector(".facts")?.text).toMatch(/Works at\s*MCP client the MCP server alone/);
    expect(await apiView(key)).toBe("expired");
    const revoked = await send(`/api/keys/${fresh.id}/revoke`, { json: {}, session });
    expect(revoked.status).toBe(200);
    expect(await apiView(fresh.key)).toBe("refused");
  });

  it("another account's grant id responds as one that does not exist, and stays undecided", async () => {
    const victim = await signUp({ displayName: "Victim" });
    const attacker = await signUp({ displayName: "Attacker" });
    const { grantId } = await openConsent(
      { client_id: await register(), code_challenge: (await pkce()).challenge },
      victim.session,
    );
    for (const action of ["allow", "deny"]) {
      const body = action === "allow" ? { scopes: ["pets:read"], expiresInSeconds: null } : {};
      const theirs = await send(`/api/oauth/grants/${grantId}/${action}`, {
        json: body,
        session: attacker.session,
      });
      const none = await send(`/api/oauth/grants/grt_doesnotexist/${action}`, {
        json: body,
        session: attacker.session,
      });
      const a = await expectError(theirs, 404, "not_found");
      expect(await expectError(none, 404, "not_found")).toEqual(a);
      await expectError(
        await send(`/api/oauth/grants/${grantId}/${action}`, { json: body }),
        401,
        "unauthorized",
      );
    }
    expect(await count("oauth_grants", "id = ?1 AND code_hash IS NULL", grantId)).toBe(1);
  });

  it("an open redirect through the client's metadata: a document naming another site is refused, and no refusal ever redirects", async () => {
    const { session } = await signUp();
    const { challenge } = await pkce();
    const server = documents({
      [DOCUMENT_ID]: documentOf({
        redirect_uris: ["https://agent.example/callback", "https://phish.example/login"],
      }),
    });
    const page = await expectRefusedPage(
      await server.send(
        authorizePath({
          client_id: DOCUMENT_ID,
          code_challenge: challenge,
          redirect_uri: "https://phish.example/login",
          scope: "nonsense",
        }),
        { session },
      ),
      /redirect URI on another site \(phish\.example\)/,
    );
    expect(page.querySelector("main a")).toBeNull();
    // Signed out, or with a request that fails later, the platform still returns a page of its own.
    const registered = await register();
    const signedOut = await send(
      authorizePath({ client_id: registered, code_challenge: challenge, response_type: "token" }),
    );
    const refusal = await expectRefusedPage(signedOut, /response_type must be "code"/);
    expect(refusal.querySelector("main a")?.getAttribute("href")).toMatch(
      /^http:\/\/127\.0\.0\.1:43117\/callback\?error=unsupported_response_type/,
    );
  });

  it("registers a client that asks for a secret as a public one, and says so (RFC 7591 3.2.1); a metadata document may not ask", async () => {
    const { session } = await signUp();
    for (const method of ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]) {
      const response = await send("/oauth/register", {
        json: {
          client_name: "Asks for a secret",
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: method,
          grant_types: ["authorization_code", "refresh_token"],
        },
        origin: null,
      });
      expect(response.status).toBe(201);
      const registered = await response.json<Record<string, unknown>>();
      expect(registered).toEqual({
        client_id: expect.stringMatching(/^mcpc_/),
        client_id_issued_at: expect.any(Number),
        client_name: "Asks for a secret",
        redirect_uris: [REDIRECT],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      });
      // It connects as any public client: PKCE, no secret.
      const got = await codeFor(session, { client_id: registered.client_id as string });
      expect((await redeem(got)).status).toBe(200);
    }
    const server = documents({
      [DOCUMENT_ID]: documentOf({ token_endpoint_auth_method: "client_secret_basic" }),
    });
    await expectRefusedPage(
      await server.send(
        authorizePath({
          client_id: DOCUMENT_ID,
          code_challenge: (await pkce()).challenge,
          redirect_uri: "https://agent.example/callback",
        }),
        { session },
      ),
      /token_endpoint_auth_method must be "none": clients here are public and use PKCE/,
    );
  });

  it("registration refuses unsafe redirect URIs and secrets, and a code expires after 60 s", async () => {
    for (const [metadata, error, text] of [
      [{ redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri", /private-use scheme/],
      [
        { redirect_uris: ["http://evil.example/cb"] },
        "invalid_redirect_uri",
        /http only on a loopback/,
      ],
      [{ redirect_uris: ["https://app.example/cb#frag"] }, "invalid_redirect_uri", /fragment/],
      [{ redirect_uris: [] }, "invalid_redirect_uri", /1 to 10 URIs/],
      [
        { token_endpoint_auth_method: ["client_secret_basic"] },
        "invalid_client_metadata",
        /token_endpoint_auth_method must be a string/,
      ],
      [{ client_name: "<\u0007>" }, "invalid_client_metadata", /control characters/],
    ] as const) {
      const response = await send("/oauth/register", {
        json: { client_name: "ok", redirect_uris: [REDIRECT], ...metadata },
        origin: null,
      });
      await expectOAuthError(response, 400, error, text);
    }
    const clock = { now: Date.now() + 121_000 };
    const later = platformWith({ clock: () => clock.now });
    const { session } = await signUp();
    const got = await codeFor(session);
    await expectOAuthError(
      await redeem(got, {}, later),
      400,
      "invalid_grant",
      /^The code has expired\.$/,
    );
    // A used code is remembered past its minute: its client's replay still ends the key.
    const used = await codeFor(session);
    const { access_token: key } = await (await redeem(used)).json<{ access_token: string }>();
    await expectOAuthError(await redeem(used, {}, later), 400, "invalid_grant", /now revoked/);
    expect(await apiView(key)).toBe("refused");
  });

  it("a code whose redemption made no key (the account at its limit): its replay revokes nothing, and says so", async () => {
    const { session, account } = await signUp();
    const got = await codeFor(session);
    for (let i = 0; i < 10; i++) {
      const created = await send("/api/keys", {
        json: { label: `k${i}`, scopes: ["pets:read"] },
        session,
      });
      expect(created.status).toBe(201);
    }
    await expectOAuthError(await redeem(got), 400, "invalid_grant", /has 10 active keys/);
    await expectOAuthError(
      await redeem(got),
      400,
      "invalid_grant",
      /^This code was already used\.$/,
    );
    expect(await count("api_keys", "account_id = ?1 AND revoked_at IS NULL", account.id)).toBe(10);
  });

  it("a hostile client name is text on the consent page; at the key limit Allow is disabled and refused", async () => {
    const { session } = await signUp();
    const clientId = await register({ client_name: '<script>alert(1)</script>"><img src=x>' });
    const { page, grantId } = await openConsent(
      { client_id: clientId, code_challenge: (await pkce()).challenge },
      session,
    );
    expect(page.querySelectorAll("script:not([src])")).toHaveLength(0);
    expect(page.querySelector("img")).toBeNull();
    expect(page.querySelector("h1")?.text).toContain("<script>alert(1)</script>");
    for (let i = 0; i < 10; i++) {
      const created = await send("/api/keys", {
        json: { label: `k${i}`, scopes: ["pets:read"] },
        session,
      });
      expect(created.status).toBe(201);
    }
    const full = await openConsent(
      { client_id: clientId, code_challenge: (await pkce()).challenge },
      session,
    );
    expect(
      full.page
        .querySelector("form[data-action=allow] button[type=submit]")
        ?.hasAttribute("disabled"),
    ).toBe(true);
    await expectError(await allow(grantId, session), 409, "key_limit_reached");
  });
});
