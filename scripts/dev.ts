// npm run dev [-- <wrangler dev flags>] [--platform-port N]: migrates and seeds the local D1,
// then one `wrangler dev` serves the API with the platform and MCP workers, a second the
// platform's proxy (docs/design.md, "npm run dev"); `npm run keys` finds it (scripts/d1.ts).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs, stripVTControlCharacters } from "node:util";
import getPort from "get-port";
import { hashApiKey, LOCAL_DEV_KEY } from "../src/auth/keys.ts";
import { MCP_METADATA_PATH, MCP_PATH } from "../src/mcp-contract.ts";
import { BINDING, type D1Target, d1ExecuteOrExit, d1Flags, noteDevServer } from "./d1.ts";
import { SEED_DEMO_PETS_STATEMENT, seedLocalDevKeyStatement } from "./key-statements.ts";
import { WRANGLER, wrangler, wranglerEnv } from "./wrangler.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const API_CONFIG = path.join(ROOT, "wrangler.toml");
const PLATFORM_CONFIG = path.join(ROOT, "platform/wrangler.toml");
const PROXY_CONFIG = path.join(ROOT, "platform/dev/wrangler.toml");
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
  /** Where the platform's proxy listens, for this script to see it respond. */
  platformListen: string;
  persistTo: string | undefined;
  /** The flags for the API's wrangler dev: as given, without this script's own. */
  apiFlags: string[];
  /** The flags for the proxy's wrangler dev. */
  proxyFlags: string[];
  /** The ports the user asked for (or the defaults they stand for): free, or this run stops first. */
  ports: NamedPort[];
}

/** A port this run listens on, where, and the flag that chooses it. */
export interface NamedPort {
  port: number;
  /** The address wrangler binds; undefined: every local address (`localhost`). */
  host: string | undefined;
  what: string;
  flag: string;
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
      "inspector-ip": { type: "string" },
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
  const proxyFlags = ["--ip", ip, "--port", String(platformPort)];
  if (protocol !== "http") proxyFlags.push("--local-protocol", protocol);
  const url = `${protocol}://${host}:${port}`;
  const loopback = ["localhost", "127.0.0.1"].map((name) => `${protocol}://${name}:${port}`);
  const bound = ip === "localhost" ? undefined : ip;
  const ports: NamedPort[] = [
    { port, host: bound, what: "the API", flag: "--port" },
    { port: platformPort, host: bound, what: "the developer platform", flag: "--platform-port" },
  ];
  if (inspectorPort !== undefined) {
    const inspectorHost = text(values["inspector-ip"]) ?? "127.0.0.1";
    ports.push({
      port: Number(inspectorPort),
      host: inspectorHost,
      what: "the API's inspector",
      flag: "--inspector-port",
    });
  }
  return {
    url,
    apiOrigins: [...new Set([url, ...loopback])].join(" "),
    platformUrl: `${protocol}://localhost:${platformPort}`,
    platformListen: `${protocol}://${ip === "0.0.0.0" || ip === "::" ? "localhost" : host}:${platformPort}`,
    persistTo: text(values["persist-to"]),
    apiFlags,
    proxyFlags,
    ports,
  };
}

/** Why this run stops before it starts anything, when `taken` is in use. */
export function portTakenMessage(taken: NamedPort): string {
  return `npm run dev: port ${taken.port} (${taken.what}) is taken on ${taken.host ?? "localhost"}: stop what listens there, or choose another with ${taken.flag} N.`;
}

/** The first of `ports` that something else listens on now, if any. */
async function takenPort(ports: NamedPort[]): Promise<NamedPort | undefined> {
  for (const named of ports) {
    // get-port returns the port asked for when it is free on that address, another one if not.
    if ((await getPort({ port: named.port, host: named.host })) !== named.port) return named;
  }
  return undefined;
}

/**
 * platform/wrangler.toml's top level as a config of its own for this run: the platform's
 * address and the API's as vars (an auxiliary worker of `wrangler dev` takes no --var),
 * every path made absolute, since the file lives in a temporary directory, and no [build]:
 * this script copies its assets before wrangler starts (wrangler's [build] path would
 * bundle the worker without its name, see `wranglerOutput`).
 */
