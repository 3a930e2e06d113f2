// Issue 4, "constant cost per page": a listing page reads at most `limit + 1` rows
// (D1's meta.rows_read) however deep it is, with or without a status filter, and
// every listing query is served by an index: no table scan, no temp B-tree sort.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { LIST_PETS_BY_STATUS_SQL, LIST_PETS_SQL, selectPet } from "../src/db/pets.ts";
import { encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
import type { Pet, PetStatus } from "../src/pets/schemas.ts";
import { BASE, createCheckedApp, createKey, makeRequest } from "./helpers.ts";
import { Recorder } from "./support/instrumentation.ts";
import { NO_EDGE_CACHE } from "./support/instrumented-app.ts";
import { nextLink } from "./support/requests.ts";

/** Pets seeded once for this file (storage is isolated per test file). */
const PETS = 20_000;
/** Every 100th pet is "sold": a sparse filter, where a scan would read ~100x the page. */
const statusOf = (id: number): PetStatus =>
  id % 100 === 0 ? "sold" : id % 2 === 0 ? "pending" : "available";

// ------------------------------------------------------------------- fixture
let key: string;
// What a page costs D1: the edge cache would serve repeated pages without a query.
const app = createCheckedApp({ log: () => {}, edgeCache: () => NO_EDGE_CACHE });
/** Real D1, recorded: every statement that ran, with D1's rows read. */
const recorder = new Recorder();
const appEnv: Env = { ...env, DB: recorder.d1(env.DB) };

beforeAll(async () => {
  ({ key } = await createKey("perf-pages"));
  // One statement: a recursive CTE. ids are 1..PETS (fresh table in this file's storage).
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
     INSERT INTO pets (name, category_id, status, created_at)
     SELECT 'pet-' || i, 1 + i % 7,
            CASE WHEN i % 100 = 0 THEN 'sold' WHEN i % 2 = 0 THEN 'pending' ELSE 'available' END,
            1700000000 + i
     FROM n`,
  )
    .bind(PETS)
    .run();
  const count = await env.DB.prepare("SELECT count(*) AS n, max(id) AS max FROM pets").first<{
    n: number;
    max: number;
  }>();
  expect(count).toEqual({ n: PETS, max: PETS });
}, 60_000);

/** GET through the real app; returns the page and the D1 statements it ran on `pets`. */
async function listPage(query: string) {
  recorder.reset();
  const response = await app.fetch(makeRequest(`/v1/pets${query}`, { key }), appEnv);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  const petQueries = recorder.statements().filter((e) => /\bFROM pets\b/.test(e.sql));
  return { pets: JSON.parse(text) as Pet[], next: nextLink(response), petQueries };
}

/** The ids a page must hold: the first `limit` matching ids after `afterId`. */
function expectedIds(afterId: number, limit: number, status?: PetStatus): number[] {
  const ids: number[] = [];
  for (let id = afterId + 1; id <= PETS && ids.length < limit; id++) {
    if (!status || statusOf(id) === status) ids.push(id);
  }
  return ids;
}

describe("rows read per listing page (meta.rows_read)", () => {
  // Page 1 and deep pages, unfiltered, on a common status and on a sparse one (1 pet in 100).
  it.each<{ afterId: number; limit: number; status?: PetStatus }>([
    { afterId: 0, limit: 20 },
    { afterId: 0, limit: 100 },
    { afterId: 19_000, limit: 20 },
    { afterId: 15_000, limit: 100 },
    { afterId: 0, limit: 20, status: "available" },
    { afterId: 0, limit: 20, status: "sold" },
    { afterId: 19_000, limit: 20, status: "pending" },
    { afterId: 17_000, limit: 20, status: "sold" },
    { afterId: 9_000, limit: 100, status: "sold" },
  ])(
    "after id $afterId, limit $limit, status $status: reads at most limit + 1 rows",
    async ({ afterId, limit, status }) => {
      const params = new URLSearchParams({ limit: String(limit) });
      if (status) params.set("status", status);
      if (afterId > 0)
        params.set("cursor", await encodeCursor(afterId, status, LOCAL_CURSOR_SECRET));
      await listPage(`?${params}`); // first call may verify the key; the second is steady state
      const page = await listPage(`?${params}`);

      expect(page.pets.map((p) => p.id)).toEqual(expectedIds(afterId, limit, status));
      if (status) for (const pet of page.pets) expect(pet.status).toBe(status);
      expect(page.next, "more pets follow, so a next link").not.toBeNull();

      expect(page.petQueries).toHaveLength(1);
      const [query] = page.petQueries;
      expect(query?.sql).toBe(status ? LIST_PETS_BY_STATUS_SQL : LIST_PETS_SQL);
      expect(query?.rowsRead).toBeGreaterThan(0);
      expect(query?.rowsRead).toBeLessThanOrEqual(limit + 1);
    },
  );

  it("the last page reads no more than the rows it returns plus one", async () => {
    const cursor = await encodeCursor(PETS - 5, undefined, LOCAL_CURSOR_SECRET);
    const page = await listPage(`?limit=20&cursor=${cursor}`);
    expect(page.pets.map((p) => p.id)).toEqual(expectedIds(PETS - 5, 20));
    expect(page.next).toBeNull();
    expect(page.petQueries[0]?.rowsRead).toBeLessThanOrEqual(21);
  });

  it("following rel=next links keeps every page at limit + 1 rows", async () => {
    let path: string | null = "?status=available&limit=50";
    let worst = 0;
    let seen = 0;
    for (let pages = 0; path && pages < 5; pages++) {
      const page = await listPage(path);
      seen += page.pets.length;
      worst = Math.max(worst, ...page.petQueries.map((q) => q.rowsRead ?? Infinity));
      path = page.next?.slice(`${BASE}/v1/pets`.length) ?? null;
    }
    expect(seen).toBe(250);
    expect(worst).toBeLessThanOrEqual(51);
  });

  it("the rows_read check can fail: an OFFSET page on the same data reads the rows it skips", async () => {
    const result = await env.DB.prepare(
      "SELECT id, name, category_id, status FROM pets ORDER BY id LIMIT 21 OFFSET 19000",
    ).all<{ id: number }>();
    expect(result.results[0]?.id).toBe(19_001);
    expect(result.meta.rows_read).toBeGreaterThan(19_000);
  });

  it("getPet runs one statement and finds the pet", async () => {
    recorder.reset();
    const found = await selectPet(recorder.d1(env.DB), 12_345);
    expect(found?.pet).toEqual({
      id: 12_345,
      name: "pet-12345",
      categoryId: 1 + (12_345 % 7),
      status: statusOf(12_345),
    });
    // Written by bulk SQL, with no digest of its name: the tag's stand-in for it.
    expect(found?.etag).toBe(`"0.${1 + (12_345 % 7)}.${statusOf(12_345)}"`);
    expect(recorder.statements()).toHaveLength(1);
  });
});

// -------------------------------------------------------------- query plans
async function queryPlan(sql: string, ...params: unknown[]): Promise<string[]> {
  const plan = env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...params);
  return (await plan.all<{ detail: string }>()).results.map((row) => row.detail);
}

/** What makes a listing query's cost grow with the table: a full scan, or a sort in a temp B-tree. */
const planProblems = (plan: string[]) =>
  plan.filter((step) => /^SCAN\b|USE TEMP B-TREE/.test(step));

describe("query plans of the listing queries", () => {
  it("listPets (no filter) searches the primary key, in order", async () => {
    const plan = await queryPlan(LIST_PETS_SQL, 19_000, 21);
    expect(planProblems(plan), plan.join("\n")).toEqual([]);
    expect(plan.join("\n")).toMatch(/SEARCH pets USING INTEGER PRIMARY KEY \(rowid>\?\)/);
  });

  it.each(["available", "pending", "sold"])(
    "listPets with status=%s searches the (status, id) index, in order",
    async (status) => {
      const plan = await queryPlan(LIST_PETS_BY_STATUS_SQL, 19_000, 21, status);
      expect(planProblems(plan), plan.join("\n")).toEqual([]);
      expect(plan.join("\n")).toMatch(
        /SEARCH pets USING INDEX pets_status_id \(status=\? AND id>\?\)/,
      );
    },
  );

  it("the plan check fails on a scan and on a sort (it can fail)", async () => {
    const scan = await queryPlan("SELECT id FROM pets WHERE name > ?1 ORDER BY id LIMIT 21", "a");
    expect(planProblems(scan).join("\n")).toMatch(/^SCAN pets/);
    const sort = await queryPlan("SELECT id FROM pets WHERE id > ?1 ORDER BY name LIMIT 21", 0);
    expect(planProblems(sort).join("\n")).toMatch(/USE TEMP B-TREE FOR ORDER BY/);
  });
});
