// The MCP exchange (mcp/src/exchange.ts) called directly with a key check's 204 as the API's
// contract with it allows (src/mcp-contract.ts), where test/mcp.test.ts reaches it through /mcp.
import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { toolsAt } from "../mcp/src/calls.ts";
import { exchange } from "../mcp/src/exchange.ts";
import { KEY_SCOPES_HEADER, MCP_METADATA_PATH } from "../src/mcp-contract.ts";
import { BASE, createKey } from "./helpers.ts";

it("lists only the tools that need no scope when the key check's 204 names none", async () => {
  const { key } = await createKey("mcp-exchange");
  const tools = toolsAt(Date.now() / 1000);
  const publicTools = tools.filter((tool) => tool.scope === undefined).map((t) => t.listed.name);
  expect(publicTools.length).toBeGreaterThan(0);
  expect(publicTools.length).toBeLessThan(tools.length);
  for (const headers of [{}, { [KEY_SCOPES_HEADER]: "" }] as Record<string, string>[]) {
    const api = {
      authenticate: async () => new Response(null, { status: 204, headers }),
      fetch: (request: Request) => exports.default.fetch(request),
    };
    const request = new Request(`${BASE}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${key}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    const response = await exchange(request, api, `${BASE}${MCP_METADATA_PATH}`, tools);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/json");
    const { result } = (await response.json()) as { result: { tools: Array<{ name: string }> } };
    expect(result.tools.map((t) => t.name)).toEqual(publicTools);
  }
});