export function platformDevConfig(
  raw: object,
  vars: { PLATFORM_ORIGIN: string; API_ORIGINS: string },
): Record<string, unknown> {
  const dir = path.dirname(PLATFORM_CONFIG);
  const at = (relative: unknown) => path.resolve(dir, String(relative));
  const {
    env: _environments,
    build: _build,
    ...config
  } = raw as {
    env?: unknown;
    build?: unknown;
    assets?: { directory?: string };
    d1_databases?: Array<{ migrations_dir?: string }>;
    vars?: Record<string, string>;
  } & Record<string, unknown>;
  return {
    ...config,
    main: at(config.main),
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

/**
 * The API's `wrangler dev` output as this run shows it, line by line (undefined: dropped).
 * `primary` is the API's worker, `auxiliaries` the workers it serves beside it. wrangler
 * 4.164's multi-worker mode (`-c` given more than once) gets three things wrong, and none
 * has an option to turn it off, so they are mended here and nothing else is touched:
 * - "Your types might be out of date" after an auxiliary worker's bindings: wrangler checks
 *   every worker against ./worker-configuration.d.ts, which is the API's (`checkTypesDiff`
 *   reads the working directory's file), so an auxiliary worker never matches. Dropped; the
 *   API's own check stays, and `npm run types:check` checks all three.
 * - "[not connected]" on a binding to a worker this session serves: the status is read from
 *   the dev registry before this session has registered its own workers, and is printed again
 *   only for workers of other sessions. Dropped, and the note that explains such statuses
 *   with it when no other status is shown.
 * - "[undefined]" before the primary's console lines: wrangler's [build] path bundles the
 *   worker without its name, which the multi-worker console prefix prints. Named.
 */
export function wranglerOutput(
  primary: string,
  auxiliaries: string[],
): (line: string) => string | undefined {
  let bindingsOf = primary;
  let statusShown = false;
  let noteDropped = false;
  return (line) => {
    const text = stripVTControlCharacters(line);
    const afterNote = noteDropped;
    noteDropped = false;
    if (afterNote && text === "") return undefined; // the note's own blank line
    bindingsOf = /^(\S+) has access to the following bindings:$/.exec(text)?.[1] ?? bindingsOf;
    if (text.startsWith("❓ Your types might be out of date")) {
      return bindingsOf === primary ? line : undefined;
    }
    if (/ \[(not )?connected\]$/.test(text)) {
      if (auxiliaries.some((name) => text.includes(` (${name}) `))) {
        return text.replace(/ \[not connected\]$/, "");
      }
      statusShown = true;
    }
    if (text.startsWith("Service bindings, Durable Object bindings, and Tail consumers connect")) {
      noteDropped = !statusShown;
      return statusShown ? line : undefined;
    }
    return text.startsWith("[undefined] ") ? `[${primary}]${text.slice(11)}` : line;
  };
}

/** Resolves once `url` responds at all (any status), polling while wrangler starts. */
async function responds(url: string): Promise<void> {
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
  // Before anything is migrated or built: a port asked for and taken fails now, by its name
  // (wrangler would say so a minute later, or name another socket than the one taken).
  const taken = await takenPort(options.ports);
  if (taken) {
    console.error(portTakenMessage(taken));
    process.exit(1);
  }
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

  // This run's files: the platform's config, and a dev registry of its own, so the proxy
  // finds this run's platform and no other checkout's.
  const run = mkdtempSync(path.join(tmpdir(), "petstore-dev-"));
  const { experimental_readRawConfig } = await import("wrangler");
  const raw = (config: string) => experimental_readRawConfig({ config }).rawConfig;
  const platformRaw = raw(PLATFORM_CONFIG);
  const platformConfig = path.join(run, "platform.wrangler.json");
  const vars = { PLATFORM_ORIGIN: platformUrl, API_ORIGINS: options.apiOrigins };
  writeFileSync(platformConfig, JSON.stringify(platformDevConfig(platformRaw, vars)));
  await import("../platform/build-assets.ts"); // the platform's [build], run here (see above)
  const env = { ...wranglerEnv, WRANGLER_REGISTRY_PATH: path.join(run, "registry") };
  const configs = [API_CONFIG, platformConfig, MCP_CONFIG];
  const api = [
    "dev",
    ...configs.flatMap((c) => ["-c", c]),
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
    ...options.apiFlags,
  ];
  // Inspector ports nobody asked for: any free ones, not wrangler's default 9229 and the
  // ports after it, which every other wrangler dev on this machine tries too.
  if (!options.ports.some((p) => p.flag === "--inspector-port")) {
    api.push("--inspector-port", String(await getPort()));
  }
  const proxy = ["dev", "-c", PROXY_CONFIG, ...options.proxyFlags, "--log-level", "error"];
  proxy.push("--inspector-port", String(await getPort()), "--persist-to", path.join(run, "proxy"));
  const names = [raw(API_CONFIG).name, platformRaw.name, raw(MCP_CONFIG).name].map(String);
  const [primary = "", ...auxiliaries] = names;
  const output = wranglerOutput(primary, auxiliaries);
  // Its output goes through `wranglerOutput`, so this wrangler dev is not interactive
  // either (no hotkeys): Ctrl-C stops the run.
  const apiDev = spawn(WRANGLER, api, {
    env: { ...env, ...(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {}) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const [from, to] of [
    [apiDev.stdout, process.stdout],
    [apiDev.stderr, process.stderr],
  ] as const) {
    createInterface({ input: from }).on("line", (line) => {
      const shown = output(line);
      if (shown !== undefined) to.write(`${shown}\n`);
    });
  }
  const children: ChildProcess[] = [
    apiDev,
    spawn(WRANGLER, proxy, { env, stdio: ["ignore", "inherit", "inherit"] }),
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
  await Promise.all([responds(`${url}/`), responds(`${options.platformListen}/`)]);
  // The MCP worker serves its metadata itself: a 200 there is the worker served.
  const metadata = await fetch(`${url}${MCP_METADATA_PATH}`).catch(() => undefined);
  const mcp = metadata?.ok
    ? `the MCP server on ${url}${MCP_PATH}`
    : `no MCP server (its worker responded with ${metadata?.status ?? "nothing"} at ${MCP_METADATA_PATH})`;
  console.log(
    `\nnpm run dev: the API on ${url} (reference: ${url}/v1/docs), ${mcp}, the developer platform on ${platformUrl} (open it at localhost: passkeys need a host name, not an IP address).\n`,
  );
}
