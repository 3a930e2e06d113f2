// `npm run dev` as a new developer meets it: its whole output on a fresh local D1, offline,
// with another program on wrangler's default inspector port 9229; and, when a port it was
// asked for is taken, a stop before anything starts that names that port.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, HOST, scriptEnv, startDevServer } from "./dev-server.ts";

const PORT = Number(process.env.DEV_PORT ?? 8850);
const INSPECTOR_PORT = 9229;

/** Holds `port` as another program would; undefined when one already does. */
async function occupy(port: number, host: string): Promise<Server | undefined> {
  const server = createServer().listen(port, host);
  try {
    await once(server, "listening");
    return server;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") return undefined;
    throw err;
  }
}

describe("npm run dev's first run", () => {
  let server: DevServer;
  let inspector: Server | undefined;

  beforeAll(async () => {
    inspector = await occupy(INSPECTOR_PORT, "127.0.0.1");
    server = await startDevServer(PORT);
  });

  afterAll(async () => {
    await server?.stop();
    inspector?.close();
  });

  it("prints no error, no [undefined], no workers.cloudflare.com, no out-of-date types, and says the MCP server is served", async () => {
    expect((await fetch(`${server.base}/.well-known/oauth-protected-resource/mcp`)).status).toBe(
      200,
    );
    const output = stripVTControlCharacters(server.output());
    const lines = output.split("\n");
    const wrong = lines.filter((line) =>
      /error|✘|\[undefined\]|workers\.cloudflare\.com|out of date|not connected/i.test(line),
    );
    expect(wrong, output).toEqual([]);
    expect(output).toContain(`, the MCP server on ${server.base}/mcp, `);
    // One warning only: the hourly purge is not run by the local server, and how to run it.
    expect(
      lines.filter((line) => /warn/i.test(line)),
      output,
    ).toEqual([
      "▲ [WARNING] Scheduled Workers are not automatically triggered during local development.",
    ]);
    // The API's own log lines are still shown, under its name.
    expect(output).toMatch(/^\[petstore-api\] \{"level":"info","msg":"request",/m);
  });
});

describe("a port npm run dev was asked for, taken", () => {
  /** `npm run dev -- <args>` on a fresh D1 until it exits: its code and its whole output. */
  async function runDev(args: string[]) {
    const persistTo = mkdtempSync(path.join(tmpdir(), "petstore-live-"));
    const child = spawn("npm", ["run", "dev", "--", "--persist-to", persistTo, ...args], {
      env: scriptEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const [code] = await once(child, "exit");
    clearTimeout(timer);
    rmSync(persistTo, { recursive: true, force: true });
    return { code, output };
  }

  const platformPort = PORT + 1;
  it.each([
    [PORT, [], `port ${PORT} (the API) is taken on ${HOST}`, "--port"],
    [
      platformPort,
      [],
      `port ${platformPort} (the developer platform) is taken on ${HOST}`,
      "--platform-port",
    ],
    [
      INSPECTOR_PORT,
      ["--inspector-port", String(INSPECTOR_PORT)],
      `port ${INSPECTOR_PORT} (the API's inspector) is taken on 127.0.0.1`,
      "--inspector-port",
    ],
  ])("stops before the database is touched, naming port %i", async (port, flags, named, flag) => {
    const held = await occupy(port, port === INSPECTOR_PORT ? "127.0.0.1" : HOST);
    try {
      const { code, output } = await runDev(["--ip", HOST, "--port", String(PORT), ...flags]);
      expect(code, output).toBe(1);
      expect(output).toContain(
        `npm run dev: ${named}: stop what listens there, or choose another with ${flag} N.`,
      );
      expect(output).not.toContain("Local D1 migrations");
    } finally {
      held?.close();
    }
  });
});
