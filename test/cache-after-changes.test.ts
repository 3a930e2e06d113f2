// What the cache serves after a change (docs/design.md, "The cache and changing pets"):
// locations that keep their own caches over one D1; a change at one, reads at another.
// No location serves a response the change invalidated once CACHE_MAX_AGE_MS have passed
// since it was read; the changer's bookmark is never served from older. The rule is code:
// every operation of the table that changes pets says so, and its response's bookmark
// reaches past every cached response, in whatever location (checked for the whole table).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { CACHE_MAX_AGE_MS } from "../src/config.ts";
import { listPets, OPERATIONS, type Operation } from "../src/operations/index.ts";
import type { Pet } from "../src/pets/schemas.ts";
import { type CallOptions, createKey, exampleRequest, insertPet } from "./helpers.ts";
import { instrumentedApp, NO_EDGE_CACHE } from "./support/instrumented-app.ts";

let key: string;
beforeAll(async () => {
  ({ key } = await createKey("cache-after-changes"));
});

/** A location: an isolate with a cache of its own, on a clock the test moves. */
async function location(clock: () => number, operations?: readonly Operation[]) {
  const cache = await caches.open(`location-${crypto.randomUUID()}`);
  const app = instrumentedApp({ cache, clock, ...(operations ? { operations } : {}) });
  return {
    app,
    /** A read: its status, body and whether it came from the cache (no D1 row read). */
    async read(path: string, options: CallOptions = {}) {
      const { response, counts } = await app.exchange(path, { key, ...options });
      const body = response.status === 200 ? await response.json() : undefined;
      return { status: response.status, body, cached: counts.replica + counts.primary === 0 };
    },
  };
}

/** What D1 says now, through an app with no cache at all. */
async function truth(path: string) {
  const { response } = await instrumentedApp({ cache: NO_EDGE_CACHE }).exchange(path, { key });
  return {
    status: response.status,
    body: response.status === 200 ? await response.json() : undefined,
  };
}

/** `before` pets, then the one to change, then `after`: each [status, how many]. */
async function around(
  pet: Partial<Pet>,
  before: Array<[Pet["status"], number]>,
  after: Array<[Pet["status"], number]>,
) {
  const made = async (groups: Array<[Pet["status"], number]>) => {
    for (const [status, n] of groups) {
      for (let i = 0; i < n; i++) await insertPet({ status, name: `around-${status}-${i}` });
    }
  };
  await made(before);
  const changing = await insertPet(pet);
  await made(after);
  return changing;
}

