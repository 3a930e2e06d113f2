// The real `npm run dev` (wrangler dev, local D1 in a temporary --persist-to directory)
// on one address, for the scripts that drive it from outside (`npm run e2e`,
// `npm run smoke:local`), and `npm run <script>` to completion beside it.
// The server runs in its own process group, so stopping it stops npm, node,
// wrangler and workerd together, however the caller ends.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** What the scripts run with: no metrics, CI mode (no prompts). */
export const scriptEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };

export interface DevServer {
  /** `http://HOST:PORT`. */
  base: string;
  /** The local D1's directory (pass it to `npm run keys -- ... --persist-to`). */
  persistTo: string;
  /** Resolves once `GET /` answers 200; rejects if the server exits or is too slow. */
  ready(): Promise<void>;
  /** The last 20,000 characters the server printed. */
  log(): string;
  /** Stops the whole process group and removes the local D1. Safe to call twice. */
  stop(): Promise<void>;
}

export function launchDevServer(options: {
  host: string;
  port: number;
  /** Prefix of the temporary D1 directory. */
  name: string;
  startupTimeoutMs?: number;
}): DevServer {
  const base = `http://${options.host}:${options.port}`;
  const startupTimeoutMs = options.startupTimeoutMs ?? 120_000;
  const persistTo = mkdtempSync(path.join(tmpdir(), `${options.name}-`));
  let output = "";
  const child: ChildProcess = spawn(
    "npm",
    [
      "run",
      "dev",
      "--",
      "--ip",
      options.host,
      "--port",
      String(options.port),
      "--persist-to",
      persistTo,
    ],
    { env: scriptEnv, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on("data", (chunk: Buffer) => {
      output = (output + chunk).slice(-20_000);
    });
  }

  async function ready(): Promise<void> {
    const deadline = Date.now() + startupTimeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) {
        throw new Error(`npm run dev exited early (${child.exitCode})\n${output}`);
      }
      try {
        const response = await fetch(`${base}/`, { signal: AbortSignal.timeout(2_000) });
        await response.body?.cancel();
        if (response.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`the server did not answer within ${startupTimeoutMs / 1000} s\n${output}`);
  }

  async function stopGroup(): Promise<void> {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-(child.pid as number), signal);
      } catch {
        // already gone
      }
    };
    signalGroup("SIGTERM");
    const timer = setTimeout(() => signalGroup("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
    // Stragglers of the group (workerd) get no second chance.
    signalGroup("SIGKILL");
  }

  return {
    base,
    persistTo,
    ready,
    log: () => output,
    async stop() {
      await stopGroup();
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}

export interface ScriptResult {
  /** The exit code; null when the script was killed (by the timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run <args>` to completion, whatever its exit code. */
export function runNpmScript(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ScriptResult> {
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", ...args], {
      env: options.env ?? scriptEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGTERM"), options.timeoutMs ?? 120_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A check of a script that drives the server: reported as its message, without a stack. */
export class Failure extends Error {}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Failure(message);
}

/**
 * Runs `main` within `totalTimeoutMs`, prints `[tag] PASS` or `[tag] FAIL: <reason>`
 * (a stack only for what is not a Failure; then the server's last output), sets the exit code, and stops the server
 * however it ends (also on SIGINT/SIGTERM and on the timeout).
 */
export async function runAgainst(
  server: DevServer,
  tag: string,
  totalTimeoutMs: number,
  main: () => Promise<void>,
): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`[${tag}] FAIL: did not finish within ${totalTimeoutMs / 1000} s`);
    void server.stop().finally(() => process.exit(1));
  }, totalTimeoutMs);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      void server.stop().finally(() => process.exit(130));
    });
  }
  try {
    await main();
    console.log(`[${tag}] PASS`);
    process.exitCode = 0;
  } catch (err) {
    console.error(`[${tag}] FAIL: ${err instanceof Error ? err.message : String(err)}`);
    if (!(err instanceof Failure) && err instanceof Error) console.error(err.stack);
    console.error(`[${tag}] the server's last output:\n${server.log().slice(-3_000)}`);
    process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    await server.stop();
  }
}
