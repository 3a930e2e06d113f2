// What `npm run dev` (scripts/dev.ts) reads of wrangler dev's flags, what it prints, and
// the platform's configuration it writes for each run.
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { experimental_readRawConfig } from "wrangler";
import { devOptions, migrationOutcome, platformDevConfig } from "../../scripts/dev.ts";

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
    // Its door listens where the API does, and is asked for there.
    const door = devOptions(["--ip", "127.0.0.1", "--port", "5000", "--platform-port", "6000"]);
    expect(door.doorFlags).toEqual(["--ip", "127.0.0.1", "--port", "6000"]);
    expect(door.platformListen).toBe("http://127.0.0.1:6000");
    expect(devOptions(["--ip", "0.0.0.0"]).platformListen).toBe("http://localhost:8788");
  });

  it("passes every flag but its own to the API's wrangler dev; the door's inspector follows the API's", () => {
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
    expect(options.doorInspectorPort).toBe(9362);
    expect(devOptions([]).doorInspectorPort).toBeUndefined();
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
    build: { command: string; cwd: string; watch_dir: string };
    assets: { directory: string; binding: string };
    d1_databases: Array<{ binding: string; database_id: string; migrations_dir: string }>;
    vars: Record<string, string>;
    ratelimits: unknown[];
  };

  it("is platform/wrangler.toml's top level with this run's addresses: the same worker, bindings and database", () => {
    expect(config.name).toBe(rawConfig.name); // the name the door's service binding names
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
    expect(config.build.command).toBe(rawConfig.build?.command);
    expect(config.env).toBeUndefined();
  });

  it("names every file by an absolute path that exists, since it is written elsewhere", () => {
    const paths = [
      config.main,
      config.build.cwd,
      config.build.watch_dir,
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
