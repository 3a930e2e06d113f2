// The real `npm run dev` for the live tests: the API on 127.0.0.1 and the developer
// platform on localhost, with a local D1 in a temporary directory, in a process group of
// its own, so that stopping it stops npm, node, both wranglers and workerd together.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import LinkHeader from "http-link-header";
import type { Pet } from "../../src/pets/schemas.ts";

export { LOCAL_DEV_KEY } from "../../src/auth/keys.ts";
export const HOST = "127.0.0.1";

/**
 * What the scripts run with: no metrics, CI mode (no prompts), and not vitest's
 * NODE_ENV=test, which a developer's shell does not have: wrangler bundles the workers with
 * it (`process.env.NODE_ENV`, "development" without it) and miniflare then skips its
 * `request.cf` download, so npm run dev would not run as it does for them.
 */
const { NODE_ENV: _vitest, ...shellEnv } = process.env;
export const scriptEnv = { ...shellEnv, WRANGLER_SEND_METRICS: "false", CI: "true" };

/**
 * Every pet `key` can list at `origin`, page after page by Link rel="next" (never elsewhere):
 * `query` filters and sizes the pages (100 a page unless it says), `headers` go with each
 * page (an `x-d1-bookmark`).
 */
export async function allPets(
  origin: string,
  key: string,
  query: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<Pet[]> {
  const pets: Pet[] = [];
  const first = new URLSearchParams({ limit: "100", ...query });
  for (let url: string | undefined = `${origin}/v1/pets?${first}`; url; ) {
    assert.equal(new URL(url).origin, origin, `a link to another origin: ${url}`);
    const response: Response = await fetch(url, {
      headers: { ...headers, Authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(15_000),
    });
    assert.equal(response.status, 200, url);
    pets.push(...((await response.json()) as Pet[]));
    const next = LinkHeader.parse(response.headers.get("Link") ?? "").rel("next")[0]?.uri;
    url = next && new URL(next, url).href;
  }
  return pets;
}

/** The key that `keys create` / `keys rotate` printed alone on its last line, and its id. */
export function issued(output: string): { key: string; id: string } {
  const key = output.trimEnd().split("\n").at(-1)?.trim() ?? "";
  assert.match(key, /^\S{20,}$/, output);
  assert.equal(output.split(key).length, 2, "the key is printed once");
  const id = /(?:Created key|New key) id (\d+)/.exec(output)?.[1];
  assert.ok(id, output);
  return { key, id };
}

/** `npm run -s <args>` to completion: its output, or an error with its exit code and output. */
export function npm(args: string[], env: NodeJS.ProcessEnv = scriptEnv) {
  return promisify(execFile)("npm", ["run", "-s", ...args], { env, timeout: 120_000 });
}

/**
 * Starts `npm run dev` on 127.0.0.1:`port` (the platform on `platformPort`, by default
 * the next port, as npm run dev chooses) and waits until both respond. `equalsForm` passes
 * the flags as `--port=N` (both forms must work).
 */
export async function startDevServer(
  port: number,
  equalsForm = false,
  platformPort?: number,
  /** The local D1's directory: a new temporary one unless given (a restart on the same data). */
  persistTo = mkdtempSync(path.join(tmpdir(), "petstore-live-")),
) {
  const flags = {
    ip: HOST,
    port: String(port),
    "persist-to": persistTo,
    ...(platformPort ? { "platform-port": String(platformPort) } : {}),
  };
  const args = Object.entries(flags).flatMap(([name, value]) =>
    equalsForm ? [`--${name}=${value}`] : [`--${name}`, value],
  );
  const child = spawn("npm", ["run", "dev", "--", ...args], {
    env: scriptEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = once(child, "exit");
  /** Sends `name` to the server's process group; false once the group is gone. */
  const signal = (name: NodeJS.Signals | 0) => {
    try {
      return process.kill(-(child.pid as number), name);
    } catch {
      return false;
    }
  };
  // Ctrl-C (or vitest stopping this worker) reaches this process, not the server's own
  // process group: take the group down with it.
  const onSignal = (name: NodeJS.Signals) => {
    signal("SIGKILL");
    process.exit(name === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
  const server = {
    /** `http://127.0.0.1:<port>` */
    base: `http://${HOST}:${port}`,
    /** The developer platform: `http://localhost:<platform port>`. */
    platform: `http://localhost:${platformPort ?? port + 1}`,
    /** The local D1's directory. */
    persistTo,
    /** Everything `npm run dev` printed so far. */
    output: () => output,
    /** `npm run keys -- <args>` against this server's database: its standard output. */
    keys: async (...keyArgs: string[]) =>
      (await npm(["keys", "--", ...keyArgs, "--persist-to", persistTo])).stdout,
    /** `npm run accounts -- <args>` against this server's database: its standard output. */
    accounts: async (...accountArgs: string[]) =>
      (await npm(["accounts", "--", ...accountArgs, "--persist-to", persistTo])).stdout,
    /** `kill -9` of the whole process group (npm, node, both wranglers, workerd); keeps the database. */
    async kill() {
      signal("SIGKILL");
      await exited;
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
      for (let i = 0; i < 50 && signal(0); i++) await sleep(100);
    },
    /** Stops the whole process group and deletes the database. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        signal("SIGTERM");
        const timer = setTimeout(() => signal("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      signal("SIGKILL"); // stragglers of the group (workerd)
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
      // SIGKILL lands asynchronously: a workerd still flushing would write the files again.
      for (let i = 0; i < 50 && signal(0); i++) await sleep(100);
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
  // npm run dev prints both addresses once both respond; the API must then respond GET /.
  const readyLine = `npm run dev: the API on ${server.base} `;
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", () => {
      if (output.includes(readyLine)) resolve();
    });
    exited.then(([code]) => reject(new Error(`npm run dev exited (${code}):\n${output}`)));
    AbortSignal.timeout(120_000).onabort = () =>
      reject(new Error(`npm run dev printed no "${readyLine}" within 120 s:\n${output}`));
  });
  try {
    await ready;
    const response = await fetch(`${server.base}/`);
    if (response.status !== 200)
      throw new Error(`GET / responded with ${response.status}:\n${output}`);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}
export type DevServer = Awaited<ReturnType<typeof startDevServer>>;
