// npm run dev [-- <wrangler dev flags>] [--platform-port N]: migrates and seeds the local D1,
// then one `wrangler dev` serves the API with the platform and MCP workers, a second the
// platform's door (docs/design.md, "npm run dev"); `npm run keys` finds it (scripts/d1.ts).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { hashApiKey, LOCAL_DEV_KEY } from "../src/auth/keys.ts";
import { BINDING, type D1Target, d1ExecuteOrExit, d1Flags, noteDevServer } from "./d1.ts";
import { SEED_DEMO_PETS_STATEMENT, seedLocalDevKeyStatement } from "./key-statements.ts";
import { WRANGLER, wrangler, wranglerEnv } from "./wrangler.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PLATFORM_CONFIG = path.join(ROOT, "platform/wrangler.toml");
const DOOR_CONFIG = path.join(ROOT, "platform/dev/wrangler.toml");
const MCP_CONFIG = path.join(ROOT, "mcp/wrangler.toml");

export interface DevOptions {
  /** The API's address, as wrangler dev serves it. */
  url: string;
  /**
   * The API's addresses for this run (API_ORIGINS of both workers): its own, then the loopback
   * names at its port, localhost and 127.0.0.1, under which a client on this machine reaches it.
   */
  apiOrigins: string;
  /** The developer platform's address: always `localhost` (WebAuthn refuses an IP as RP ID). */
  platformUrl: string;
  /** Where the platform's door listens, for this script to see it answer. */
  platformListen: string;
  persistTo: string | undefined;
  /** The flags for the API's wrangler dev: as given, without this script's own. */
  apiFlags: string[];
  /** The flags for the door's wrangler dev. */
  doorFlags: string[];
  /** The door's inspector port: after the API's when one is given, else any free one. */
  doorInspectorPort: number | undefined;
}

/** What `npm run dev` reads of the flags, in either form (`--port 8787`, `--port=8787`). */
export function devOptions(argv: string[]): DevOptions {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      ip: { type: "string" },
      port: { type: "string" },
      "local-protocol": { type: "string" },
      "persist-to": { type: "string" },
      "inspector-port": { type: "string" },
      "platform-port": { type: "string" },
    },
  });
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const ip = text(values.ip) ?? "localhost";
  const host = ip.includes(":") ? `[${ip}]` : ip;
  const protocol = text(values["local-protocol"]) ?? "http";
  const port = Number(text(values.port) ?? 8787);
  const platformPort = Number(text(values["platform-port"]) ?? port + 1);
  const inspectorPort = text(values["inspector-port"]);
  const ownFlag = /^--platform-port(=|$)/;
  const apiFlags = argv.filter(
    (arg, i) => !ownFlag.test(arg) && !(argv[i - 1] === "--platform-port" && !arg.includes("=")),
  );
  const doorFlags = ["--ip", ip, "--port", String(platformPort)];
  if (protocol !== "http") doorFlags.push("--local-protocol", protocol);
  const url = `${protocol}://${host}:${port}`;
  const loopback = ["localhost", "127.0.0.1"].map((name) => `${protocol}://${name}:${port}`);
  return {
    url,
    apiOrigins: [...new Set([url, ...loopback])].join(" "),
    platformUrl: `${protocol}://localhost:${platformPort}`,
    platformListen: `${protocol}://${ip === "0.0.0.0" || ip === "::" ? "localhost" : host}:${platformPort}`,
    persistTo: text(values["persist-to"]),
    apiFlags,
    doorFlags,
    doorInspectorPort: inspectorPort === undefined ? undefined : Number(inspectorPort) + 1,
  };
}

/**
 * platform/wrangler.toml's top level as a config of its own for this run: the platform's
 * address and the API's as vars (an auxiliary worker of `wrangler dev` takes no --var),
 * and every path made absolute, since the file lives in a temporary directory.
 */
export function platformDevConfig(
  raw: object,
  vars: { PLATFORM_ORIGIN: string; API_ORIGINS: string },
): Record<string, unknown> {
  const dir = path.dirname(PLATFORM_CONFIG);
  const at = (relative: unknown) => path.resolve(dir, String(relative));
  const { env: _environments, ...config } = raw as {
    env?: unknown;
    build?: { command?: string; watch_dir?: string };
    assets?: { directory?: string };
    d1_databases?: Array<{ migrations_dir?: string }>;
    vars?: Record<string, string>;
  } & Record<string, unknown>;
  return {
    ...config,
    main: at(config.main),
    build: { ...config.build, cwd: dir, watch_dir: at(config.build?.watch_dir ?? "src") },
    assets: { ...config.assets, directory: at(config.assets?.directory) },
    d1_databases: config.d1_databases?.map((db) => ({
      ...db,
      migrations_dir: at(db.migrations_dir ?? "migrations"),
    })),
    vars: { ...config.vars, ...vars },
  };
}

