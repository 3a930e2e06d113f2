// A key's audience (docs/keys.md, "Audience"): a key granted to an MCP client by OAuth is
// accepted at the MCP server alone, so it is refused on /v1 as if it were no key.
import type { Context } from "hono";
import type { KeyAudience } from "../db/api-keys.ts";
import type { AppEnv } from "../http/types.ts";
import { MCP_PATH } from "../mcp-contract.ts";

const MCP_TOOL_CALL = Symbol("the MCP server's call of an operation for a tool");

/**
 * The env under which the MCP server has the API respond to a tool's call (the request goes
 * through /v1's middleware, but on /mcp's behalf): nothing a client sends can set it.
 */
export function mcpToolCallEnv(env: Env): Env {
  // Defined, not assigned: an assignment would reach a proxied env's own set trap.
  return Object.create(env, { [MCP_TOOL_CALL]: { value: true } }) as Env;
}

/** Whether a key of `audience` is accepted for the request. */
export function acceptsAudience(c: Context<AppEnv>, audience: KeyAudience): boolean {
  return audience === null || c.req.path === MCP_PATH || MCP_TOOL_CALL in c.env;
}
