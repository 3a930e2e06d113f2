declare namespace Cloudflare {
  interface Env {
    /** Test-only binding set in vitest.config.ts: the sign-up and failed sign-in limit per address. */
    TEST_PLATFORM_LIMIT: number;
  }
}
