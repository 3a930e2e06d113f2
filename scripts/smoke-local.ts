// npm run smoke:local [-- <extra smoke flags>]
// Proves `npm run smoke` itself, as CI runs it (.ci/run):
//   1. without SMOKE_API_KEY it refuses with one line and exit 2;
//   2. against a port where nothing answers it fails with one clear line and exit 1;
//   3. against the real `npm run dev` on 127.0.0.1 (local D1 in a temporary directory,
//      `local-dev-key` through SMOKE_API_KEY) it passes with --write, twice (so the
//      list has a next page to follow), then read-only, which changes no data.
// Extra flags are passed to the runs against `npm run dev`. No output may contain the key.
// Bounded in time; stops the server (its whole process group) however it ends.
import { createServer } from "node:net";
import {
  check,
  HOST,
  launchDevServer,
  runAgainst,
  runNpmScript,
  type ScriptResult,
  scriptEnv,
} from "./dev-server.ts";

const PORT = Number(process.env.SMOKE_PORT ?? 8794);
const KEY = "local-dev-key";
const TOTAL_TIMEOUT_MS = 240_000;
const extraFlags = process.argv.slice(2);

function log(message: string): void {
  console.log(`[smoke:local] ${message}`);
}

/** `npm run -s smoke -- <args>`, its output shown indented, the key never in it. */
async function smoke(args: string[], env: NodeJS.ProcessEnv): Promise<ScriptResult> {
  log(`npm run smoke -- ${args.join(" ")}`);
  const result = await runNpmScript(["-s", "smoke", "--", ...args], { env, timeoutMs: 60_000 });
  const output = result.stdout + result.stderr;
  for (const line of output.trimEnd().split("\n")) console.log(`    ${line}`);
  check(!output.includes(KEY), "the smoke test printed the API key");
  check(!/\n\s+at .+:\d+:\d+/.test(output), `a Node stack trace:\n${output}`);
  return result;
}

/** How many checks passed, from the summary line of a run that failed none. */
function held(stdout: string): number | undefined {
  const summary = /^PASS: (\d+) passed, 0 failed/m.exec(stdout);
  return summary ? Number(summary[1]) : undefined;
}

/** A port on 127.0.0.1 where nothing listens: the OS picks a free one, we close it. */
function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

const withKey = { ...scriptEnv, SMOKE_API_KEY: KEY };
const server = launchDevServer(PORT, { label: "smoke" });

async function petCount(): Promise<number> {
  let count = 0;
  let next: string | undefined = `${server.base}/v1/pets?limit=100`;
  while (next) {
    const response: Response = await fetch(next, {
      headers: { Authorization: `Bearer ${KEY}` },
      signal: AbortSignal.timeout(10_000),
    });
    check(response.status === 200, `counting pets: ${response.status}`);
    count += ((await response.json()) as unknown[]).length;
    const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("Link") ?? "")?.[1];
    next = link ? new URL(link, server.base).href : undefined;
  }
  return count;
}

async function main(): Promise<void> {
  const { SMOKE_API_KEY: _unset, ...withoutKey } = withKey;
  const usage = await smoke(["--base", server.base], withoutKey);
  check(usage.code === 2, `without SMOKE_API_KEY: exit ${usage.code}, not 2`);
  check(
    usage.stderr.startsWith("error: the environment variable SMOKE_API_KEY"),
    `without SMOKE_API_KEY: no clear first line:\n${usage.stderr}`,
  );
  log("without SMOKE_API_KEY: one error line and the usage, exit 2");

  const port = await deadPort();
  const dead = await smoke(["--base", `http://${HOST}:${port}`, "--timeout", "5"], withKey);
  check(dead.code === 1, `nothing listening: exit ${dead.code}, not 1`);
  check(
    dead.stdout.includes(
      `FAIL GET /: no answer: GET http://${HOST}:${port}/: connection refused: nothing listens there`,
    ),
    `nothing listening: no clear line:\n${dead.stdout}`,
  );
  check(/^FAIL: 0 passed, 1 failed, \d+ not run/m.test(dead.stdout), "nothing listening: summary");
  log(`port ${port}, where nothing listens: one clear FAIL line, exit 1`);

  log(`starting npm run dev on ${server.base}, local D1 in ${server.persistTo}`);
  await server.ready();
  const base = ["--base", server.base, ...extraFlags];
  for (const run of [1, 2]) {
    const write = await smoke([...base, "--write"], withKey);
    check(write.code === 0, `--write run ${run}: exit ${write.code}`);
    check(held(write.stdout) === 9, `--write run ${run}: not 9 checks held`);
  }
  const before = await petCount();
  const read = await smoke(base, withKey);
  check(read.code === 0, `read-only: exit ${read.code}`);
  check(held(read.stdout) === 7, "read-only: not 7 checks held");
  check(read.stdout.includes('Link rel="next" followed'), "read-only: the next page not followed");
  check((await petCount()) === before, "the read-only smoke test changed the number of pets");
  log(`--write passes twice, then read-only passes (follows rel="next"; still ${before} pets)`);
}

await runAgainst(server, "smoke:local", TOTAL_TIMEOUT_MS, main);
