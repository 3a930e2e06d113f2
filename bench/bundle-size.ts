// npm run bench:size — builds the worker as it deploys (minified, wrangler.toml's top
// level) into a temporary directory, and fails when its gzip size exceeds the budget
// (BUNDLE_BUDGET_KIB), or when it holds text only the OpenAPI document needs: what its
// builder (src/openapi/document.ts) writes, and the error codes' and scopes' descriptions.
// Then says the MCP worker's size beside it (mcp/: a worker of its own, outside the budget).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildMcpWorker } from "../scripts/mcp-worker.ts";
import { ERROR_DESCRIPTIONS } from "../src/errors.ts";
import { SCOPE_DESCRIPTIONS } from "../src/scopes.ts";
import { BUNDLE_BUDGET_KIB, buildBundle, ROOT, sizeOf } from "./lib.ts";

/** The start of every description in `node`, up to its first figure. */
function descriptions(node: unknown, found = new Set<string>()): Set<string> {
  if (node === null || typeof node !== "object") return found;
  for (const [key, value] of Object.entries(node)) {
    if (typeof value === "string" && key === "description") {
      const start = value.split(/[0-9$]/)[0]?.slice(0, 32) ?? "";
      if (start.length >= 12) found.add(start);
    } else descriptions(value, found);
  }
  return found;
}

const outdir = mkdtempSync(path.join(os.tmpdir(), "petstore-bundle-"));
try {
  const bundle = buildBundle(outdir);
  const line = `bundle: ${(bundle.bytes / 1024).toFixed(1)} KiB minified, ${bundle.gzipKiB.toFixed(1)} KiB gzip (budget ${BUNDLE_BUDGET_KIB} KiB gzip)`;
  if (bundle.gzipKiB > BUNDLE_BUDGET_KIB) {
    const over = (bundle.gzipKiB - BUNDLE_BUDGET_KIB).toFixed(1);
    console.error(`FAIL ${line}: ${over} KiB over budget`);
    process.exitCode = 1;
  } else {
    console.log(`ok   ${line}`);
  }
  if (bundle.wranglerSays) console.log(`     wrangler: ${bundle.wranglerSays}`);
  const code = readFileSync(bundle.file, "utf8");
  const document = readFileSync(path.join(ROOT, "src", "openapi", "openapi.json"), "utf8");
  const source = (file: string) => readFileSync(path.join(ROOT, "src", file), "utf8");
  const builder = source("openapi/document.ts");
  const table = readdirSync(path.join(ROOT, "src", "operations")).map((f) =>
    source(`operations/${f}`),
  );
  const probes = [
    ...[...descriptions(JSON.parse(document))].filter(
      (text) => builder.includes(text) && !table.some((file) => file.includes(text)),
    ),
    ...Object.values({ ...ERROR_DESCRIPTIONS, ...SCOPE_DESCRIPTIONS }),
  ];
  const leaked = probes.filter((text) => code.includes(text));
  if (leaked.length > 0) {
    console.error(`FAIL the bundle holds document text: ${leaked.map((t) => `"${t}"`).join(", ")}`);
    process.exitCode = 1;
  } else {
    console.log(`ok   no document text in it (${probes.length} probes)`);
  }
  const mcp = sizeOf(buildMcpWorker(path.join(outdir, "mcp")));
  console.log(
    `     the MCP worker (mcp/, its own bundle, not in the budget): ${(mcp.bytes / 1024).toFixed(1)} KiB minified, ${mcp.gzipKiB.toFixed(1)} KiB gzip`,
  );
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
