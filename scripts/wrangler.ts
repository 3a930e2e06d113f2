// Runs the project's own wrangler (Node 24 via the `node` devDependency), non-interactively.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const WRANGLER = fileURLToPath(new URL("../node_modules/.bin/wrangler", import.meta.url));

const wranglerEnv = { ...process.env, WRANGLER_SEND_METRICS: "false" };

/** Runs wrangler to completion; throws with its output when it fails. */
export function wrangler(
  args: string[],
  options: { capture?: boolean; ci?: boolean } = {},
): string {
  const result = spawnSync(WRANGLER, args, {
    env: options.ci ? { ...wranglerEnv, CI: "true" } : wranglerEnv,
    stdio: options.capture ? ["ignore", "pipe", "pipe"] : "inherit",
    encoding: "utf8",
  });
  if (result.status !== 0) {
    const output = options.capture ? `\n${result.stdout ?? ""}${result.stderr ?? ""}` : "";
    console.error(`wrangler ${args.slice(0, 3).join(" ")} failed (exit ${result.status})${output}`);
    process.exit(1);
  }
  return result.stdout ?? "";
}

/** Starts wrangler in the foreground of this process and mirrors its exit. */
export function runWranglerForeground(args: string[]): void {
  const child = spawn(WRANGLER, args, { env: wranglerEnv, stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

/** `d1 execute` target flags: the local database, or a named environment's remote one. */
export function d1Target(environment: string | undefined, persistTo?: string): string[] {
  if (environment) return ["--remote", "--env", environment];
  return persistTo ? ["--local", "--persist-to", persistTo] : ["--local"];
}
