// SMOKE_API_KEY=<key> npm run smoke -- --base <url> [--write] [--timeout s] [--pin worker=version]
// Checks a running deployment the way a client would, in a few requests: the root,
// the OpenAPI document, the docs page and the scripts it loads, 401 without a key, a
// CORS preflight, a list page and its next page, getPet's deprecation headers; with
// --write also a create with an Idempotency-Key and its replay. One line per check,
// a summary, exit 0 (all passed) or 1 (a check failed); wrong usage: one line, the
// usage, exit 2. The key is read from SMOKE_API_KEY only and never printed.
// The checks themselves: scripts/smoke-checks.ts; the grammar: scripts/smoke-cli.ts.

import type { SmokeOptions } from "./smoke-checks.ts";
import { runSmoke } from "./smoke-checks.ts";
import { parseSmokeArgs, USAGE, UsageError } from "./smoke-cli.ts";

let parsed: SmokeOptions | "help";
try {
  parsed = parseSmokeArgs(process.argv.slice(2), process.env);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  console.error(`error: ${err.message}\n\n${USAGE}`);
  process.exit(2);
}
if (parsed === "help") {
  console.log(USAGE);
  process.exit(0);
}
const options = parsed;

const mode = options.write ? "read and write" : "read-only";
const pinned = options.pin
  ? `, pinned to ${options.pin.worker} version ${options.pin.version}`
  : "";
console.log(`smoke test of ${options.base} (${mode}${pinned})`);
const started = Date.now();
const report = await runSmoke(options, fetch, (result) => {
  console.log(`${result.outcome.padEnd(4)} ${result.name}: ${result.detail}`);
});
const seconds = ((Date.now() - started) / 1000).toFixed(1);
const parts = [`${report.passed} passed`, `${report.failed} failed`];
if (report.skipped) parts.push(`${report.skipped} not run (no answer from ${options.base})`);
const verdict = report.failed === 0 ? "PASS" : "FAIL";
console.log(`${verdict}: ${parts.join(", ")} in ${seconds} s`);
process.exitCode = report.failed === 0 ? 0 : 1;
