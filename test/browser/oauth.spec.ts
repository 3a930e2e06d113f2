// An MCP client connects by OAuth, as docs/agents.md says: the official SDK client's flow
// (@modelcontextprotocol/client) against the real `npm run dev`, its user in Chromium with a
// virtual passkey: the first 401, the consent page (a new account, then Allow, every scope the
// client asked ticked), the code on the client's loopback redirect, the token (an ordinary key
// of the account, audience /mcp), refused on /v1, and the first tool responses, a create among
// them. It prints the clicks from the first 401 to the first tool result, a second client's with
// the session still open, a step-up's after a 403 and a third client's after signing out, and
// keeps screenshots of the consent page at 390 px and 1280 px wide
// (test-results/browser/<this test>/). mcp-remote's way: mcp-remote.spec.ts.
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/client";
import {
  auth,
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { expect, test } from "@playwright/test";
import { authenticator, hand, passkeyBrowser } from "./person.ts";

const PLATFORM = process.env.BROWSER_PLATFORM as string;
/** The client's loopback redirect (RFC 8252): served by a route of the page, on no real port. */
const CALLBACK = `http://127.0.0.1:${Number(process.env.BROWSER_API_PORT ?? 8792) + 5}/callback`;
/** Where the MCP server publishes its Protected Resource Metadata (RFC 9728). */
const PRM_PATH = "/.well-known/oauth-protected-resource/mcp";

type ClientInformation = Parameters<NonNullable<OAuthClientProvider["saveClientInformation"]>>[0];
type Tokens = Parameters<OAuthClientProvider["saveTokens"]>[0];

/** The client side of the flow, as an MCP host keeps it; the "browser" it opens is the page. */
class Agent implements OAuthClientProvider {
  readonly redirectUrl = CALLBACK;
  readonly clientMetadata;
  authorizationUrl: URL | undefined;
  #client: ClientInformation | undefined;
  #tokens: Tokens | undefined;
  #verifier = "";
  #discovery: OAuthDiscoveryState | undefined;

  constructor(name: string) {
    this.clientMetadata = { client_name: name, redirect_uris: [CALLBACK] };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(client: ClientInformation) {
    this.#client = client;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: Tokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  discoveryState() {
    return this.#discovery;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.#discovery = state;
  }
}

test("an MCP client connects by OAuth: consent with a passkey, a key for /mcp alone, the first tool result", async ({
  page,
  context,
  request,
  baseURL,
}, testInfo) => {
  test.setTimeout(120_000);
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  const device = await authenticator(await passkeyBrowser(context, page));
  // The client's loopback listener: it reads the redirect and tells the person to go back.
  const redirects: URL[] = [];
  await page.route(`${CALLBACK}**`, async (route) => {
    redirects.push(new URL(route.request().url()));
    await route.fulfill({
      contentType: "text/html",
      body: "<p>Connected. You may close this window.</p>",
    });
  });

  const server = new URL("/mcp", baseURL);
  // The MCP server names the platform in its metadata (RFC 9728), at the address used.
  const prm = await request.get(new URL(PRM_PATH, baseURL).href);
  expect(await prm.json()).toMatchObject({
    resource: server.href,
    authorization_servers: [PLATFORM],
  });

  /** The flow up to the consent page: the client's first 401 and its authorization URL. */
  async function firstContact(agent: Agent) {
    const transport = new StreamableHTTPClientTransport(server, { authProvider: agent });
    await expect(
      new Client({ name: "agent", version: "1.0.0" }).connect(transport),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    return transport;
  }

  /** The code's way back to the client (through `transport`, or the SDK's `auth`), and its key. */
  async function finish(agent: Agent, transport?: StreamableHTTPClientTransport) {
    await expect.poll(() => redirects.length).toBe(1);
    const back = redirects.pop() as URL;
    expect(back.searchParams.get("iss")).toBe(PLATFORM);
    expect(back.searchParams.get("state")).toBe(agent.authorizationUrl?.searchParams.get("state"));
    if (transport) await transport.finishAuth(back.searchParams);
    else
      expect(
        await auth(agent, {
          serverUrl: server,
          authorizationCode: back.searchParams.get("code") ?? "",
          iss: back.searchParams.get("iss") ?? "",
        }),
      ).toBe("AUTHORIZED");
    const key = agent.tokens()?.access_token ?? "";
    expect(key).toMatch(/^psk_/);
    return key;
  }

  /** The first tool responses: every tool the asked scopes allow is listed, and a create works. */
  async function firstToolResponse(agent: Agent) {
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(server, { authProvider: agent }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["listPets", "createPet"]));
    const response = await client.callTool({ name: "listPets", arguments: {} });
    expect(response.isError).toBeFalsy();
    const created = await client.callTool({
      name: "createPet",
      arguments: { name: `Made by ${agent.clientMetadata.client_name}`, categoryId: 3 },
    });
    expect(created.isError, JSON.stringify(created)).toBeFalsy();
    await client.close();
  }

  /** The consent page ticks exactly the scopes the client asked (docs/agents.md). */
  async function expectAskedScopesTicked(agent: Agent) {
    const asked = agent.authorizationUrl?.searchParams.get("scope")?.split(" ") ?? [];
    expect(asked).toEqual(expect.arrayContaining(["pets:read", "pets:write"]));
    for (const scope of ["pets:read", "pets:write", "orders:read"]) {
      const box = page.getByRole("checkbox", { name: new RegExp(scope) });
      if (asked.includes(scope)) await expect(box).toBeChecked();
      else await expect(box).toHaveCount(0);
    }
  }

  const person = hand(page);
  const started = Date.now();
  const agent = new Agent("Playwright agent");
  const transport = await firstContact(agent);
  expect(agent.authorizationUrl?.origin).toBe(PLATFORM);
  expect(agent.authorizationUrl?.searchParams.get("code_challenge_method")).toBe("S256");
  expect(agent.authorizationUrl?.searchParams.get("resource")).toBe(server.href);

  await test.step("the consent page: a new account with a passkey, then Allow", async () => {
    await page.goto(agent.authorizationUrl?.href ?? "");
    await expect(
      page.getByRole("heading", { name: "Connect Playwright agent to the Pet Store API" }),
    ).toBeVisible();
    await person.click(page.getByText("No account yet?"));
    await person.type(page.getByLabel("Your name, or your team's"), "Agent owner");
    await person.click(page.getByRole("button", { name: "Create account with a passkey" }));
    // The welcome after sign-up (a second passkey, recovery codes), then back to the consent.
    await expect(page.getByRole("heading", { name: "Your account is ready" })).toBeVisible();
    await person.click(page.getByRole("link", { name: "Continue where you were" }));
    await expect(
      page.getByRole("heading", {
        name: "Allow Playwright agent to use the Pet Store API as you?",
      }),
    ).toBeVisible();
    await expectAskedScopesTicked(agent);
    for (const [width, height] of [
      [390, 844],
      [1280, 800],
    ] as const) {
      await page.setViewportSize({ width, height });
      const path = testInfo.outputPath(`consent-${width}.png`);
      await page.screenshot({ path, fullPage: true });
      await testInfo.attach(`consent at ${width} px`, { path, contentType: "image/png" });
    }
    await person.click(page.getByRole("button", { name: "Allow" }));
    await expect(page.getByText("Connected. You may close this window.")).toBeVisible();
  });

  const key = await finish(agent, transport);
  await test.step("the key is refused on /v1 and listed on the platform under the client's name", async () => {
    const v1 = await request.get(new URL("/v1/pets", baseURL).href, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(v1.status()).toBe(401);
    expect(v1.headers()["www-authenticate"]).toBe('Bearer realm="petstore", error="invalid_token"');
    expect((await v1.json()).message).toMatch(/granted to an MCP client/);
    await page.goto(`${PLATFORM}/keys`);
    await expect(
      page.getByRole("rowheader", { name: "Playwright agent MCP client" }),
    ).toBeVisible();
  });

  await firstToolResponse(agent);
  console.log(
    `OAuth, new account: ${person.clicks} clicks and ${((Date.now() - started) / 1000).toFixed(1)} s from the first 401 to the first tool result (a create)`,
  );
  expect(person.clicks).toBe(5);

  await test.step("a second client, the session still open: one click", async () => {
    const second = hand(page);
    const other = new Agent("Second agent");
    const secondTransport = await firstContact(other);
    await page.goto(other.authorizationUrl?.href ?? "");
    await second.click(page.getByRole("button", { name: "Allow" }));
    await finish(other, secondTransport);
    await firstToolResponse(other);
    expect(second.clicks).toBe(1);
  });

  await test.step("a step-up: a client allowed to read meets a 403 on createPet; one click lets it write", async () => {
    const reader = new Agent("Reading agent");
    const readerTransport = await firstContact(reader);
    await page.goto(reader.authorizationUrl?.href ?? "");
    // The holder narrows this one to reading (the page would allow all it asked: the scopes the
    // MCP server's 401 names, so orders:read only when a client asks for it itself).
    for (const box of await page.getByRole("checkbox", { name: /pets:write|orders:read/ }).all()) {
      await box.uncheck();
    }
    await page.getByRole("button", { name: "Allow" }).click();
    await finish(reader, readerTransport);
    expect(reader.tokens()?.scope).toBe("pets:read");
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(server, { authProvider: reader }));
    // The 403 insufficient_scope names pets:write; the SDK asks for it (a new authorization).
    const stepped = reader.authorizationUrl;
    await expect(
      client.callTool({ name: "createPet", arguments: { name: "Stepped up", categoryId: 3 } }),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    expect(reader.authorizationUrl).not.toBe(stepped);
    expect(reader.authorizationUrl?.searchParams.get("scope")?.split(" ")).toContain("pets:write");
    const stepUp = hand(page);
    await page.goto(reader.authorizationUrl?.href ?? "");
    await expectAskedScopesTicked(reader);
    await stepUp.click(page.getByRole("button", { name: "Allow" }));
    await finish(reader);
    expect(reader.tokens()?.scope?.split(" ")).toContain("pets:write");
    const again = new Client({ name: "agent", version: "1.0.0" });
    await again.connect(new StreamableHTTPClientTransport(server, { authProvider: reader }));
    const created = await again.callTool({
      name: "createPet",
      arguments: { name: "Stepped up", categoryId: 3 },
    });
    expect(created.isError, JSON.stringify(created)).toBeFalsy();
    await again.close();
    await client.close().catch(() => {});
    expect(stepUp.clicks).toBe(1);
  });

  await test.step("a third client after signing out: two clicks (sign in, Allow)", async () => {
    await page.goto(`${PLATFORM}/keys`);
    // Until the person signs in, the authenticator answers nothing: the start page's and the
    // consent page's autofill (conditional mediation) would otherwise sign in by itself.
    await device.answers(false);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(`${PLATFORM}/`);
    const third = hand(page);
    const other = new Agent("Third agent");
    const thirdTransport = await firstContact(other);
    await page.goto(other.authorizationUrl?.href ?? "");
    const signIn = page.getByRole("button", { name: "Sign in with a passkey" });
    await expect(signIn).toBeVisible();
    await device.answers(true);
    await third.click(signIn);
    await third.click(page.getByRole("button", { name: "Allow" }));
    await finish(other, thirdTransport);
    await firstToolResponse(other);
    expect(third.clicks).toBe(2);
  });
  expect(problems).toEqual([]);
});
