// npm run bench:size — builds the worker as it deploys (minified, wrangler.toml's
// top level) and fails when the gzip size exceeds the budget of issue 4.
//   node bench/bundle-size.ts [--outdir DIR] [--budget KIB]
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { BUNDLE_BUDGET_KIB, buildBundle } from "./lib.ts";

const { values } = parseArgs({
  options: { outdir: { type: "string" }, budget: { type: "string" } },
});
const budget = values.budget === undefined ? BUNDLE_BUDGET_KIB : Number(values.budget);
if (!(budget > 0)) {
  console.error(`--budget must be a positive number of KiB, not ${values.budget}`);
  process.exit(2);
}
const outdir = values.outdir ?? mkdtempSync(path.join(os.tmpdir(), "petstore-bundle-"));

try {
  const bundle = buildBundle(outdir);
  const shown = path.relative(process.cwd(), bundle.file);
  const line = `bundle ${shown.startsWith("..") ? bundle.file : shown}: ${(bundle.bytes / 1024).toFixed(1)} KiB minified, ${bundle.gzipKiB.toFixed(1)} KiB gzip (budget ${budget} KiB gzip)`;
  if (bundle.gzipKiB > budget) {
    console.error(`FAIL ${line}: ${(bundle.gzipKiB - budget).toFixed(1)} KiB over budget`);
    process.exitCode = 1;
  } else {
    console.log(`ok   ${line}`);
  }
  if (bundle.wranglerSays) console.log(`     wrangler: ${bundle.wranglerSays}`);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
} finally {
  if (values.outdir === undefined) rmSync(outdir, { recursive: true, force: true });
}
