// The OAuth server's rules one by one (platform/src/oauth/), each at its edges: which client
// documents are fetched and taken, which redirect URIs a client may register and which it may
// then use, what an authorization request and a token request may ask. The flows through the
// endpoints, and the attacks on them: oauth.test.ts. Each rule here is one a mutant changed
// without a flow noticing (npm run mutation).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Grant } from "../../platform/src/db/oauth-grants.ts";
import { authorizationProblem, singleParams } from "../../platform/src/oauth/authorization.ts";
import {
  ClientError,
  clientFromDocument,
  hostOf,
  newClientId,
  parseClientMetadata,
  redirectMatches,
  registeredClient,
} from "../../platform/src/oauth/clients.ts";
import { withParams } from "../../platform/src/oauth/responses.ts";
import { codeVerdict, type TokenRequest } from "../../platform/src/oauth/token.ts";
import { base64url, sha256 } from "../../src/encoding.ts";
import { send } from "./helpers.ts";
import { expectOAuthError, pkce } from "./oauth-client.ts";

/** A fetch that serves `document` at every URL (as JSON), and records what it was asked. */
function serving(document: (url: string) => unknown = (url) => validDocument(url)) {
  const fetched: string[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    fetched.push(String(input));
    expect(init?.redirect).toBe("manual");
    expect(new Headers(init?.headers).get("Accept")).toBe("application/json");
    expect(init?.signal).toBeInstanceOf(AbortSignal);
    return Response.json(document(String(input)));
  }) as typeof globalThis.fetch;
  return { fetch, fetched };
}

const validDocument = (url: string, fields: Record<string, unknown> = {}) => ({
  client_id: url,
  client_name: "Agent",
  redirect_uris: [`${new URL(url).origin}/callback`],
  ...fields,
});

/** The refusal of `clientId`'s document (a ClientError's message), or "taken". */
async function documentVerdict(
  clientId: string,
  document?: (url: string) => unknown,
): Promise<string> {
  try {
    await clientFromDocument(serving(document).fetch, clientId);
    return "taken";
  } catch (err) {
    if (err instanceof ClientError) return err.message;
    throw err;
  }
}

