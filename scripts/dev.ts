// npm run dev [-- <wrangler dev flags>]
// 1. applies migrations/ to the local D1 (the one --persist-to names, if given),
// 2. seeds the local-only key `local-dev-key` and, into a database without pets, a few
//    demo pets (LOCAL database only, never remote),
// 3. starts `wrangler dev` with the flags as given, and notes its address beside the
//    database so that `npm run keys` goes through it (scripts/d1.ts) while it runs.
import { parseArgs } from "node:util";
import { hashApiKey, LOCAL_DEV_KEY } from "../src/auth/keys.ts";
import { BINDING, D1Error, type D1Target, d1Execute, d1Flags, noteDevServer } from "./d1.ts";
import { SEED_DEMO_PETS_STATEMENT, seedLocalDevKeyStatement } from "./key-statements.ts";
import { runWranglerForeground, wrangler } from "./wrangler.ts";

/** What `npm run dev` reads of wrangler dev's flags, in either form (`--port 8787`, `--port=8787`). */
export function devOptions(argv: string[]): { url: string; persistTo: string | undefined } {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      ip: { type: "string" },
      port: { type: "string" },
      "local-protocol": { type: "string" },
      "persist-to": { type: "string" },
    },
  });
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const ip = text(values.ip) ?? "localhost";
  const host = ip.includes(":") ? `[${ip}]` : ip;
  const protocol = text(values["local-protocol"]) ?? "http";
  return {
    url: `${protocol}://${host}:${text(values.port) ?? "8787"}`,
    persistTo: text(values["persist-to"]),
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

if (import.meta.main) {
  const passThrough = process.argv.slice(2);
  const { url, persistTo } = devOptions(passThrough);
  const local: D1Target = { persistTo };
  const migrated = wrangler(["d1", "migrations", "apply", BINDING, ...d1Flags(local)], {
    capture: true,
    ci: true,
  });
  console.log(`Local D1 migrations:\n${migrationOutcome(migrated)}`);
  const seeded = await d1Execute(local, [
    seedLocalDevKeyStatement(await hashApiKey(LOCAL_DEV_KEY)),
    SEED_DEMO_PETS_STATEMENT,
  ]).catch((err: unknown) => {
    if (!(err instanceof D1Error)) throw err;
    console.error(`error: ${err.message}`);
    process.exit(1);
  });
  const pets = seeded[1]?.length ? `, ${seeded[1].length} demo pets added` : "";
  console.log(
    `Local D1 ready (${LOCAL_DEV_KEY}${pets}). Try: curl -H "Authorization: Bearer ${LOCAL_DEV_KEY}" '${url}/v1/pets?limit=2&status=available' -D -`,
  );
  noteDevServer(persistTo, url);
  runWranglerForeground(["dev", ...passThrough]);
}
