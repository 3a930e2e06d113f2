// Stryker in the Workers pool, run by `npm run mutation` (scripts/mutation.ts), which names the
// module to mutate and its test files; on demand, not in CI (docs/design.md, "How it is tested").
const report = `reports/mutation/${process.env.MUTATION_REPORT ?? "mutation"}`;

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  // Tests reach most modules through the worker's fetch, which vitest's import graph misses.
  vitest: { configFile: "vitest.mutation.config.ts", related: false },
  coverageAnalysis: "perTest",
  // Module-level mutants would each re-run every test: minutes apiece.
  ignoreStatic: true,
  // These machines have 2 cores, shared.
  concurrency: 1,
  timeoutMS: 20_000,
  // Stryker rewrites this tsconfig with TypeScript's JavaScript API, which TypeScript 7 lacks;
  // ours need no rewriting (nothing in them points outside the sandbox), so it names none.
  tsconfigFile: "no-tsconfig-to-rewrite.json",
  // Inside node_modules, where no vitest project looks for test files.
  tempDirName: "node_modules/.cache/stryker",
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: `${report}.html` },
  jsonReporter: { fileName: `${report}.json` },
  thresholds: { high: 90, low: 80, break: null },
};