describe("a client's metadata document (CIMD)", () => {
  it("is fetched only from a public host: never an IP address, a single label or a local-only name", async () => {
    for (const host of [
      "1.2.3.4",
      "127.0.0.1",
      "10.0.0.1",
      "[::1]",
      "[2001:db8::1]",
      "[::ffff:7f00:1]",
      "intranet",
      "localhost",
      "printer.local",
      "a.b.localhost",
      "metadata.internal",
      "router.home.arpa",
      "home.arpa",
    ]) {
      const server = serving();
      await expect(
        clientFromDocument(server.fetch, `https://${host}/client.json`),
        host,
      ).rejects.toThrow("The client_id must name a public host.");
      expect(server.fetched, host).toEqual([]);
    }
    // Names that only look local somewhere in them are public.
    for (const host of [
      "1password.example",
      "agent.example1",
      "local.example.com",
      "internal.example.com",
      "localhost.example.com",
      "app.glocal",
      "app.notinternal",
      "home.arpa.example.com",
      "myhome.arpa",
    ]) {
      expect(await documentVerdict(`https://${host}/client.json`), host).toBe("taken");
    }
  });

  it("is fetched only from https on the default port, at a path, in its normal form, without credentials", async () => {
    for (const [clientId, problem] of [
      ["http://agent.example/client.json", "is not an https URL"],
      ["ftp://agent.example/client.json", "is not an https URL"],
      ["not a url", "is not an https URL"],
      ["https://agent.example:8443/client.json", "must use the default https port"],
      ["https://agent.example", "is not in its normal form"],
      ["https://agent.example/", "must have a path"],
      ["https://AGENT.example/client.json", "is not in its normal form"],
      ["https://user@agent.example/client.json", "must not carry credentials or a fragment"],
      ["https://:pw@agent.example/client.json", "must not carry credentials or a fragment"],
      ["https://agent.example/client.json#x", "must not carry credentials or a fragment"],
    ] as const) {
      expect(await documentVerdict(clientId), clientId).toBe(`The client_id ${problem}.`);
    }
  });

  it("must name itself as its client_id, carry no secret, and keep its https redirects on its own origin", async () => {
    const id = "https://agent.example/client.json";
    const cases: Array<[Record<string, unknown> | unknown, string]> = [
      [{ client_id: "https://agent.example/other.json" }, "does not name itself as its client_id"],
      [{ client_id: undefined }, "does not name itself as its client_id"],
      [{ client_secret: "s" }, "must not carry a client secret"],
      [{ client_secret_expires_at: 0 }, "must not carry a client secret"],
      [
        { redirect_uris: ["https://phish.example/cb"] },
        "names a redirect URI on another site (phish.example); its https redirect URIs must be on agent.example",
      ],
      [
        { redirect_uris: ["https://agent.example:444/cb"] },
        "names a redirect URI on another site (agent.example:444)",
      ],
    ];
    for (const [fields, problem] of cases) {
      expect(
        await documentVerdict(id, (url) => validDocument(url, fields as Record<string, unknown>)),
      ).toContain(problem);
    }
    for (const notAnObject of [null, [], "text", 7]) {
      expect(await documentVerdict(id, () => notAnObject)).toContain(
        "does not name itself as its client_id",
      );
    }
    // Loopback and app redirects may stand beside its own site's.
    const client = await clientFromDocument(
      serving((url) =>
        validDocument(url, {
          client_name: "Agent Desktop",
          redirect_uris: [
            "https://agent.example/cb",
            "http://127.0.0.1/cb",
            "com.example.agent:/cb",
          ],
        }),
      ).fetch,
      id,
    );
    expect(client).toEqual({
      id,
      name: "Agent Desktop",
      host: "agent.example",
      redirectUris: ["https://agent.example/cb", "http://127.0.0.1/cb", "com.example.agent:/cb"],
      kind: "document",
    });
  });

  it("is refused when it cannot be fetched, does not respond with 200, or is not JSON within 5 KiB", async () => {
    const id = "https://agent.example/client.json";
    const responseing = (response: () => Response) =>
      clientFromDocument((async () => response()) as typeof fetch, id).catch(
        (err: Error) => err.message,
      );
    expect(
      await clientFromDocument((() => Promise.reject(new Error("down"))) as typeof fetch, id).catch(
        (err: Error) => err.message,
      ),
    ).toBe("The client's metadata document could not be fetched.");
    expect(await responseing(() => new Response("{}", { status: 301 }))).toBe(
      "The client's metadata document responded with 301, not 200 (redirects are not followed).",
    );
    expect(await responseing(() => new Response("{}", { status: 201 }))).toContain(
      "responded with 201",
    );
    const tooLarge = JSON.stringify(validDocument(id, { pad: "x".repeat(5 * 1024) }));
    for (const body of [tooLarge, "{", new Uint8Array([0x7b, 0xff, 0x7d])]) {
      expect(await responseing(() => new Response(body))).toBe(
        "The client's metadata document is not JSON of at most 5120 bytes.",
      );
    }
    // UTF-8 only, and strictly: a stray byte inside a string is no replacement character.
    const utf8 = (text: string) => new TextEncoder().encode(text);
    const [before, after] = JSON.stringify(validDocument(id)).split('"Agent"');
    const stray = new Uint8Array([...utf8(`${before}"Age`), 0xff, ...utf8(`nt"${after}`)]);
    expect(await responseing(() => new Response(stray))).toBe(
      "The client's metadata document is not JSON of at most 5120 bytes.",
    );
    // A byte order mark before it is no part of the JSON.
    const marked = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(JSON.stringify(validDocument(id)))]);
    expect(await responseing(() => new Response(marked))).toMatchObject({ id });
    // Exactly 5 KiB is within the bound.
    const fits = JSON.stringify(validDocument(id));
    const padded = `${fits.slice(0, -1)},"pad":"${"x".repeat(5 * 1024 - fits.length - 9)}"}`;
    expect(new TextEncoder().encode(padded).length).toBe(5 * 1024);
    expect(await responseing(() => new Response(padded))).toMatchObject({ id });
  });
});

