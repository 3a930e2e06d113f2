// npm run bench:size — builds the worker as it deploys (minified, wrangler.toml's top
// level) into a temporary directory, and fails when its gzip size exceeds the budget
// (BUNDLE_BUDGET_KIB).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { BUNDLE_BUDGET_KIB, buildBundle } from "./lib.ts";

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
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
