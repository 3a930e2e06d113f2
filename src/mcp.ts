// `/mcp` and its Protected Resource Metadata: served by the MCP worker (mcp/) through the
// MCP service binding, which is handed the request and a way back into this app for the
// key check and the tool calls, so /v1's own chain serves them (docs/agents.md).
import { RpcTarget } from "cloudflare:workers";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { mcpToolCallEnv } from "./auth/audience.ts";
import { ApiError, errorResponse, toApiError } from "./errors.ts";
import type { AppEnv } from "./http/types.ts";
import {
  type ApiAccess,
  apiOrigins,
  KEY_SCOPES_HEADER,
  MCP_METADATA_PATH,
  MCP_PATH,
  type McpService,
} from "./mcp-contract.ts";

class Access extends RpcTarget implements ApiAccess {
  readonly #app: Hono<AppEnv>;
  readonly #c: Context<AppEnv>;
  readonly #keyed: MiddlewareHandler<AppEnv>[];

  constructor(app: Hono<AppEnv>, c: Context<AppEnv>, keyed: MiddlewareHandler<AppEnv>[]) {
    super();
    this.#app = app;
    this.#c = c;
    this.#keyed = keyed;
  }

  async authenticate(): Promise<Response> {
    const c = this.#c;
    const run = (i: number): Promise<void> =>
      this.#keyed[i] ? this.#keyed[i](c, () => run(i + 1)).then(() => {}) : Promise.resolve();
    try {
      await run(0);
    } catch (err) {
      return errorResponse(toApiError(err));
    }
    return new Response(null, {
      status: 204,
      headers: { [KEY_SCOPES_HEADER]: c.get("apiKeyScopes").join(" ") },
    });
  }

  fetch(request: Request): Promise<Response> {
    // On /mcp's behalf: a key granted to an MCP client (audience /mcp) is accepted for it.
    return Promise.resolve(
      this.#app.fetch(request, mcpToolCallEnv(this.#c.env), this.#c.executionCtx),
    );
  }
}

/**
 * Routes `/mcp` and its metadata to the MCP worker; `keyed`: the key check and rate limit. A
 * request addressed to a host that is none of the API's addresses is 421 first: the metadata's
 * resource is the address the request used, so it must be one the platform grants.
 */
export function mountMcp(app: Hono<AppEnv>, keyed: MiddlewareHandler<AppEnv>[]): void {
  const serve = (c: Context<AppEnv>) => {
    const origins = apiOrigins(c.env);
    if (!origins.includes(new URL(c.req.url).origin)) {
      throw new ApiError(
        "misdirected_request",
        `This server serves ${MCP_PATH} at ${origins.join(", ")} alone, not at the host this request names.`,
      );
    }
    return (c.env.MCP as unknown as McpService).serve(c.req.raw, new Access(app, c, keyed), {
      platformOrigin: c.env.PLATFORM_ORIGIN,
    });
  };
  app.all(MCP_PATH, serve);
  app.all(MCP_METADATA_PATH, serve);
}