describe("redirect URIs a client may register", () => {
  const problemOf = (uri: string) => {
    const parsed = parseClientMetadata({ client_name: "A", redirect_uris: [uri] }, "registration");
    return parsed.ok ? "allowed" : parsed.problem;
  };

  it("https, loopback http, or a private-use scheme named after a domain; never credentials or a fragment", () => {
    for (const uri of [
      "https://app.example/cb",
      "https://app.example:8443/cb?x=1",
      "http://127.0.0.1/cb",
      "http://127.0.0.1:5000/cb",
      "http://[::1]:5000/cb",
      "http://localhost:5000/cb",
      "com.example.app:/cb",
    ]) {
      expect(problemOf(uri), uri).toBe("allowed");
    }
    for (const [uri, problem] of [
      ["https://user@app.example/cb", "must not carry credentials"],
      ["https://:secret@app.example/cb", "must not carry credentials"],
      ["https://app.example/cb#x", "must not have a fragment"],
      ["https://app.example/cb#", "must not have a fragment"],
      [
        "http://app.example/cb",
        "may use http only on a loopback address (127.0.0.1, [::1], localhost)",
      ],
      [
        "http://127.0.0.2/cb",
        "may use http only on a loopback address (127.0.0.1, [::1], localhost)",
      ],
      [
        "http://localhost.example/cb",
        "may use http only on a loopback address (127.0.0.1, [::1], localhost)",
      ],
      [
        "javascript:alert(1)",
        "must be https, loopback http, or a private-use scheme named after a domain (RFC 8252 7.1)",
      ],
      [
        "myapp:/cb",
        "must be https, loopback http, or a private-use scheme named after a domain (RFC 8252 7.1)",
      ],
      ["/cb", "is not an absolute URI"],
      [`https://app.example/${"a".repeat(2000)}`, "is longer than 2000 characters"],
    ] as const) {
      expect(problemOf(uri), uri).toBe(`redirect_uris.0 ${problem}.`);
    }
    // 2000 characters is the longest allowed.
    const longest = `https://app.example/${"a".repeat(2000 - 20)}`;
    expect(longest.length).toBe(2000);
    expect(problemOf(longest)).toBe("allowed");
  });

  it("says what is wrong with each field, all at once", () => {
    const problem = (metadata: Record<string, unknown>) => {
      const parsed = parseClientMetadata(
        { client_name: "A", redirect_uris: ["https://app.example/cb"], ...metadata },
        "document",
      );
      return parsed.ok ? "allowed" : parsed.problem;
    };
    expect(problem({})).toBe("allowed");
    expect(problem({ redirect_uris: [] })).toBe("redirect_uris must list 1 to 10 URIs.");
    expect(problem({ redirect_uris: Array(11).fill("https://app.example/cb") })).toBe(
      "redirect_uris must list 1 to 10 URIs.",
    );
    expect(problem({ redirect_uris: [7] })).toBe("redirect_uris.0 must be a string.");
    expect(problem({ token_endpoint_auth_method: "client_secret_basic" })).toBe(
      'token_endpoint_auth_method must be "none": clients here are public and use PKCE.',
    );
    expect(problem({ grant_types: ["refresh_token"] })).toBe(
      'grant_types must include "authorization_code".',
    );
    expect(problem({ grant_types: ["authorization_code", "refresh_token"] })).toBe("allowed");
    expect(problem({ response_types: ["token"] })).toBe('response_types may only be ["code"].');
    expect(problem({ client_name: "" })).toMatch(/^client_name must be 1 to/);
    expect(problem({ client_name: "", grant_types: [] })).toMatch(
      /^client_name .*; grant_types must include "authorization_code"\.$/,
    );
    const registration = parseClientMetadata(
      {
        client_name: "A",
        redirect_uris: ["https://app.example/cb"],
        token_endpoint_auth_method: 1,
      },
      "registration",
    );
    expect(registration).toEqual({
      ok: false,
      problem: "token_endpoint_auth_method must be a string.",
    });
    expect(parseClientMetadata(null, "registration")).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^the body /),
    });
  });
});

