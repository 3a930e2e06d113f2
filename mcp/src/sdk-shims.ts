// The MCP SDK's workerd shims as this worker bundles them (mcp/wrangler.toml's alias): without
// `preloadSchemas()`, so a protocol era's schemas are built on its first message, not at start-up,
// and without a JSON Schema validator (docs/design.md, "The MCP server").

/**
 * The SDK's server checks a client's response to an elicitation against this, and nothing else:
 * this server never asks a client for input.
 */
export class DefaultJsonSchemaValidator {
  getValidator(): never {
    throw new Error("This server sends no elicitation: it validates no client input schema.");
  }
}

/** As the SDK's own shim: there is no standard input or output in a Worker. */
export const process = {
  get stdin(): never {
    throw new Error("No stdio in a Worker: use the Streamable HTTP transport.");
  },
  get stdout(): never {
    throw new Error("No stdio in a Worker: use the Streamable HTTP transport.");
  },
};
