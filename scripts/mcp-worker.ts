// The MCP worker (mcp/) built as it deploys, and its options for miniflare: what the tests
// and the benchmarks serve beside the API, whose MCP binding reaches it by its name.
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { V4WorkerOptionsShape } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { wrangler } from "./wrangler.ts";

const MCP_CONFIG = fileURLToPath(new URL("../mcp/wrangler.toml", import.meta.url));

/** `wrangler deploy --dry-run` of mcp/wrangler.toml's top level into `outdir`; the bundle. */
export function buildMcpWorker(outdir: string): string {
  const args = ["deploy", "--dry-run", "-c", MCP_CONFIG, "--env=", "--outdir", outdir];
  wrangler(args, { capture: true, ci: true });
  return path.join(outdir, "index.js");
}

/** mcp/wrangler.toml's top level (name, compatibility, vars) serving `bundle`. */
export function mcpWorkerOptions(bundle: string) {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(MCP_CONFIG);
  return {
    ...(workerOptions as V4WorkerOptionsShape),
    name: "petstore-mcp",
    modulesRoot: path.dirname(bundle),
    modules: [{ type: "ESModule" as const, path: bundle }],
  };
}