describe("the redirect URI of a request", () => {
  it("is one the client registered exactly, or a loopback IP's on another port (RFC 8252 7.3)", () => {
    const registered = ["https://app.example/cb", "http://127.0.0.1:4000/cb", "http://[::1]/cb"];
    for (const uri of [
      "https://app.example/cb",
      "http://127.0.0.1:4000/cb",
      "http://127.0.0.1:5000/cb",
      "http://127.0.0.1/cb",
      "http://[::1]:6000/cb",
    ]) {
      expect(redirectMatches(registered, uri), uri).toBe(true);
    }
    for (const uri of [
      "https://app.example/cb/",
      "https://app.example:444/cb",
      "http://127.0.0.1:5000/other",
      "http://127.0.0.1:5000/cb?x=1",
      "http://[::1]:6000/other",
      "http://127.0.0.2:4000/cb",
      "https://127.0.0.1:5000/cb",
      "not a url",
    ]) {
      expect(redirectMatches(registered, uri), uri).toBe(false);
    }
    // A loopback URI matches its own entry whatever stands before it in the list.
    expect(
      redirectMatches(["https://app.example/cb", "http://[::1]/cb"], "http://[::1]:1/cb"),
    ).toBe(true);
    // The port may change on a loopback IP over http alone: not on localhost, not over https.
    expect(redirectMatches(["http://localhost:4000/cb"], "http://localhost:5000/cb")).toBe(false);
    expect(redirectMatches(["https://127.0.0.1:8443/cb"], "https://127.0.0.1:9443/cb")).toBe(false);
    expect(redirectMatches(["http://127.0.0.1:4000/cb"], "http://[::1]:4000/cb")).toBe(false);
  });
});

describe("how a client is shown", () => {
  it("by its site's host, as an app on this computer, or as an app on this device", () => {
    expect(hostOf("https://app.example:8443/cb")).toBe("app.example:8443");
    expect(hostOf("http://127.0.0.1:5000/cb")).toBe("an app on this computer (127.0.0.1:5000)");
    expect(hostOf("com.example.app:/cb")).toBe("an app on this device (com.example.app)");
    expect(
      registeredClient({
        client_id: "mcpc_x",
        client_name: "Claude",
        redirect_uris: JSON.stringify(["http://127.0.0.1:5000/cb", "https://app.example/cb"]),
      }),
    ).toEqual({
      id: "mcpc_x",
      name: "Claude",
      host: "an app on this computer (127.0.0.1:5000)",
      redirectUris: ["http://127.0.0.1:5000/cb", "https://app.example/cb"],
      kind: "registered",
    });
    expect(newClientId()).toMatch(/^mcpc_[A-Za-z0-9_-]{22}$/);
    expect(newClientId()).not.toBe(newClientId());
  });
});

