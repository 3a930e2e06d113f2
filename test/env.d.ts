declare namespace Cloudflare {
  interface Env {
    /** Test-only binding set in vitest.config.ts: the files of migrations/. */
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}
