// What `npm run dev` (scripts/dev.ts) reads of wrangler dev's flags, what it prints, and
// the platform's configuration it writes for each run.
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { experimental_readRawConfig } from "wrangler";
import {
  devOptions,
  migrationOutcome,
  platformDevConfig,
  portTakenMessage,
  wranglerOutput,
} from "../../scripts/dev.ts";

describe("npm run dev -- <flags>", () => {
  it("prints the address it serves, from --ip and --port in either form", () => {
    expect(devOptions([]).url).toBe("http://localhost:8787");
    expect(devOptions(["--port", "34817", "--ip", "127.0.0.1"]).url).toBe("http://127.0.0.1:34817");
    expect(devOptions(["--port=34817", "--ip=127.0.0.1"]).url).toBe("http://127.0.0.1:34817");
    expect(devOptions(["--ip", "::1", "--local-protocol=https"]).url).toBe("https://[::1]:8787");
  });

  it("names the API by its own address first, then by localhost and 127.0.0.1 at its port (API_ORIGINS)", () => {
    expect(devOptions([]).apiOrigins).toBe("http://localhost:8787 http://127.0.0.1:8787");
    expect(devOptions(["--ip", "127.0.0.1", "--port=5000"]).apiOrigins).toBe(
      "http://127.0.0.1:5000 http://localhost:5000",
    );
    expect(devOptions(["--ip", "::1", "--local-protocol=https"]).apiOrigins).toBe(
      "https://[::1]:8787 https://localhost:8787 https://127.0.0.1:8787",
    );
  });

  it("serves the platform at localhost on the next port, or on --platform-port in either form", () => {
    expect(devOptions([]).platformUrl).toBe("http://localhost:8788");
    expect(devOptions(["--ip", "127.0.0.1", "--port", "34817"]).platformUrl).toBe(
      "http://localhost:34818",
    );
    expect(devOptions(["--platform-port", "9001"]).platformUrl).toBe("http://localhost:9001");
    expect(devOptions(["--platform-port=9001", "--local-protocol", "https"]).platformUrl).toBe(
      "https://localhost:9001",
    );
    // Its proxy listens where the API does, and is asked for there.
    const proxy = devOptions(["--ip", "127.0.0.1", "--port", "5000", "--platform-port", "6000"]);
    expect(proxy.proxyFlags).toEqual(["--ip", "127.0.0.1", "--port", "6000"]);
    expect(proxy.platformListen).toBe("http://127.0.0.1:6000");
    expect(devOptions(["--ip", "0.0.0.0"]).platformListen).toBe("http://localhost:8788");
  });

  it("passes every flag but its own to the API's wrangler dev", () => {
    const argv = [
      "--ip",
      "127.0.0.1",
      "--platform-port",
      "6000",
      "--persist-to=d",
      "--inspector-port",
      "9361",
    ];
    const options = devOptions(argv);
    expect(options.apiFlags).toEqual([
      "--ip",
      "127.0.0.1",
      "--persist-to=d",
      "--inspector-port",
      "9361",
    ]);
    expect(devOptions(["--platform-port=6000", "--port", "1"]).apiFlags).toEqual(["--port", "1"]);
  });

  it("checks the ports asked for, or the defaults they stand for, where wrangler binds them", () => {
    expect(devOptions([]).ports).toEqual([
      { port: 8787, host: undefined, what: "the API", flag: "--port" },
      { port: 8788, host: undefined, what: "the developer platform", flag: "--platform-port" },
    ]);
    const asked = devOptions(["--ip=127.0.0.1", "--port", "5000", "--platform-port=6000"]);
    expect(asked.ports.map((p) => [p.port, p.host])).toEqual([
      [5000, "127.0.0.1"],
      [6000, "127.0.0.1"],
    ]);
    // An inspector port is checked only when asked for: otherwise npm run dev chooses free ones.
    expect(devOptions(["--inspector-port", "9229"]).ports.at(-1)).toEqual({
      port: 9229,
      host: "127.0.0.1",
      what: "the API's inspector",
      flag: "--inspector-port",
    });
    expect(devOptions(["--inspector-port=9300", "--inspector-ip", "::1"]).ports.at(-1)?.host).toBe(
      "::1",
    );
  });

  it("names a taken port, where, and the flag that moves it", () => {
    const [api, platform] = devOptions(["--ip", "127.0.0.1", "--port", "5000"]).ports;
    expect(api && portTakenMessage(api)).toBe(
      "npm run dev: port 5000 (the API) is taken on 127.0.0.1: stop what listens there, or choose another with --port N.",
    );
    expect(platform && portTakenMessage(platform)).toBe(
      "npm run dev: port 5001 (the developer platform) is taken on 127.0.0.1: stop what listens there, or choose another with --platform-port N.",
    );
    const [, , inspector] = devOptions(["--inspector-port", "9229"]).ports;
    expect(inspector && portTakenMessage(inspector)).toBe(
      "npm run dev: port 9229 (the API's inspector) is taken on 127.0.0.1: stop what listens there, or choose another with --inspector-port N.",
    );
  });

  it("migrates the database that --persist-to names, in either form", () => {
    expect(devOptions(["--persist-to=/tmp/a", "--port", "1"]).persistTo).toBe("/tmp/a");
    expect(devOptions(["--local", "--persist-to", "/tmp/b"]).persistTo).toBe("/tmp/b");
    expect(devOptions(["--port", "1"]).persistTo).toBeUndefined();
  });

  it("shows the migration table once: the last of those wrangler prints", () => {
    const table = (state: string) => `┌──────┐\n│ 0001 │ ${state} │\n└──────┘`;
    const output = `Migrations to be applied:\n${table("")}\n? About to apply\n${table("🕒️")}\n${table("✅")}\n`;
    expect(migrationOutcome(output)).toBe(table("✅"));
    expect(migrationOutcome("⛅️ wrangler\n✅ No migrations to apply!\n")).toBe(
      "✅ No migrations to apply!",
    );
  });
});

