// The Node runners that need a running server, each run by its own npm script (never by
// `npm test`): dev (npm run test:dev: npm run dev's own output, and taken ports), e2e
// (npm run e2e), smoke (npm run smoke -- --base URL, scripts/smoke.ts), smoke-local
// (npm run smoke:local), load (npm run load), usage (npm run usage:live) and mcp
// (npm run test:mcp).
import { defineConfig } from "vitest/config";

const live = (name: string, timeoutMs: number) => ({
  test: {
    name,
    include: [`test/live/${name}.test.ts`],
    environment: "node" as const,
    testTimeout: timeoutMs,
    hookTimeout: 180_000,
  },
});

export default defineConfig({
  test: {
    projects: [
      live("dev", 120_000),
      live("e2e", 90_000),
      live("smoke", 120_000),
      live("smoke-local", 120_000),
      live("load", 600_000),
      live("usage", 240_000),
      live("mcp", 120_000),
    ],
  },
});