describe("the authorization request", () => {
  const challenge = "a".repeat(43);
  const asked = (q: Record<string, string>) =>
    authorizationProblem(
      { response_type: "code", code_challenge: challenge, code_challenge_method: "S256", ...q },
      env,
    );

  it("takes each parameter once", () => {
    expect(singleParams(new URLSearchParams("a=1&b=2"))).toEqual({ a: "1", b: "2" });
    expect(singleParams(new URLSearchParams("a=1&b=2&a=1"))).toBe("a");
    expect(singleParams(new URLSearchParams("a="))).toEqual({ a: "" });
  });

  it("asks the code flow with an S256 challenge and a state of at most 1000 characters", () => {
    expect(asked({})).toEqual({
      scopes: ["pets:read", "pets:write", "orders:read"],
      resource: "http://localhost:8787/mcp",
    });
    expect(asked({ response_type: "token" })).toEqual({
      error: "unsupported_response_type",
      description: 'The response_type must be "code".',
    });
    // Each an invalid_request (RFC 6749 4.1.2.1); the description says which.
    const problem = (q: Record<string, string>) => {
      const verdict = asked(q) as { error?: string; description?: string };
      if (verdict.error !== undefined) expect(verdict.error).toBe("invalid_request");
      return verdict.description;
    };
    expect(problem({ code_challenge_method: "plain" })).toMatch(/must be "S256"/);
    expect(problem({ code_challenge: "a".repeat(42) })).toMatch(/not an S256 challenge/);
    expect(problem({ code_challenge: "a".repeat(44) })).toMatch(/not an S256 challenge/);
    expect(problem({ code_challenge: `${"a".repeat(42)}=` })).toMatch(/not an S256 challenge/);
    expect(problem({ code_challenge: `x${"a".repeat(43)}` })).toMatch(/not an S256 challenge/);
    expect(problem({ state: "s".repeat(1000) })).toBeUndefined();
    expect(problem({ state: "s".repeat(1001) })).toBe("The state is longer than 1000 characters.");
    const { code_challenge: _, ...withoutChallenge } = {
      response_type: "code",
      code_challenge: "",
      code_challenge_method: "S256",
    };
    expect(authorizationProblem(withoutChallenge, env)).toEqual({
      error: "invalid_request",
      description: "PKCE is required: send a code_challenge (S256).",
    });
  });

  it("leaves out scopes it does not know, and takes all when none is known", () => {
    expect(asked({ scope: "pets:write  openid pets:read" })).toMatchObject({
      scopes: ["pets:write", "pets:read"],
    });
    expect(asked({ scope: "openid offline_access" })).toMatchObject({
      scopes: ["pets:read", "pets:write", "orders:read"],
    });
    expect(asked({ scope: "" })).toMatchObject({
      scopes: ["pets:read", "pets:write", "orders:read"],
    });
  });

  it("names the MCP server at one of the API's addresses, or none (the first)", () => {
    expect(asked({ resource: "http://127.0.0.1:8787/mcp" })).toMatchObject({
      resource: "http://127.0.0.1:8787/mcp",
    });
    expect(asked({ resource: "http://evil.example/mcp" })).toEqual({
      error: "invalid_target",
      description:
        'This server grants access to http://localhost:8787/mcp and http://127.0.0.1:8787/mcp alone, not to "http://evil.example/mcp".',
    });
    const long = `http://evil.example/${"x".repeat(300)}`;
    expect((asked({ resource: long }) as { description: string }).description).toContain(
      `not to ${JSON.stringify(long.slice(0, 200))}.`,
    );
  });
});

describe("a token request's code", () => {
  async function grantFor(verifier: string, fields: Partial<Grant> = {}): Promise<Grant> {
    return {
      id: "grt_x",
      accountId: "acc",
      clientId: "mcpc_client",
      clientName: "Claude",
      redirectUri: "http://127.0.0.1:5000/cb",
      state: null,
      codeChallenge: base64url(await sha256(verifier)),
      resource: "http://localhost:8787/mcp",
      requestedScopes: ["pets:read"],
      scopes: ["pets:read"],
      keyLifetime: null,
      keyId: null,
      expiresAt: 1_000,
      usedAt: null,
      allowedFrom: null,
      ...fields,
    };
  }
  const requestFor = (verifier: string, fields: Partial<TokenRequest> = {}): TokenRequest => ({
    code: "c",
    client_id: "mcpc_client",
    redirect_uri: "http://127.0.0.1:5000/cb",
    code_verifier: verifier,
    ...fields,
  });

  it("is redeemed by its own client's request before it expires, once", async () => {
    const { verifier } = await pkce();
    const grant = await grantFor(verifier);
    expect(await codeVerdict(requestFor(verifier), grant, 999)).toBe("redeem");
    expect(await codeVerdict(requestFor(verifier, { resource: grant.resource }), grant, 999)).toBe(
      "redeem",
    );
    expect(await codeVerdict(requestFor(verifier), grant, 1_000)).toEqual({
      error: "invalid_grant",
      description: "The code has expired.",
    });
    // Used: its own client's request again is a replay, expired or not.
    for (const now of [999, 1_000, 90_000]) {
      expect(await codeVerdict(requestFor(verifier), { ...grant, usedAt: 998 }, now)).toBe(
        "replay",
      );
    }
  });

  it("tells anyone else only what their request got wrong, used code or not", async () => {
    const { verifier } = await pkce();
    for (const usedAt of [null, 998]) {
      const grant = await grantFor(verifier, { usedAt });
      const verdict = (fields: Partial<TokenRequest>) =>
        codeVerdict(requestFor(verifier, fields), grant, 999);
      expect(await verdict({ client_id: "mcpc_other" })).toEqual({
        error: "invalid_grant",
        description: "The code was issued to another client.",
      });
      expect(await verdict({ redirect_uri: "http://127.0.0.1:5001/cb" })).toEqual({
        error: "invalid_grant",
        description: "The redirect_uri differs from the authorization request's.",
      });
      for (const malformed of ["a".repeat(42), "a".repeat(129), `${"a".repeat(42)}+`, ""]) {
        expect(await verdict({ code_verifier: malformed })).toEqual({
          error: "invalid_grant",
          description: "The code_verifier must be 43 to 128 unreserved characters (RFC 7636).",
        });
      }
      expect(await verdict({ code_verifier: `${verifier}x` })).toEqual({
        error: "invalid_grant",
        description: "The code_verifier does not match the code_challenge (S256).",
      });
      expect(await verdict({ resource: "http://127.0.0.1:8787/mcp" })).toEqual({
        error: "invalid_target",
        description: "The code grants access to http://localhost:8787/mcp alone.",
      });
    }
    // A verifier of 43 and of 128 unreserved characters is well formed.
    for (const length of [43, 128]) {
      const long = "a.b_c~d-".repeat(16).slice(0, length);
      expect(await codeVerdict(requestFor(long), await grantFor(long), 999)).toBe("redeem");
    }
  });
});

