// npm run test:browser: @playwright/test drives Debian's Chromium (never a downloaded
// browser: CHROMIUM_PATH, default /usr/bin/chromium) against the real `npm run dev`: the
// API on 127.0.0.1, the developer platform on localhost (BROWSER_PLATFORM_PORT), with a
// temporary local D1. Screenshots and traces of a failed test are kept in
// test-results/browser/, and so are the screenshots the tests take on purpose.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { defineConfig } from "@playwright/test";

const PORT = Number(process.env.BROWSER_API_PORT ?? 8792);
// Not the next port: web-app.spec.ts serves its page on 127.0.0.1:8793.
const PLATFORM_PORT = Number(process.env.BROWSER_PLATFORM_PORT ?? PORT + 2);
process.env.BROWSER_PLATFORM = `http://localhost:${PLATFORM_PORT}`;
// Made once by the main process; its workers inherit the variable, so all share one D1.
process.env.BROWSER_D1 ??= mkdtempSync(path.join(tmpdir(), "petstore-browser-"));

export default defineConfig({
  testDir: "test/browser",
  outputDir: "test-results/browser",
  globalTeardown: "./test/browser/teardown.ts",
  workers: 1,
  timeout: 60_000,
  reporter: "list",
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: "chromium",
    viewport: { width: 1400, height: 1000 },
    // The web-app page is served from 127.0.0.1:8793 by a Playwright route, which Chromium
    // counts as a public page: its fetches to 127.0.0.1 need Local Network Access.
    permissions: ["local-network-access"],
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      // Chromium as root needs --no-sandbox; offline, it must not reach for the network.
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: {
    command: `npm run dev -- --ip 127.0.0.1 --port ${PORT} --platform-port ${PLATFORM_PORT} --persist-to ${process.env.BROWSER_D1}`,
    // The platform responds last (its proxy is a second wrangler dev).
    url: `${process.env.BROWSER_PLATFORM}/`,
    env: { WRANGLER_SEND_METRICS: "false", CI: "true" },
    timeout: 120_000,
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
  },
});
