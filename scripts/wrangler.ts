// Runs the project's own wrangler (Node 24 via the `node` devDependency), non-interactively.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const WRANGLER = fileURLToPath(new URL("../node_modules/.bin/wrangler", import.meta.url));

/**
 * No metrics; and no `request.cf` download: without one, miniflare fetches a sample `cf`
 * object from workers.cloudflare.com at each start and, offline, prints the failure and
 * uses its placeholder. Nothing of ours reads `request.cf`, so the placeholder it is
 * (wrangler's CLOUDFLARE_CF_FETCH_ENABLED; set it to true to have the download back).
 */
export const wranglerEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false",
};

interface Options {
  /** Capture standard output and error instead of showing them. */
  capture?: boolean;
  /** CI mode: wrangler asks nothing. */
  ci?: boolean;
}

/** Runs wrangler to completion; returns its exit status and (captured) output. */
export function runWrangler(args: string[], options: Options = { capture: true, ci: true }) {
  return spawnSync(WRANGLER, args, {
    env: options.ci ? { ...wranglerEnv, CI: "true" } : wranglerEnv,
    stdio: options.capture ? ["ignore", "pipe", "pipe"] : "inherit",
    encoding: "utf8",
  });
}

/** Runs wrangler to completion; exits with its output when it fails. */
export function wrangler(args: string[], options: Options = {}): string {
  const result = runWrangler(args, options);
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
