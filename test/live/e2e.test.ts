// npm run e2e: the real `npm run dev` (flags in the `--name=value` form) on 127.0.0.1
// with a temporary local D1, and the real keys CLI against that database: the seeded
// `local-dev-key` lists, creates and fetches pets; a key issued with `keys create` works
// and, once revoked, is refused within the auth cache's bound; restricted keys (scopes,
// expiry, rotation, list --json) as a person runs them; the server keeps answering while
// keys commands run; without a server, keys opens the database itself.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OwnedKey } from "../../scripts/key-statements.ts";
import type { Pet } from "../../src/pets/schemas.ts";
import {
  type DevServer,
  issued,
  LOCAL_DEV_KEY,
  npm,
  scriptEnv,
  startDevServer,
} from "./dev-server.ts";

const PORT = Number(process.env.E2E_PORT ?? 8791);
/** A revoked (or rotated-out) key is refused at once or within 60 seconds at most. */
const REVOCATION_BOUND_MS = 60_000;

/** Not the next port (npm run dev's default): --platform-port= must be read. */
const PLATFORM_PORT = Number(process.env.E2E_PLATFORM_PORT ?? PORT + 2);

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer(PORT, true, PLATFORM_PORT);
});
afterAll(() => server?.stop());

async function call(method: string, path: string, key: string | null, body?: unknown) {
  const headers: Record<string, string> = {};
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`${server.base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, headers: response.headers, json: await response.json() };
}

/** Polls until `key` is refused with 401; fails if it is still accepted after the bound. */
async function refusedWithinBound(key: string) {
  await expect
    .poll(async () => (await call("GET", "/v1/pets?limit=1", key)).status, {
      timeout: REVOCATION_BOUND_MS,
      interval: 1_000,
    })
    .toBe(401);
  return call("GET", "/v1/pets?limit=1", key);
}

/** `npm run keys -- list --json`: the keys of the server's database. */
const listKeys = async () => JSON.parse(await server.keys("list", "--json")) as OwnedKey[];

describe("npm run dev", () => {
  it("prints both addresses it serves and the migration table once", () => {
    const output = server.output();
    expect(output).toContain(
      `Try: curl -H "Authorization: Bearer ${LOCAL_DEV_KEY}" '${server.base}/v1/pets?limit=2&status=available' -D -`,
    );
    expect(output).toContain(
      `npm run dev: the API on ${server.base} (reference: ${server.base}/v1/docs), the MCP server on ${server.base}/mcp, the developer platform on http://localhost:${PLATFORM_PORT} (open it at localhost`,
    );
    expect(output.split("0001_create_pets.sql")).toHaveLength(2);
  });

  it("serves the developer platform at localhost, on the API's database, its addresses for this run", async () => {
    const page = await fetch(`${server.platform}/`, { signal: AbortSignal.timeout(10_000) });
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Security-Policy")).toMatch(/script-src 'self'/);
    expect(await page.text()).toContain(`href="${server.base}/v1/docs"`);
    // A state change from its own origin is accepted (PLATFORM_ORIGIN is this run's);
    // the relying party is localhost.
    const options = await fetch(`${server.platform}/api/sign-up/options`, {
      method: "POST",
      headers: { Origin: server.platform, "Content-Type": "application/json" },
      body: JSON.stringify({ displayName: "e2e" }),
    });
    expect(options.status).toBe(200);
    expect(await options.json()).toMatchObject({ rp: { id: "localhost" } });
    expect(await server.accounts("list")).toBe("No accounts.\n");
  });

  it('seeds demo pets: the README\'s first curl shows a page with Link: rel="next"', async () => {
    expect(server.output()).toMatch(/demo pets added/);
    const page = await call("GET", "/v1/pets?limit=2&status=available", LOCAL_DEV_KEY);
    expect(page.status).toBe(200);
    expect(page.json).toEqual([
      expect.objectContaining({ status: "available" }),
      expect.objectContaining({ status: "available" }),
    ]);
    expect(page.headers.get("Link")).toMatch(/^<[^>]*\/v1\/pets\?[^>]*cursor=[^>]*>; rel="next"/);
  });

  it("local-dev-key lists, creates and fetches pets in the database --persist-to= names", async () => {
    expect((await call("GET", "/v1/pets", null)).status).toBe(401);
    const list = await call("GET", "/v1/pets?limit=5", LOCAL_DEV_KEY);
    expect(list.status).toBe(200);
    expect(list.json).toBeInstanceOf(Array);
    const name = `e2e-${Date.now()}`;
    const created = await call("POST", "/v1/pets", LOCAL_DEV_KEY, { name, categoryId: 7 });
    const pet = created.json as Pet;
    expect(created.status).toBe(201);
    expect(pet).toEqual({ id: expect.any(Number), name, categoryId: 7, status: "available" });
    expect(created.headers.get("Location")).toBe(`/v1/pets/${pet.id}`);
    const fetched = await call("GET", `/v1/pets/${pet.id}`, LOCAL_DEV_KEY);
    expect(fetched.status).toBe(200);
    expect(fetched.json).toEqual(pet);
    expect(fetched.headers.get("Deprecation")).toMatch(/^@\d+$/);
    const listed = await call("GET", "/v1/pets?limit=100", LOCAL_DEV_KEY);
    expect(listed.json).toContainEqual(pet);
  });
});

