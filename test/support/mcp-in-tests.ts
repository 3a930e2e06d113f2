// The API worker with the MCP worker's entrypoint beside it, for `npm run mutation`: the MCP
// server's source then runs in the tests' own isolate, where Stryker counts its mutants
// (vitest.config.ts, `mcpInTests`); the tests otherwise reach the MCP worker as it deploys.

export { default as McpServer } from "../../mcp/src/index.ts";
export { default } from "../../src/index.ts";
