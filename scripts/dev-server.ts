// The real `npm run dev` for the scripts that drive it from outside (npm run e2e,
// npm run test:browser, npm run smoke:local): wrangler dev on 127.0.0.1 with a local
// D1 in a temporary directory, started in a process group of its own so that stopping
// it stops npm, node, wrangler and workerd together, however the run ends. Also
// `npm run <script>` to completion beside it (the key CLI against that database).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export const HOST = "127.0.0.1";

/** What the scripts run with: no metrics, CI mode (no prompts). */
export const scriptEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };

/** A failed check: reported as one line, without a stack trace. */
export class Failure extends Error {}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Failure(message);
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

/** Runs `npm run <args>` to completion; its standard output, or a Failure. */
export async function npm(args: string[], timeoutMs = 120_000): Promise<string> {
  const { code, stdout, stderr } = await runNpmScript(args, { timeoutMs });
  if (code !== 0) throw new Failure(`npm run ${args.join(" ")} exited ${code}\n${stdout}${stderr}`);
  return stdout;
}

export interface DevServer {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** The local D1 of this run (pass to `npm run keys -- ... --persist-to`). */
  persistTo: string;
  /** Resolves once `GET /` answers 200; a Failure if the server exits or is too slow. */
  ready(): Promise<void>;
  /** The last 20,000 characters the server printed. */
  log(): string;
  /** `npm run keys -- <args>` against this run's database; answers standard output. */
  keys(...args: string[]): Promise<string>;
  /** Stops the server's whole process group and deletes the database. Idempotent. */
  stop(): Promise<void>;
}

/** Starts `npm run dev` on 127.0.0.1:`port` in the background; `ready()` waits for it. */
export function launchDevServer(
  port: number,
  options: { startupTimeoutMs?: number; label?: string } = {},
): DevServer {
  const base = `http://${HOST}:${port}`;
  const startupTimeoutMs = options.startupTimeoutMs ?? 120_000;
  const persistTo = mkdtempSync(path.join(tmpdir(), `petstore-${options.label ?? "dev"}-`));
  const server: ChildProcess = spawn(
    "npm",
    ["run", "dev", "--", "--ip", HOST, "--port", String(port), "--persist-to", persistTo],
    { env: scriptEnv, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  let serverLog = "";
  for (const stream of [server.stdout, server.stderr]) {
    stream?.on("data", (chunk: Buffer) => {
      serverLog = (serverLog + chunk).slice(-20_000);
    });
  }

  async function ready(): Promise<void> {
    const deadline = Date.now() + startupTimeoutMs;
    while (Date.now() < deadline) {
      check(
        server.exitCode === null,
        `npm run dev exited early (${server.exitCode})\n${serverLog}`,
      );
      try {
        const response = await fetch(`${base}/`, { signal: AbortSignal.timeout(2_000) });
        await response.body?.cancel();
        if (response.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Failure(
      `the server did not answer within ${startupTimeoutMs / 1000} s\n${serverLog}`,
    );
  }

  async function stopGroup(): Promise<void> {
    if (server.pid === undefined || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-(server.pid as number), signal);
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
    log: () => serverLog,
    keys: (...args) => npm(["keys", "--", ...args, "--persist-to", persistTo]),
    async stop() {
      await stopGroup();
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}

/** Starts `npm run dev` on 127.0.0.1:`port` and waits until `GET /` answers 200. */
export async function startDevServer(
  port: number,
  options: { startupTimeoutMs?: number; label?: string } = {},
): Promise<DevServer> {
  const server = launchDevServer(port, options);
  try {
    await server.ready();
    return server;
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/**
 * Runs `main` under a watchdog, stops everything `cleanUp` names however it ends
 * (also on SIGINT/SIGTERM), and sets the exit code: 0 on success, 1 on a failure.
 * `onFailure` may add context (the server's last output) after the FAIL line.
 */
export async function runBounded(
  name: string,
  totalTimeoutMs: number,
  main: () => Promise<void>,
  cleanUp: () => Promise<void>,
  onFailure: () => void = () => {},
): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`[${name}] FAIL: did not finish within ${totalTimeoutMs / 1000} s`);
    void cleanUp().finally(() => process.exit(1));
  }, totalTimeoutMs);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      void cleanUp().finally(() => process.exit(130));
    });
  }
  try {
    await main();
    console.log(`[${name}] PASS`);
    process.exitCode = 0;
  } catch (err) {
    console.error(`[${name}] FAIL: ${err instanceof Error ? err.message : String(err)}`);
    if (!(err instanceof Failure) && err instanceof Error) console.error(err.stack);
    onFailure();
    process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    await cleanUp();
  }
}

/** `runBounded` around one server: stops it however `main` ends; shows its output on a failure. */
export function runAgainst(
  server: DevServer,
  name: string,
  totalTimeoutMs: number,
  main: () => Promise<void>,
): Promise<void> {
  return runBounded(
    name,
    totalTimeoutMs,
    main,
    () => server.stop(),
    () => console.error(`[${name}] the server's last output:\n${server.log().slice(-3_000)}`),
  );
}
