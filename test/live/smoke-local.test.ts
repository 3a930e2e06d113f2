// npm run smoke:local: `npm run smoke` itself, as the deploy workflows run it, against the
// real `npm run dev` on 127.0.0.1 (local-dev-key through SMOKE_API_KEY; its demo pets
// give the list a next page to follow) and its developer platform on localhost: --write
// twice, each leaving no pet behind (its pet created, changed, then removed), then
// read-only, which changes no pet; and its refusals: no SMOKE_API_KEY, and a port where
// nothing responds. No output holds the key.
import { once } from "node:events";
import { type AddressInfo, createServer } from "node:net";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  allPets,
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
  type Ran = { code?: number; stdout: string; stderr: string };
  const ran: Ran = await npm(["smoke", "--", ...args], env).catch((err: Ran) => err);
  const run = { code: ran.code ?? 0, output: ran.stdout + ran.stderr };
  expect(run.output).not.toContain(LOCAL_DEV_KEY);
  return run;
}

/** The ids of every pet listed. */
const petIds = async () => (await allPets(server.base, LOCAL_DEV_KEY)).map((pet) => pet.id);

it("--write passes twice, leaving no pet behind, then read-only passes, skipping nothing and changing no pet; the platform's checks pass", async () => {
  const platform = ["--platform", server.platform];
  const first = await petIds();
  expect((await smoke(["--base", server.base, "--write", ...platform])).code).toBe(0);
  const write = await smoke(["--base", server.base, "--write", ...platform]);
  expect(write, write.output).toMatchObject({ code: 0 });
  expect(write.output).not.toMatch(/skipped/);
  // Fourteen checks of the API (with --write: create, replay, change, remove; three of its
  // MCP server) and three of the platform ran, and passed.
  expect(stripVTControlCharacters(write.output)).toMatch(/Tests +17 passed/);
  expect(await petIds(), "--write leaves no pet behind").toEqual(first);
  const read = await smoke(["--base", server.base, ...platform]);
  expect(read, read.output).toMatchObject({ code: 0 });
  expect(read.output, "a check was skipped (the next page?)").not.toMatch(/skipped/);
  expect(await petIds()).toEqual(first);
});

it("without SMOKE_API_KEY: one error line and the usage, exit 2", async () => {
  const { SMOKE_API_KEY: _, ...withoutKey } = withKey;
  const run = await smoke(["--base", server.base], withoutKey);
  expect(run.code).toBe(2);
  expect(run.output).toMatch(/^error: the environment variable SMOKE_API_KEY .* not set\n\nusage:/);
});

it("a port where nothing responds: exit 1, saying so once", async () => {
  const probe = createServer().listen(0, HOST);
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  probe.close();
  const run = await smoke(["--base", `http://${HOST}:${port}`, "--timeout", "5"]);
  expect(run.code).toBe(1);
  expect(
    run.output.match(/no response from http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/g),
  ).toHaveLength(1);
});

it("--write with a pets:read key fails, saying why", async () => {
  const created = await server.keys("create", "--label", "smoke", "--scope", "pets:read");
  const key = created.trimEnd().split("\n").at(-1) as string;
  const run = await smoke(["--base", server.base, "--write"], { ...scriptEnv, SMOKE_API_KEY: key });
  expect(run.code).toBe(1);
  expect(run.output).toMatch(/"code":"insufficient_scope"/);
  expect(run.output).not.toContain(key);
});
