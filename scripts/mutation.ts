// npm run mutation [-- MODULE...]: Stryker (stryker.config.mjs) on each module below against the
// tests written for it, one module at a time; reports in reports/mutation/, the scores printed.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Each mutated module and the test files that must kill its mutants (stryker's --testFiles). */
const TARGETS: Record<string, string> = {
  "src/pets/cursor.ts": "test/list-pets.test.ts,test/cursor.test.ts",
  "src/http/etag.ts": "test/etag.test.ts,test/conditional-read.test.ts",
  "src/cache/tiered.ts": "test/tiered-cache.test.ts",
  "src/auth/keys.ts": "test/auth.test.ts,test/key-format.test.ts,test/keys.test.ts",
  "src/auth/verifier.ts":
    "test/auth.test.ts,test/keys.test.ts,test/invalid-key-counting.test.ts,test/verifier-memory.test.ts,test/invalid-key-limit.test.ts,test/edge-trips.test.ts,test/perf-auth-cache.test.ts",
  // The MCP worker's source runs in the tests' isolate for these (vitest.mutation.config.ts).
  ...Object.fromEntries(
    ["index", "request", "tools", "words", "sdk-shims"].map((name) => [
      `mcp/src/${name}.ts`,
      "test/mcp.test.ts",
    ]),
  ),
  // A tool call forwards its client's address, which only the invalid-key limit counts.
  "mcp/src/calls.ts": "test/mcp.test.ts,test/invalid-key-limit.test.ts",
  // A tool call's key check is its API call's, which only a spent rate limit shows.
  "mcp/src/exchange.ts": "test/mcp.test.ts,test/mcp-exchange.test.ts,test/rate-limit.test.ts",
  "platform/src/session.ts":
    "test/platform/sessions.test.ts,test/platform/session-checks.test.ts,test/platform/ceremonies.test.ts",
  "platform/src/request.ts": "test/platform/attacks.test.ts,test/platform/request-checks.test.ts",
  ...Object.fromEntries(
    ["clients", "authorization", "token", "metadata", "responses"].map((rules) => [
      `platform/src/oauth/${rules}.ts`,
      "test/platform/oauth-rules.test.ts,test/platform/oauth.test.ts",
    ]),
  ),
};

/** Stryker's score: mutants detected (killed, timed out) of those that ran or had no test. */
const DETECTED = ["Killed", "Timeout"];
const UNDETECTED = ["Survived", "NoCoverage"];

const asked = process.argv.slice(2);
const unknown = asked.filter((m) => !(m in TARGETS));
if (unknown.length > 0) {
  console.error(`mutation: no tests listed for ${unknown.join(", ")}; one of:`);
  console.error(Object.keys(TARGETS).join("\n"));
  process.exit(2);
}
const run = (command: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(command, args, { stdio: "inherit", env }).status === 0;
if (!run("npm", ["run", "-s", "pretest"])) process.exit(1);

const scores: string[] = [];
for (const module of asked.length > 0 ? asked : Object.keys(TARGETS)) {
  const report = module.replaceAll("/", "_").replace(/\.ts$/, "");
  const args = ["run", "--mutate", module, "--testFiles", TARGETS[module] ?? ""];
  if (!run("stryker", args, { ...process.env, MUTATION_REPORT: report })) process.exit(1);
  const json = JSON.parse(readFileSync(`reports/mutation/${report}.json`, "utf8")) as {
    files: Record<string, { mutants: Array<{ status: string }> }>;
  };
  const statuses = Object.values(json.files).flatMap((f) => f.mutants.map((m) => m.status));
  const detected = statuses.filter((s) => DETECTED.includes(s)).length;
  const valid = detected + statuses.filter((s) => UNDETECTED.includes(s)).length;
  scores.push(`${module}: ${((100 * detected) / valid).toFixed(1)}% (${detected} of ${valid})`);
}
console.log(`\nMutation scores (ignoring static mutants):\n${scores.join("\n")}`);