describe("npm run keys against the server's database", () => {
  it("a created key works; once revoked it is refused within 60 s", async () => {
    const output = await server.keys("create", "--label", "e2e");
    const { key, id } = issued(output);
    expect(output).toMatch(/^Created key id \d+/m);
    const table = await server.keys("list");
    expect(table).toContain("e2e");
    expect(table).not.toContain(key);
    expect((await call("GET", "/v1/pets?limit=1", key)).status).toBe(200);
    const create = await call("POST", "/v1/pets", key, { name: "e2e-b", categoryId: 1 });
    expect(create.status).toBe(201);

    await server.keys("revoke", id);
    const refused = await refusedWithinBound(key);
    expect(refused.json).toMatchObject({ code: "unauthorized", status: 401 });
    expect(refused.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    await expect(server.keys("revoke", id), "revoking a revoked key").rejects.toMatchObject({
      code: 1,
    });
    expect((await call("GET", "/v1/pets?limit=1", LOCAL_DEV_KEY)).status).toBe(200);
  });

  it("a pets:read key reads, and gets 403 insufficient_scope on a create", async () => {
    const web = issued(await server.keys("create", "--label", "web", "--scope", "pets:read"));
    expect((await call("GET", "/v1/pets?limit=1", web.key)).status).toBe(200);
    const denied = await call("POST", "/v1/pets", web.key, { name: "web", categoryId: 1 });
    expect(denied.status).toBe(403);
    expect(denied.json).toMatchObject({ code: "insufficient_scope", status: 403 });
    expect(denied.headers.get("WWW-Authenticate")).toBe(
      'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"',
    );

    // Rotating a key this isolate has verified (cached): the new key works at once with the
    // same scopes; the old one is refused within the auth cache's bound, as a revocation.
    const rotated = issued(await server.keys("rotate", web.id, "--grace", "0s"));
    expect((await call("GET", "/v1/pets?limit=1", rotated.key)).status).toBe(200);
    const still = await call("POST", "/v1/pets", rotated.key, { name: "x", categoryId: 1 });
    expect(still.status, "the rotated key keeps pets:read only").toBe(403);
    await refusedWithinBound(web.key);

    const listed = await listKeys();
    expect(listed.find((k) => String(k.id) === web.id)).toMatchObject({
      scopes: ["pets:read"],
      expiresAt: expect.any(String),
      lastUsedAt: expect.any(String),
      account: "operator",
    });
    expect(listed.find((k) => String(k.id) === rotated.id)).toMatchObject({
      label: "web",
      scopes: ["pets:read"],
      expiresAt: null,
    });
    const table = await server.keys("list");
    expect(table).toMatch(/last used/);
    expect(table).toMatch(/pets:read +operator /);
  });

  it("rotate --grace 0s of a key not yet verified here: the old key is refused at once", async () => {
    const spare = issued(await server.keys("create", "--label", "spare", "--scope", "pets:read"));
    const rotated = issued(await server.keys("rotate", spare.id, "--grace", "0s"));
    expect((await call("GET", "/v1/pets?limit=1", spare.key)).status).toBe(401);
    expect((await call("GET", "/v1/pets?limit=1", rotated.key)).status).toBe(200);
  });

  it("a key made with --expires-in 5s works, then is refused from its expiry instant", async () => {
    const output = await server.keys("create", "--label", "temp", "--expires-in", "5s");
    const temp = issued(output);
    const early = await call("GET", "/v1/pets?limit=1", temp.key);
    const earlyAt = Date.now();
    const expiresAt = Date.parse(/expires (\S+)\)/.exec(output)?.[1] ?? "");
    expect(earlyAt, "the key was first tried after its expiry").toBeLessThan(expiresAt);
    expect(early.status).toBe(200);
    // Served from the auth cache from here on: the cache entry ends at the expiry instant.
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
    const late = await call("GET", "/v1/pets?limit=1", temp.key);
    expect(late.status).toBe(401);
    expect(late.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    expect((late.json as { message: string }).message).toMatch(/expired/);
    expect((await listKeys()).find((k) => String(k.id) === temp.id)).toMatchObject({
      expiresAt: expect.any(String),
    });
  });

  it("npm run accounts lists the platform's accounts, and says so when an id has none", async () => {
    expect(await server.accounts("list")).toBe("No accounts.\n");
    expect(JSON.parse(await server.accounts("list", "--json"))).toEqual([]);
    await expect(server.accounts("disable", "acct_AAAAAAAAAAAAAAAAAAAAAA")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: no account with id acct_A{22} in local/),
    });
  });

  it("a wrong flag is one error line and the usage, exit 2, no stack trace", async () => {
    const wrong = npm(["keys", "--", "create", "--label", "x", "--scope", "pets:admin"]);
    await expect(wrong).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^error: --scope must be one of/),
    });
    const { stderr } = (await wrong.catch((err: { stderr: string }) => err)) as { stderr: string };
    expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+|ERR_/);
  });
});

