// npm run smoke:local: `npm run smoke` itself, as the deploy workflows run it, against the
// real `npm run dev` on 127.0.0.1 (local-dev-key through SMOKE_API_KEY): --write twice
// (so the list has a next page to follow), then read-only, which changes no pet; and its
// refusals: no SMOKE_API_KEY, and a port where nothing answers. No output holds the key.
import { createServer } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type DevServer,
  HOST,
  LOCAL_DEV_KEY,
  npm,
  scriptEnv,
  startDevServer,
} from "./dev-server.ts";

const PORT = Number(process.env.SMOKE_PORT ?? 8794);
const withKey = { ...scriptEnv, SMOKE_API_KEY: LOCAL_DEV_KEY };

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer(PORT);
});
afterAll(() => server?.stop());

/** `npm run smoke -- <args>`: exit code and output (which must never hold the key). */
async function smoke(args: string[], env: NodeJS.ProcessEnv = withKey) {
  const run = await npm(["smoke", "--", ...args], env).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      output: err.stdout + err.stderr,
    }),
  );
  expect(run.output).not.toContain(LOCAL_DEV_KEY);
  return run;
}

/** The number of pets, by walking the pages of GET /v1/pets. */
async function petCount(): Promise<number> {
  let count = 0;
  let next: string | undefined = `${server.base}/v1/pets?limit=100`;
  while (next) {
    const response: Response = await fetch(next, {
      headers: { Authorization: `Bearer ${LOCAL_DEV_KEY}` },
    });
    count += ((await response.json()) as unknown[]).length;
    const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("Link") ?? "")?.[1];
    next = link && new URL(link, server.base).href;
  }
  return count;
}

it("--write passes twice, then read-only passes, skipping nothing and changing no pet", async () => {
  // The first run meets one pet only, so its list has no next page to follow yet.
  expect((await smoke(["--base", server.base, "--write"])).code).toBe(0);
  const first = await petCount();
  const write = await smoke(["--base", server.base, "--write"]);
  expect(write, write.output).toMatchObject({ code: 0 });
  expect(write.output).not.toMatch(/skipped/);
  expect(await petCount(), "--write creates exactly one pet").toBe(first + 1);
  const before = await petCount();
  const read = await smoke(["--base", server.base]);
  expect(read, read.output).toMatchObject({ code: 0 });
  expect(read.output, "a check was skipped (the next page?)").not.toMatch(/skipped/);
  expect(await petCount()).toBe(before);
});

it("without SMOKE_API_KEY: one error line and the usage, exit 2", async () => {
  const { SMOKE_API_KEY: _, ...withoutKey } = withKey;
  const run = await smoke(["--base", server.base], withoutKey);
  expect(run.code).toBe(2);
  expect(run.output).toMatch(/^error: the environment variable SMOKE_API_KEY .* not set\n\nusage:/);
});

it("a port where nothing answers: exit 1, saying so once", async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, HOST, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const run = await smoke(["--base", `http://${HOST}:${port}`, "--timeout", "5"]);
  expect(run.code).toBe(1);
  expect(run.output.match(/no answer from http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/g)).toHaveLength(
    1,
  );
});

it("--write with a pets:read key fails, saying why", async () => {
  const created = await server.keys("create", "--label", "smoke", "--scope", "pets:read");
  const key = created.trimEnd().split("\n").at(-1) as string;
  const run = await smoke(["--base", server.base, "--write"], { ...scriptEnv, SMOKE_API_KEY: key });
  expect(run.code).toBe(1);
  expect(run.output).toMatch(/"code":"insufficient_scope"/);
  expect(run.output).not.toContain(key);
});