/**
 * The outcome of `wrangler d1 migrations apply`, which prints the table of migrations
 * before it starts and again after each one: the last table, or the last line
 * ("No migrations to apply!").
 */
export function migrationOutcome(output: string): string {
  const start = output.lastIndexOf("┌");
  return start >= 0 ? output.slice(start).trim() : (output.trim().split("\n").at(-1) ?? "");
}

/** A TCP port nobody listens on now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  return port;
}

/** Resolves once `url` answers at all (any status), polling while wrangler starts. */
async function answers(url: string): Promise<void> {
  for (;;) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

if (import.meta.main) {
  const options = devOptions(process.argv.slice(2));
  const { url, platformUrl, persistTo } = options;
  const local: D1Target = { persistTo };
  const apply = ["d1", "migrations", "apply", BINDING, ...d1Flags(local)];
  const migrated = wrangler(apply, { capture: true, ci: true });
  console.log(`Local D1 migrations:\n${migrationOutcome(migrated)}`);
  const seedKey = seedLocalDevKeyStatement(await hashApiKey(LOCAL_DEV_KEY));
  const seeded = await d1ExecuteOrExit(local, [seedKey, SEED_DEMO_PETS_STATEMENT]);
  const pets = seeded[1]?.length ? `, ${seeded[1].length} demo pets added` : "";
  console.log(
    `Local D1 ready (${LOCAL_DEV_KEY}${pets}). Try: curl -H "Authorization: Bearer ${LOCAL_DEV_KEY}" '${url}/v1/pets?limit=2&status=available' -D -`,
  );

  // This run's files: the platform's config, and a dev registry of its own, so the door
  // finds this run's platform and no other checkout's.
  const run = mkdtempSync(path.join(tmpdir(), "petstore-dev-"));
  const { experimental_readRawConfig } = await import("wrangler");
  const { rawConfig } = experimental_readRawConfig({ config: PLATFORM_CONFIG });
  const platformConfig = path.join(run, "platform.wrangler.json");
  const vars = { PLATFORM_ORIGIN: platformUrl, API_ORIGINS: options.apiOrigins };
  writeFileSync(platformConfig, JSON.stringify(platformDevConfig(rawConfig, vars)));
  const env = { ...wranglerEnv, WRANGLER_REGISTRY_PATH: path.join(run, "registry") };
  const doorInspector = options.doorInspectorPort ?? (await freePort());
  const configs = [path.join(ROOT, "wrangler.toml"), platformConfig, MCP_CONFIG];
  const api = [
    "dev",
    ...configs.flatMap((c) => ["-c", c]),
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  const door = ["dev", "-c", DOOR_CONFIG, ...options.doorFlags, "--log-level", "error"];
  door.push("--inspector-port", String(doorInspector), "--persist-to", path.join(run, "door"));
  const children: ChildProcess[] = [
    spawn(WRANGLER, [...api, ...options.apiFlags], { env, stdio: "inherit" }),
    // Not interactive: the API's wrangler dev owns the terminal's keys.
    spawn(WRANGLER, door, { env, stdio: ["ignore", "inherit", "inherit"] }),
  ];
  noteDevServer(persistTo, url);
  process.on("exit", () => rmSync(run, { recursive: true, force: true }));
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      for (const child of children) child.kill(signal);
    });
  }
  // Either one ending ends both (half a development setup helps nobody), with its code.
  let running = children.length;
  let exitCode: number | undefined;
  for (const child of children) {
    child.on("exit", (code, signal) => {
      exitCode ??= code ?? (signal ? 1 : 0);
      for (const other of children) other.kill("SIGTERM");
      if (--running === 0) process.exit(exitCode);
    });
  }
  await Promise.all([answers(`${url}/`), answers(`${options.platformListen}/`)]);
  console.log(
    `\nnpm run dev: the API on ${url} (reference: ${url}/v1/docs), the developer platform on ${platformUrl} (open it at localhost: passkeys need a host name, not an IP address).\n`,
  );
}
