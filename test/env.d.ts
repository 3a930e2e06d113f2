declare namespace Cloudflare {
  interface Env {
    /** Test-only binding set in vitest.config.ts: the files of migrations/. */
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}

/** Vite's import.meta.glob, as the tests use it (vitest transforms it at build time). */
interface ImportMeta {
  glob<T>(
    pattern: string,
    options: { query: string; import: string; eager: true },
  ): Record<string, T>;
}
