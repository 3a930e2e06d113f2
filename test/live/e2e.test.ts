// npm run e2e: the real `npm run dev` (flags in the `--name=value` form) on 127.0.0.1
// with a temporary local D1, and the real keys CLI against that database: the seeded
// `local-dev-key` lists, creates and fetches pets, changes one with If-Match (its change read
// at once with its bookmark, and within the cache's bound without; a stale tag is 412, a
// refused move 409) and removes it (204, then 404); a key issued with `keys create` works
// and, once revoked, is refused within the auth cache's bound; restricted keys (scopes,
// expiry, rotation, list --json) as a person runs them; the server keeps responding while
// keys commands run; without a server, keys opens the database itself. Every response is
// checked against the OpenAPI document.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OwnedKey } from "../../scripts/key-statements.ts";
import { CACHE_MAX_AGE_MS } from "../../src/config.ts";
import type { Pet, PetStatus } from "../../src/pets/schemas.ts";
import { assertConforms } from "../support/conformance.ts";
import {
  allPets,
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

/** One request; its response must conform to the OpenAPI document. `json`: the body, if any. */
async function call(
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
) {
  const headers: Record<string, string> = {};
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const request = new Request(`${server.base}${path}`, {
    method,
    headers: { ...headers, ...extraHeaders },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const response = await fetch(request);
  await assertConforms(request, response);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    json: text ? JSON.parse(text) : undefined,
  };
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

describe("changing and removing a pet with local-dev-key (updatePet, deletePet)", () => {
  const MERGE_PATCH = { "Content-Type": "application/merge-patch+json" };
  /**
   * After a change no location serves what it invalidated for longer: the cache's 4 s, and
   * 1 s for a replica's lag (docs/design.md, "The cache and changing pets").
   */
  const CHANGE_BOUND_MS = CACHE_MAX_AGE_MS + 1_000;

  /**
   * A new pet of `status`, then three of each of `others` after it: the page of two it is
   * on, leaves or joins has a next page, so those pages are cached when read.
   */
  async function petAmongOthers(status: PetStatus, others: PetStatus[]) {
    const name = `e2e-change-${Date.now()}`;
    const created = await call("POST", "/v1/pets", LOCAL_DEV_KEY, { name, categoryId: 7, status });
    expect(created.status).toBe(201);
    for (const other of others.flatMap((s) => [s, s, s])) {
      const neighbour = { name: `${name}-${other}`, categoryId: 7, status: other };
      expect((await call("POST", "/v1/pets", LOCAL_DEV_KEY, neighbour)).status).toBe(201);
    }
    return { pet: created.json as Pet, etag: created.headers.get("ETag") as string };
  }
  /** getPet; `bookmark` sent back when given. */
  const getPet = (id: number, bookmark?: string) =>
    call("GET", `/v1/pets/${id}`, LOCAL_DEV_KEY, undefined, bookmarkHeader(bookmark));
  const bookmarkHeader = (bookmark?: string): Record<string, string> =>
    bookmark ? { "x-d1-bookmark": bookmark } : {};
  /** The ids the listing of `status` shows, every page of two walked. */
  const listed = async (status: PetStatus, bookmark?: string) =>
    (
      await allPets(server.base, LOCAL_DEV_KEY, { status, limit: "2" }, bookmarkHeader(bookmark))
    ).map((p) => p.id);
  const patch = (id: number, body: unknown, ifMatch: string) =>
    call("PATCH", `/v1/pets/${id}`, LOCAL_DEV_KEY, body, { ...MERGE_PATCH, "If-Match": ifMatch });
  const remove = (id: number, ifMatch?: string) =>
    call(
      "DELETE",
      `/v1/pets/${id}`,
      LOCAL_DEV_KEY,
      undefined,
      ifMatch ? { "If-Match": ifMatch } : {},
    );

  it("create, read, change with If-Match and read it at once with its bookmark; a stale tag is 412, sold -> available 409; removed: 204, then 404 and listed nowhere", async () => {
    const { pet, etag: createdTag } = await petAmongOthers("available", ["available", "sold"]);
    // Read as a client would: getPet (its ETag is the create's) and the filtered listing.
    const read = await getPet(pet.id);
    expect({ status: read.status, json: read.json }).toEqual({ status: 200, json: pet });
    expect(read.headers.get("ETag")).toBe(createdTag);
    expect(await listed("available")).toContain(pet.id);
    expect(await listed("sold")).not.toContain(pet.id);

    const change = await patch(pet.id, { status: "sold" }, createdTag);
    const sold: Pet = { ...pet, status: "sold" };
    expect({ status: change.status, json: change.json }).toEqual({ status: 200, json: sold });
    const soldTag = change.headers.get("ETag") as string;
    expect(soldTag).not.toBe(createdTag);
    const bookmark = change.headers.get("x-d1-bookmark") as string;
    expect(bookmark).toBeTruthy();

    // With the change's bookmark, every read shows it at once: never what was cached before.
    const soldNow = { status: 200, json: sold, etag: soldTag };
    const readNow = async () => {
      const now = await getPet(pet.id, bookmark);
      return { status: now.status, json: now.json, etag: now.headers.get("ETag") };
    };
    expect(await readNow()).toEqual(soldNow);
    expect(await listed("available", bookmark), "the page it left").not.toContain(pet.id);
    expect(await listed("sold", bookmark), "the page it joined").toContain(pet.id);

    // The tag read before the change is stale: 412, and nothing changes.
    const stale = await patch(pet.id, { name: "stale" }, createdTag);
    expect(stale.status).toBe(412);
    expect(stale.json).toEqual({
      code: "precondition_failed",
      message: expect.stringContaining(`Animal ${pet.id} changed since`),
      status: 412,
    });
    expect(await readNow()).toEqual(soldNow);
    // sold is final: 409 naming both statuses, and nothing changes.
    const refused = await patch(pet.id, { status: "available" }, soldTag);
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({
      code: "invalid_transition",
      message: expect.stringMatching(/"sold" to "available"/),
      status: 409,
    });
    expect(await readNow()).toEqual(soldNow);

    const removal = await remove(pet.id, soldTag);
    expect({ status: removal.status, json: removal.json }).toEqual({
      status: 204,
      json: undefined,
    });
    const removed = removal.headers.get("x-d1-bookmark") as string;
    expect(removed).toBeTruthy();
    const gone = await getPet(pet.id, removed);
    expect(gone.status).toBe(404);
    expect(gone.json).toMatchObject({ code: "not_found", status: 404 });
    expect(await listed("sold", removed)).not.toContain(pet.id);
    const everything = await allPets(server.base, LOCAL_DEV_KEY, {}, bookmarkHeader(removed));
    expect(everything.map((p) => p.id)).not.toContain(pet.id);
    const again = await remove(pet.id);
    expect(again.status, "a second removal").toBe(404);
    expect(again.json).toMatchObject({ code: "not_found", status: 404 });
  });

  it(`without a bookmark, a change and a removal show within ${CHANGE_BOUND_MS} ms`, async () => {
    const { pet, etag } = await petAmongOthers("available", ["available", "pending"]);
    /** What a client without a bookmark reads: getPet, and which listings hold the pet. */
    const view = async () => {
      const read = await getPet(pet.id);
      return {
        status: read.status,
        pet: read.status === 200 ? read.json : undefined,
        available: (await listed("available")).includes(pet.id),
        pending: (await listed("pending")).includes(pet.id),
      };
    };
    // Read (and so cached: full pages and the pet) before the change.
    expect(await view()).toEqual({ status: 200, pet, available: true, pending: false });
    expect((await patch(pet.id, { status: "pending" }, etag)).status).toBe(200);
    const pending = {
      status: 200,
      pet: { ...pet, status: "pending" },
      available: false,
      pending: true,
    };
    await expect.poll(view, { timeout: CHANGE_BOUND_MS, interval: 100 }).toEqual(pending);

    expect((await remove(pet.id)).status).toBe(204);
    const gone = { status: 404, pet: undefined, available: false, pending: false };
    await expect.poll(view, { timeout: CHANGE_BOUND_MS, interval: 100 }).toEqual(gone);
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

it("the server responds to every request while keys commands change its database", async () => {
  // Four clients read pages (from D1: each status and limit once per client) and create
  // pets without pause while a person creates, lists, rotates and revokes keys.
  const statuses: number[] = [];
  let running = true;
  const client = async (n: number) => {
    for (let i = 0; running; i++) {
      const response =
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
      statuses.push(response.status);
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
  expect(statuses.length, "responses while the keys commands ran").toBeGreaterThan(20);
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
