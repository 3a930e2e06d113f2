// /mcp and its Protected Resource Metadata under the API's addresses (API_ORIGINS, the same list
// the platform grants: test/platform/oauth.test.ts): the resource is the address the client
// used, and a request under any other Host is 421, its host echoed nowhere (docs/agents.md).
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { apiOrigins, MCP_METADATA_PATH } from "../src/mcp-contract.ts";
import { BASE, expectError } from "./helpers.ts";

/** What wrangler.toml's top level lists (plain `wrangler dev`), besides the tests' own BASE. */
const LOCAL = ["http://localhost:8787", "http://127.0.0.1:8787"];

const metadataAt = (origin: string) =>
  exports.default.fetch(new Request(`${origin}${MCP_METADATA_PATH}`));
const listingAt = (origin: string) =>
  exports.default.fetch(
    new Request(`${origin}/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    }),
  );

describe("the API's addresses", () => {
  it("are the tests' own, then wrangler.toml's local ones, localhost and 127.0.0.1 at its port", () => {
    expect(apiOrigins(env)).toEqual([BASE, ...LOCAL]);
    // vitest.config.ts adds BASE alone: the rest is the config as written (each environment's
    // list, and that both workers share it: test/node/secrets.test.ts).
    expect(apiOrigins({ API_ORIGINS: "  a   b\nc " })).toEqual(["a", "b", "c"]);
    expect(apiOrigins({ API_ORIGINS: "" })).toEqual([""]);
  });

  it("each one names itself as the resource, and its 401 points at its own metadata", async () => {
    for (const origin of [BASE, ...LOCAL]) {
      const response = await metadataAt(origin);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        resource: `${origin}/mcp`,
        authorization_servers: [env.PLATFORM_ORIGIN],
        resource_documentation: `${origin}/v1/docs`,
      });
      const refused = await listingAt(origin);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("WWW-Authenticate")).toBe(
        `Bearer realm="petstore", scope="pets:read pets:write", resource_metadata="${origin}${MCP_METADATA_PATH}"`,
      );
    }
  });

  it("any other host, port or scheme is 421 misdirected_request, and is never echoed", async () => {
    for (const origin of [
      "http://evil.example",
      "http://localhost:8788",
      "https://localhost:8787",
      "http://[::1]:8787",
      "http://petstore.test",
      "https://petstore.test.evil.example",
    ]) {
      for (const response of [await metadataAt(origin), await listingAt(origin)]) {
        // The same words whatever the host: nothing of the request is in them.
        const body = await expectError(response, 421, "misdirected_request");
        expect(body.message).toBe(
          `This server serves /mcp at ${[BASE, ...LOCAL].join(", ")} alone, not at the host this request names.`,
        );
        expect(response.headers.get("WWW-Authenticate")).toBeNull();
        expect(response.headers.get("Location")).toBeNull();
      }
    }
  });
});
