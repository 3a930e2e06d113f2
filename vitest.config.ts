import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { kCurrentWorker } from "miniflare";
import { configDefaults, defineConfig } from "vitest/config";
import { experimental_readRawConfig } from "wrangler";
import { buildMcpWorker, mcpWorkerOptions } from "./scripts/mcp-worker.ts";

/** Tests of the Node-side scripts: run in Node, not workerd ("node" project). */
const NODE_TESTS = "test/node/**/*.test.ts";
/** Node runners against a running server: vitest.live.config.ts, through their own npm scripts. */
const LIVE_TESTS = ["test/live/**", "test/browser/**"];
/** Runs in its own project, where RATE_LIMITER allows only a few requests a minute. */
const RATE_LIMIT_TESTS = "test/rate-limit.test.ts";
/** The low limit of that project (wrangler.toml's local limit is 10,000 a minute). */
const TEST_RATE_LIMIT = 5;
/** And its budget per key owner (an account's keys together), above one key's. */
const TEST_ACCOUNT_RATE_LIMIT = 8;
/** Runs in its own project, where INVALID_KEY_LIMITER allows only a few invalid keys a minute. */
const INVALID_KEY_LIMIT_TESTS = "test/invalid-key-limit.test.ts";
const TEST_INVALID_KEY_LIMIT = 5;
/** The developer platform's tests: their own project, on platform/wrangler.toml. */
const PLATFORM_TESTS = "test/platform/**/*.test.ts";
/** Sign-ups and failed sign-ins per client address in that project (each test uses its own). */
const TEST_PLATFORM_LIMIT = 3;

/**
 * The API's addresses in the workerd tests: the tests' own (BASE, test/helpers.ts), then
 * wrangler.toml's local ones, which the tests of the address rule use too.
 */
function testApiOrigins() {
  const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
  return `https://petstore.test ${(rawConfig.vars as { API_ORIGINS: string }).API_ORIGINS}`;
}

/** miniflare's `ratelimits` option: the [[ratelimits]] entries of wrangler.toml, by binding. */
type RateLimits = Record<
  string,
  { namespace_id: string; simple: { limit: number; period?: 10 | 60 } }
>;

/** The [[ratelimits]] of wrangler.toml's top level and of each environment, by environment. */
function wranglerRateLimits() {
  const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
  return {
    local: rawConfig.ratelimits ?? [],
    ...Object.fromEntries(
      Object.entries(rawConfig.env ?? {}).map(([name, env]) => [
        name,
        (env as { ratelimits?: unknown[] }).ratelimits ?? [],
      ]),
    ),
  };
}

// The worker runs inside workerd exactly as wrangler.toml's top level declares it
// (same compatibility date, flags and bindings); D1 is built from migrations/.
// Two projects share that setup: "worker" (every workerd test file but one) and
// "rate-limit", which overrides only the two API rate limiters with low limits,
// so wrangler.toml's local and production limits stay untouched. "platform" runs the
// developer platform worker as platform/wrangler.toml declares it, on a D1 built from
// the same migrations/, with low sign-up and failed sign-in limits per client address
// (each test uses its own address). "node" runs the unit tests of the Node-side scripts in Node.
/**
 * The projects, the MCP worker beside the API as it deploys, as in `npm run dev` (its MCP binding
 * reaches it); or, with `mcpInTests` (`npm run mutation`), the MCP worker's source run in the
 * tests' own isolate, an entrypoint of test/support/mcp-in-tests.ts, where Stryker's mutants live.
 */
export async function testConfig({ mcpInTests = false } = {}) {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  const mcp = mcpInTests
    ? {
        main: "./test/support/mcp-in-tests.ts",
        bindings: mcpWorkerOptions("").bindings,
        serviceBindings: { MCP: { name: kCurrentWorker, entrypoint: "McpServer" } },
      }
    : {
        workers: [
          mcpWorkerOptions(buildMcpWorker(path.join(import.meta.dirname, "dist/test-mcp"))),
        ],
      };
  const worker = (extra: { bindings?: Record<string, unknown>; ratelimits?: RateLimits } = {}) =>
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      ...(mcpInTests ? { main: mcp.main } : {}),
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: migrations,
          API_ORIGINS: testApiOrigins(),
          ...mcp.bindings,
          ...extra.bindings,
        },
        ...(extra.ratelimits ? { ratelimits: extra.ratelimits } : {}),
        ...(mcp.workers ? { workers: mcp.workers } : { serviceBindings: mcp.serviceBindings }),
      },
    });
  const setupFiles = ["./test/setup/apply-migrations.ts"];
  return {
    test: {
      silent: "passed-only" as const,
      projects: [
        {
          plugins: [worker()],
          test: {
            name: "worker",
            setupFiles,
            exclude: [
              ...configDefaults.exclude,
              RATE_LIMIT_TESTS,
              INVALID_KEY_LIMIT_TESTS,
              PLATFORM_TESTS,
              NODE_TESTS,
              ...LIVE_TESTS,
            ],
          },
        },
        {
          plugins: [
            worker({
              // Replaces wrangler.toml's RATE_LIMITER entry (miniflare merges per binding name).
              ratelimits: {
                RATE_LIMITER: {
                  namespace_id: "1000",
                  simple: { limit: TEST_RATE_LIMIT, period: 60 },
                },
                ACCOUNT_RATE_LIMITER: {
                  namespace_id: "1020",
                  simple: { limit: TEST_ACCOUNT_RATE_LIMIT, period: 60 },
                },
              },
              // The test reads the limits it must observe from here.
              bindings: { TEST_RATE_LIMIT, TEST_ACCOUNT_RATE_LIMIT },
            }),
          ],
          // A test may wait up to 5 s for a fresh rate-limit window (see the test file).
          test: {
            name: "rate-limit",
            setupFiles,
            include: [RATE_LIMIT_TESTS],
            testTimeout: 15_000,
          },
        },
        {
          plugins: [
            worker({
              ratelimits: {
                INVALID_KEY_LIMITER: {
                  namespace_id: "1010",
                  simple: { limit: TEST_INVALID_KEY_LIMIT, period: 60 },
                },
              },
              // The limit under test, and wrangler.toml's limits per environment as written.
              bindings: {
                TEST_INVALID_KEY_LIMIT,
                TEST_WRANGLER_RATELIMITS: wranglerRateLimits(),
              },
            }),
          ],
          test: {
            name: "invalid-key-limit",
            setupFiles,
            include: [INVALID_KEY_LIMIT_TESTS],
            testTimeout: 15_000,
          },
        },
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: "./platform/wrangler.toml" },
              miniflare: {
                bindings: { TEST_MIGRATIONS: migrations, TEST_PLATFORM_LIMIT },
                ratelimits: {
                  SIGN_UP_LIMITER: {
                    namespace_id: "2000",
                    simple: { limit: TEST_PLATFORM_LIMIT, period: 60 },
                  },
                  SIGN_IN_LIMITER: {
                    namespace_id: "2010",
                    simple: { limit: TEST_PLATFORM_LIMIT, period: 60 },
                  },
                },
              },
            }),
          ],
          test: { name: "platform", setupFiles, include: [PLATFORM_TESTS] },
        },
        { test: { name: "node", environment: "node", include: [NODE_TESTS] } },
      ],
    },
  };
}

export default defineConfig(() => testConfig());
