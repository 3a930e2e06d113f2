// What `npm run dev` (scripts/dev.ts) reads of wrangler dev's flags and prints.
import { describe, expect, it } from "vitest";
import { devOptions, migrationOutcome } from "../../scripts/dev.ts";

describe("npm run dev -- <flags>", () => {
  it("prints the address it serves, from --ip and --port in either form", () => {
    expect(devOptions([]).url).toBe("http://localhost:8787");
    expect(devOptions(["--port", "34817", "--ip", "127.0.0.1"]).url).toBe("http://127.0.0.1:34817");
    expect(devOptions(["--port=34817", "--ip=127.0.0.1"]).url).toBe("http://127.0.0.1:34817");
    expect(devOptions(["--ip", "::1", "--local-protocol=https"]).url).toBe("https://[::1]:8787");
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