describe("the token request's form", () => {
  const post = (body: BodyInit, contentType = "application/x-www-form-urlencoded") =>
    send("/oauth/token", { body, headers: { "Content-Type": contentType }, origin: null });
  const form = (fields: Record<string, string> = {}) =>
    new URLSearchParams({
      grant_type: "authorization_code",
      code: "c",
      client_id: "mcpc_x",
      redirect_uri: "http://127.0.0.1:5000/cb",
      code_verifier: "v".repeat(43),
      ...fields,
    }).toString();

  it("is a form of UTF-8, each parameter once, the code grant, every required parameter", async () => {
    // Well formed: it reaches the code, which is unknown.
    for (const contentType of [
      "application/x-www-form-urlencoded",
      "Application/X-WWW-Form-URLEncoded;charset=UTF-8",
      "application/x-www-form-urlencoded ; charset=UTF-8",
    ]) {
      await expectOAuthError(
        await post(form(), contentType),
        400,
        "invalid_grant",
        /^The code is not valid\.$/,
      );
    }
    for (const contentType of [
      "application/json",
      "application/x-www-form-urlencodedx",
      "text/plain; application/x-www-form-urlencoded",
      "",
    ]) {
      await expectOAuthError(
        await post(form(), contentType),
        400,
        "invalid_request",
        /^Send the token request as application\/x-www-form-urlencoded\.$/,
      );
    }
    for (const body of [
      new Uint8Array([0x63, 0x6f, 0x64, 0x65, 0x3d, 0xff]),
      "a".repeat(16 * 1024 + 1),
    ]) {
      await expectOAuthError(
        await post(body),
        400,
        "invalid_request",
        /^The token request must be UTF-8 of at most 16384 bytes\.$/,
      );
    }
    await expectOAuthError(
      await post(`${form()}&code=d`),
      400,
      "invalid_request",
      /^The parameter code is sent more than once\.$/,
    );
    await expectOAuthError(
      await post(form({ grant_type: "refresh_token" })),
      400,
      "unsupported_grant_type",
      /^The grant_type must be "authorization_code" \(no refresh tokens are issued\)\.$/,
    );
    for (const name of ["code", "client_id", "redirect_uri", "code_verifier"]) {
      await expectOAuthError(
        await post(form({ [name]: "" })),
        400,
        "invalid_request",
        new RegExp(`^The parameter ${name} is required\\.$`),
      );
    }
  });
});

describe("the authorization request's client", () => {
  it("must be named", async () => {
    const response = await send(
      `/oauth/authorize?response_type=code&code_challenge=${"a".repeat(43)}&code_challenge_method=S256`,
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("The request names no client_id.");
  });
});

describe("the redirect back to the client", () => {
  it("adds the response's parameters to the query, replacing any of the same name, leaving out nulls", () => {
    expect(
      withParams("http://127.0.0.1:5000/cb?x=1&state=old", {
        code: "c d",
        state: "st",
        iss: "http://localhost:8788",
        error: null,
      }),
    ).toBe("http://127.0.0.1:5000/cb?x=1&state=st&code=c+d&iss=http%3A%2F%2Flocalhost%3A8788");
  });
});