it("the server answers every request while keys commands change its database", async () => {
  // Four clients read pages (from D1: each status and limit once per client) and create
  // pets without pause while a person creates, lists, rotates and revokes keys.
  const statuses: number[] = [];
  let running = true;
  const client = async (n: number) => {
    for (let i = 0; running; i++) {
      const answer =
        i % 2 === 0
          ? await call(
              "GET",
              `/v1/pets?status=sold&limit=${1 + ((i * 4 + n) % 100)}`,
              LOCAL_DEV_KEY,
            )
          : await call("POST", "/v1/pets", LOCAL_DEV_KEY, {
              name: `busy-${n}-${i}`,
              categoryId: 3,
            });
      statuses.push(answer.status);
    }
  };
  const clients = [0, 1, 2, 3].map(client);
  try {
    const { id } = issued(await server.keys("create", "--label", "busy", "--scope", "pets:read"));
    expect(await server.keys("list")).toContain("busy");
    const rotated = issued(await server.keys("rotate", id, "--grace", "0s"));
    expect(await server.keys("revoke", rotated.id)).toMatch(/^Revoked key id/);
  } finally {
    running = false;
    await Promise.all(clients);
  }
  expect(statuses.length, "answers while the keys commands ran").toBeGreaterThan(20);
  expect(statuses.filter((s) => s !== 200 && s !== 201)).toEqual([]);
});

describe("npm run keys without a running server", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "petstore-keys-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const keys = (...args: string[]) => npm(["keys", "--", ...args, "--persist-to", dir]);

  it("says how to make the tables of a database that has none, then uses the migrated one", async () => {
    await expect(keys("list")).rejects.toMatchObject({
      code: 1,
      stdout: "",
      stderr: expect.stringMatching(
        /^error: the local database has no tables yet .*`npm run dev -- --persist-to .*` applies migrations\/ first/,
      ),
    });
    const migrate = ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", dir];
    await promisify(execFile)("npx", migrate, { env: scriptEnv });
    const { id } = issued((await keys("create", "--label", "offline")).stdout);
    const listed = JSON.parse((await keys("list", "--json")).stdout) as OwnedKey[];
    expect(listed).toMatchObject([{ id: Number(id), label: "offline", revokedAt: null }]);
  });
});