describe("the platform's configuration for one run", () => {
  const { rawConfig } = experimental_readRawConfig({ config: "platform/wrangler.toml" });
  const config = platformDevConfig(rawConfig as Record<string, unknown>, {
    PLATFORM_ORIGIN: "http://localhost:6000",
    API_ORIGINS: "http://127.0.0.1:5000 http://localhost:5000",
  }) as {
    name: string;
    main: string;
    env?: unknown;
    build?: unknown;
    assets: { directory: string; binding: string };
    d1_databases: Array<{ binding: string; database_id: string; migrations_dir: string }>;
    vars: Record<string, string>;
    ratelimits: unknown[];
  };

  it("is platform/wrangler.toml's top level with this run's addresses: the same worker, bindings and database", () => {
    expect(config.name).toBe(rawConfig.name); // the name the proxy's service binding names
    expect(config.vars).toEqual({
      ...rawConfig.vars,
      PLATFORM_ORIGIN: "http://localhost:6000",
      API_ORIGINS: "http://127.0.0.1:5000 http://localhost:5000",
    });
    expect(config.d1_databases.map((db) => [db.binding, db.database_id])).toEqual(
      (rawConfig.d1_databases ?? []).map((db: { binding: string; database_id?: string }) => [
        db.binding,
        db.database_id,
      ]),
    );
    expect(config.ratelimits).toEqual(rawConfig.ratelimits);
    expect(config.assets.binding).toBe("ASSETS");
    expect(config.env).toBeUndefined();
    // npm run dev copies its assets itself: wrangler's [build] path loses the worker's name.
    expect(rawConfig.build?.command).toBeDefined();
    expect(config.build).toBeUndefined();
  });

  it("names every file by an absolute path that exists, since it is written elsewhere", () => {
    const paths = [
      config.main,
      config.assets.directory,
      ...config.d1_databases.map((db) => db.migrations_dir),
    ];
    for (const file of paths) {
      expect(file.startsWith("/"), file).toBe(true);
      expect(existsSync(file), file).toBe(true);
    }
    // The API's own migrations: one schema for both workers.
    expect(config.d1_databases[0]?.migrations_dir).toBe(path.resolve("migrations"));
  });
});

describe("the API's wrangler dev output, as npm run dev shows it", () => {
  const show = (lines: string[]) => {
    const output = wranglerOutput("petstore-api", ["petstore-platform", "petstore-mcp"]);
    return lines.map(output).filter((line) => line !== undefined);
  };
  const blue = (text: string) => `\u001b[34m${text}\u001b[39m`;

  it("drops the types check of an auxiliary worker, which wrangler makes against the API's file", () => {
    const types =
      "❓ Your types might be out of date. Re-run `wrangler types` to ensure your types are correct.";
    const lines = [
      `${blue("petstore-api")} has access to the following bindings:`,
      types,
      `${blue("petstore-mcp")} has access to the following bindings:`,
      'env.MCP_ALLOWED_ORIGINS ("localhost")      Environment Variable      local',
      types,
      "petstore-platform has access to the following bindings:",
      types,
    ];
    expect(show(lines)).toEqual([lines[0], types, lines[2], lines[3], lines[5]]);
  });

  it("drops [not connected] from a binding to a worker this session serves, with its note", () => {
    const note =
      "Service bindings, Durable Object bindings, and Tail consumers connect to other Wrangler or Vite dev processes running locally, with their connection status indicated by [connected] or [not connected].";
    expect(
      show([
        "env.MCP (petstore-mcp)                             Worker                    local [not connected]",
        "env.DB (petstore-local)                            D1 Database               local",
        "",
        note,
        "",
      ]),
    ).toEqual([
      "env.MCP (petstore-mcp)                             Worker                    local",
      "env.DB (petstore-local)                            D1 Database               local",
      "",
    ]);
    // Another session's worker keeps its status, and the note that explains it.
    const other = "env.AUTH (auth-worker)      Worker      local [not connected]";
    expect(show([other, note])).toEqual([other, note]);
  });

  it("names the API's console lines, which wrangler's [build] path prefixes [undefined]", () => {
    const log = '{"level":"info","msg":"request","status":200}';
    expect(show([`[undefined] ${log}`, `${blue("[undefined]")} ${log}`])).toEqual([
      `[petstore-api] ${log}`,
      `[petstore-api] ${log}`,
    ]);
    const untouched = [`[petstore-mcp] ${log}`, "[wrangler:info] GET / 200 OK (12ms)"];
    expect(show(untouched)).toEqual(untouched);
  });
});