describe("a change at one location, reads at another", () => {
  it(`a pet sold: getPet, the page it leaves and the page it joins are right at B within ${CACHE_MAX_AGE_MS} ms, and at once with the change's bookmark`, async () => {
    let now = Date.now();
    const clock = () => now;
    const [a, b] = [await location(clock), await location(clock)];
    // Pages from the pet's neighbours on: full (a next page follows), so cached.
    const changing = await around(
      { status: "available" },
      [["available", 2]],
      [
        ["sold", 3],
        ["available", 3],
      ],
    );
    const paths = [
      `/v1/pets/${changing.id}`,
      `/v1/pets?limit=2&status=available&cursor=${await cursor(changing.id - 2, "available")}`,
      `/v1/pets?limit=2&status=sold&cursor=${await cursor(changing.id - 1, "sold")}`,
    ];
    const before = await Promise.all(paths.map((p) => b.read(p)));
    for (const path of paths) expect((await b.read(path)).cached, path).toBe(true);
    expect(before.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(before.map((r) => r.status)).toEqual([200, 200, 200]);

    const change = await a.app.exchange(paths[0] as string, {
      method: "PATCH",
      key,
      json: { status: "sold" },
    });
    expect(change.response.status).toBe(200);
    const bookmark = change.response.headers.get("x-d1-bookmark") as string;
    const right = await Promise.all(paths.map(truth));
    for (const [i, path] of paths.entries()) {
      expect(right[i], path).not.toEqual({ status: before[i]?.status, body: before[i]?.body });
    }

    // With the change's bookmark, B reads the change at once: never its older cached copy.
    for (const [i, path] of paths.entries()) {
      const read = await b.read(path, { headers: { "x-d1-bookmark": bookmark } });
      expect({ status: read.status, body: read.body }, path).toEqual(right[i]);
      expect(read.cached).toBe(false);
    }
    // Without it, B may serve what it cached until CACHE_MAX_AGE_MS after its read, not later.
    const other = await location(clock);
    for (const path of paths) await other.read(path);
    now += CACHE_MAX_AGE_MS - 1;
    expect((await other.read(paths[0] as string)).cached).toBe(true);
    now += 1;
    for (const [i, path] of paths.entries()) {
      const read = await other.read(path);
      expect({ status: read.status, body: read.body }, path).toEqual(right[i]);
    }
  });

  it("a pet removed: getPet is 404 and the pages drop it, at once with the bookmark, within the bound without", async () => {
    let now = Date.now();
    const clock = () => now;
    const [a, b] = [await location(clock), await location(clock)];
    const changing = await around({ status: "pending" }, [["pending", 1]], [["pending", 3]]);
    const paths = [
      `/v1/pets/${changing.id}`,
      `/v1/pets?limit=2&status=pending&cursor=${await cursor(changing.id - 1, "pending")}`,
    ];
    for (const path of paths) await b.read(path);
    const removal = await a.app.exchange(paths[0] as string, { method: "DELETE", key });
    expect(removal.response.status).toBe(204);
    const bookmark = removal.response.headers.get("x-d1-bookmark") as string;
    const gone = await b.read(paths[0] as string, { headers: { "x-d1-bookmark": bookmark } });
    expect(gone.status).toBe(404);
    const page = await b.read(paths[1] as string, { headers: { "x-d1-bookmark": bookmark } });
    expect((page.body as Pet[]).map((p) => p.id)).not.toContain(changing.id);
    now += CACHE_MAX_AGE_MS;
    expect((await b.read(paths[0] as string)).status).toBe(404);
  });

  it("a table of the test's own (listPets caching its last pages too): the bound holds as well", async () => {
    let now = Date.now();
    const clock = () => now;
    const eager = { ...listPets, conditional: { cacheable: () => true } };
    const operations = OPERATIONS.map((op) => (op === listPets ? eager : op));
    const b = await location(clock, operations);
    const last = "/v1/pets?status=pending&limit=100";
    const seen = (await b.read(last)).body as Pet[];
    expect((await b.read(last)).cached).toBe(true);
    const added = await insertPet({ status: "pending", name: "late" });
    expect((await b.read(last)).body).toEqual(seen);
    now += CACHE_MAX_AGE_MS;
    expect((await b.read(last)).body).toEqual([...seen, added]);
  });
});

/** The cursor listPets would issue after `id` for `status`. */
async function cursor(id: number, status: Pet["status"]) {
  const { encodeCursor, LOCAL_CURSOR_SECRET } = await import("../src/pets/cursor.ts");
  return encodeCursor(id, status, LOCAL_CURSOR_SECRET);
}

/**
 * The rule, for a table: each operation's example request, on a pet every cached read holds
 * (getPet, a full page) in another location. An operation that changed the pets table must
 * say `pets: "change"`, and its bookmark must reach past every cached response there.
 */
async function cacheRuleProblems(operations: readonly Operation[]): Promise<string[]> {
  const problems: string[] = [];
  const table = () =>
    env.DB.prepare("SELECT * FROM pets ORDER BY id")
      .all()
      .then((r) => r.results);
  for (const op of operations.filter((o) => o.scope !== undefined)) {
    const clock = () => Date.now();
    const [a, b] = [await location(clock, operations), await location(clock, operations)];
    const request = await exampleRequest(op);
    const petId = request.path.match(/^\/v1\/pets\/(\d+)/)?.[1];
    const reads = [
      ...(petId ? [`/v1/pets/${petId}`] : []),
      `/v1/pets?limit=1&cursor=${await cursor(Number(petId ?? 1) - 1, undefined as never)}`,
    ];
    for (const path of reads) await b.read(path);
    const was = await table();
    const { response } = await a.app.exchange(request.path, { ...request, key });
    const changed = JSON.stringify(await table()) !== JSON.stringify(was);
    if (changed && op.pets !== "change") {
      problems.push(`${op.operationId} changed pets but does not say pets: "change"`);
    }
    if (op.pets !== "change") continue;
    const bookmark = response.headers.get("x-d1-bookmark");
    if (!bookmark) problems.push(`${op.operationId} responded no bookmark`);
    for (const path of reads) {
      const read = await b.read(path, { headers: bookmark ? { "x-d1-bookmark": bookmark } : {} });
      const right = await truth(path);
      if (JSON.stringify({ status: read.status, body: read.body }) !== JSON.stringify(right)) {
        problems.push(`${op.operationId}: ${path} was served as before the change`);
      }
    }
  }
  return problems;
}

describe("the rule, for every operation of the table", () => {
  it("holds: each operation that changes pets says so, and its bookmark passes every cached response", async () => {
    expect(await cacheRuleProblems(OPERATIONS)).toEqual([]);
    // Not a vacuous pass: the table has changes, and they were run.
    expect(OPERATIONS.filter((op) => op.pets === "change").length).toBeGreaterThanOrEqual(3);
  });

  it("fails for a table whose change says it only reads pets", async () => {
    const quiet = OPERATIONS.map((op) =>
      op.operationId === "updatePet" ? { ...op, pets: "read" as const } : op,
    );
    expect(await cacheRuleProblems(quiet)).toContain(
      'updatePet changed pets but does not say pets: "change"',
    );
  });
});
