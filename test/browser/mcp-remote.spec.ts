// mcp-remote (0.15.1, the stdio bridge most desktop MCP hosts use for a remote server) connects
// by OAuth as docs/agents.md tells its users, against the real `npm run dev` at both of the API's
// local addresses, localhost and 127.0.0.1: the host (the official SDK's stdio client) starts it,
// it prints the authorization URL (its browser is a no-op here), the person consents in Chromium
// with a virtual passkey (every scope mcp-remote asked ticked), mcp-remote takes the code on its
// own loopback port, and a createPet goes through the granted key with no second consent. The
// first session after a new sign-in may never respond to the host's `initialize` (mcp-remote's issue
// 344): the host then starts it again, as docs/agents.md says, and it uses the stored key.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { expect, type Page, test } from "@playwright/test";
import { authenticator, hand, passkeyBrowser } from "./person.ts";

const PROXY = path.join(import.meta.dirname, "../../node_modules/mcp-remote/dist/proxy.js");
/** How long the host waits for its `initialize` to get a response before it starts mcp-remote again. */
const INITIALIZE_MS = 15_000;

/** mcp-remote as a host runs it (`npx mcp-remote URL`), its tokens kept in `store`. */
function mcpRemote(url: string, store: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [PROXY, url, "--auth-timeout", "120"],
    env: { ...getDefaultEnvironment(), MCP_REMOTE_CONFIG_DIR: store, BROWSER: "true" },
    stderr: "pipe",
  });
  let log = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    log += chunk.toString();
  });
  const client = new Client({ name: "petstore-host", version: "1.0.0" });
  return { transport, client, log: () => log };
}

/** The authorization URL mcp-remote printed, once it has. */
async function authorizationUrl(log: () => string): Promise<URL> {
  await expect
    .poll(() => /Please authorize this client by visiting:\s+(\S+)/.exec(log())?.[1], {
      timeout: 30_000,
    })
    .toBeTruthy();
  return new URL(/Please authorize this client by visiting:\s+(\S+)/.exec(log())?.[1] ?? "");
}

/** Whether `promise` resolves within `ms` (a rejection is no response either). */
const within = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);

/** Ticks on the consent page: exactly the scopes the authorization URL asked. */
async function expectAskedScopesTicked(page: Page, url: URL) {
  const asked = url.searchParams.get("scope")?.split(" ") ?? [];
  expect(asked).toEqual(expect.arrayContaining(["pets:read", "pets:write"]));
  for (const scope of asked) {
    await expect(page.getByRole("checkbox", { name: new RegExp(scope) })).toBeChecked();
  }
}

test("mcp-remote connects by OAuth at localhost and at 127.0.0.1, and creates a pet with no second consent", async ({
  page,
  context,
  baseURL,
}) => {
  test.setTimeout(240_000);
  await authenticator(await passkeyBrowser(context, page));
  const port = new URL(baseURL ?? "").port;
  const stores: string[] = [];
  for (const [i, host] of ["localhost", "127.0.0.1"].entries()) {
    await test.step(`at ${host}`, async () => {
      const url = `http://${host}:${port}/mcp`;
      const store = mkdtempSync(path.join(tmpdir(), "petstore-mcp-remote-"));
      stores.push(store);
      const person = hand(page);
      const started = Date.now();
      const first = mcpRemote(url, store);
      const connected = first.client.connect(first.transport);
      connected.catch(() => {}); // judged by `within` below, once the person has consented
      const authorize = await authorizationUrl(first.log);
      // The resource is the address mcp-remote was given (the API grants both).
      expect(authorize.searchParams.get("resource")).toBe(url);
      await page.goto(authorize.href);
      if (i === 0) {
        await person.click(page.getByText("No account yet?"));
        await person.type(page.getByLabel("Your name, or your team's"), "mcp-remote user");
        await person.click(page.getByRole("button", { name: "Create account with a passkey" }));
        await person.click(page.getByRole("link", { name: "Continue where you were" }));
      }
      await expect(
        page.getByRole("heading", { name: /^Allow .* to use the Pet Store API/ }),
      ).toBeVisible();
      await expectAskedScopesTicked(page, authorize);
      await person.click(page.getByRole("button", { name: "Allow" }));
      // mcp-remote's own callback page on its loopback port.
      await expect(page).toHaveURL(/^http:\/\/localhost:\d+\/oauth\/callback\?/);
      expect(person.clicks).toBe(i === 0 ? 5 : 1);

      // Its first session may never respond (mcp-remote's issue 344): the host starts it again.
      let client = first.client;
      const responded = await within(connected, INITIALIZE_MS);
      if (!responded) {
        await first.transport.close();
        const again = mcpRemote(url, store);
        await again.client.connect(again.transport);
        expect(again.log()).not.toContain("Please authorize");
        client = again.client;
      }
      console.log(
        `mcp-remote at ${host}: ${person.clicks} clicks, ${((Date.now() - started) / 1000).toFixed(1)} s to a session; the first session ${responded ? "responded" : "did not respond initialize in 15 s: started again"}`,
      );
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["listPets", "createPet"]));
      const created = await client.callTool({
        name: "createPet",
        arguments: { name: `Via mcp-remote at ${host}`, categoryId: 4 },
      });
      expect(created.isError, JSON.stringify(created)).toBeFalsy();
      expect(created.structuredContent).toMatchObject({
        name: `Via mcp-remote at ${host}`,
        categoryId: 4,
      });
      await client.close();
    });
  }
  for (const store of stores) rmSync(store, { recursive: true, force: true });
});
