// vitest.config.ts for `npm run mutation`: the same projects, the MCP worker's source in the tests'
// isolate (where Stryker counts its mutants), with a time limit for tests that Stryker's
// instrumentation slows down on these shared cores.
import { defineConfig } from "vitest/config";
import { testConfig } from "./vitest.config.ts";

export default defineConfig(async () => {
  const config = await testConfig({ mcpInTests: true });
  type Project = { test: { testTimeout?: number } };
  const projects = (config.test?.projects ?? []) as Project[];
  return {
    ...config,
    test: {
      ...config.test,
      projects: projects.map((p) => ({ ...p, test: { ...p.test, testTimeout: 30_000 } })),
    },
  };
});
