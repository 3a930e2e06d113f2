// GET /v1/pets: validation of limit/status/cursor, ascending order, keyset pages.
import { beforeAll, describe, expect, it } from "vitest";
import type { Pet } from "../src/pets/schemas.ts";
import { BASE, call, createKey, createPetVia, expectError } from "./helpers.ts";

let key: string;
const created: Pet[] = [];
const STATUSES = ["available", "pending", "sold"] as const;

beforeAll(async () => {
  ({ key } = await createKey());
  // 47 pets in a known pattern; storage is per file, so these are the only pets here.
  for (let i = 0; i < 47; i++) {
    created.push(
      (await createPetVia(key, {
        name: `pet-${i}`,
        categoryId: (i % 5) + 1,
        status: STATUSES[i % 3],
      })) as Pet,
    );
  }
});

function nextLink(response: Response): string | null {
  const link = response.headers.get("Link");
  const match = link?.match(/<([^>]+)>;\s*rel="next"/);
  return match?.[1] ?? null;
}

async function walk(firstPath: string): Promise<{ pets: Pet[]; pages: number; urls: string[] }> {
  const pets: Pet[] = [];
  const urls: string[] = [];
  let path: string | null = firstPath;
  let pages = 0;
  while (path) {
    const response = await call(path, { key });
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    pets.push(...((await response.json()) as Pet[]));
    pages++;
    const next = nextLink(response);
    if (next) {
      urls.push(next);
      expect(next.startsWith(`${BASE}/v1/pets?`)).toBe(true);
    }
    path = next ? next.slice(BASE.length) : null;
    expect(pages).toBeLessThan(100);
  }
  return { pets, pages, urls };
}

describe("listing", () => {
  it("returns a bare array in ascending id order, 20 by default, pets exactly as created", async () => {
    const response = await call("/v1/pets", { key });
    expect(response.status).toBe(200);
    const pets = (await response.json()) as Pet[];
    expect(pets).toEqual(created.slice(0, 20));
    expect(nextLink(response)).not.toBeNull();
  });

  it("walks every page without a filter: no gaps, no repeats, no Link on the last page", async () => {
    const { pets, pages, urls } = await walk("/v1/pets?limit=10");
    expect(pets).toEqual(created);
    expect(pages).toBe(5);
    for (const url of urls) expect(new URL(url).searchParams.get("limit")).toBe("10");
  });

  it.each(STATUSES)(
    "walks every page with status=%s, keeping the filter in each Link",
    async (status) => {
      const { pets, urls } = await walk(`/v1/pets?limit=4&status=${status}`);
      expect(pets).toEqual(created.filter((p) => p.status === status));
      expect(urls.length).toBeGreaterThan(0);
      for (const url of urls) {
        const params = new URL(url).searchParams;
        expect(params.get("status")).toBe(status);
        expect(params.get("limit")).toBe("4");
        expect(params.get("cursor")).toMatch(/^[A-Za-z0-9_-]+$/);
      }
    },
  );

  it("has no next link when the page holds everything", async () => {
    const response = await call("/v1/pets?limit=100", { key });
    expect(await response.json()).toEqual(created);
    expect(response.headers.get("Link")).toBeNull();
  });

  it("lets limit change from page to page", async () => {
    const first = await call("/v1/pets?limit=3", { key });
    const next = new URL(nextLink(first) ?? "");
    next.searchParams.set("limit", "7");
    const second = await call(`${next.pathname}${next.search}`, { key });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(created.slice(3, 10));
  });

  it("ignores unknown query parameters", async () => {
    const response = await call("/v1/pets?limit=2&sort=desc&foo=bar", { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(created.slice(0, 2));
  });
});

describe("limit validation", () => {
  it.each(["0", "101", "-1", "1.5", "01", "abc", "", "1e2", " 5", "20abc", "99999999999999999999"])(
    "refuses limit=%j with 400 naming the parameter, one problem, one message",
    async (value) => {
      const body = await expectError(
        await call(`/v1/pets?limit=${encodeURIComponent(value)}`, { key }),
        400,
        "invalid_parameter",
        /"limit"/,
      );
      expect(body.details).toEqual([{ field: "limit", message: expect.any(String) }]);
      expect(body.message).toBe(`Query parameter "limit" ${body.details?.[0]?.message}.`);
    },
  );

  it("accepts the bounds 1 and 100", async () => {
    for (const [limit, count] of [
      ["1", 1],
      ["100", 47],
    ] as const) {
      const response = await call(`/v1/pets?limit=${limit}`, { key });
      expect(response.status).toBe(200);
      expect(((await response.json()) as Pet[]).length).toBe(count);
    }
  });

  it.each(["limit=1&limit=2", "status=sold&status=sold", "cursor=a&cursor=b"])(
    "refuses a repeated parameter (%s)",
    async (query) => {
      await expectError(
        await call(`/v1/pets?${query}`, { key }),
        400,
        "invalid_parameter",
        /at most once/,
      );
    },
  );
});

describe("status validation", () => {
  it.each(["AVAILABLE", "Sold", "", "adopted", "available "])(
    "refuses status=%j",
    async (value) => {
      await expectError(
        await call(`/v1/pets?status=${encodeURIComponent(value)}`, { key }),
        400,
        "invalid_parameter",
        /"status" must be one of available, pending, sold/,
      );
    },
  );
});

describe("cursors", () => {
  async function cursorFor(query: string): Promise<string> {
    const response = await call(`/v1/pets?${query}`, { key });
    const cursor = new URL(nextLink(response) ?? "").searchParams.get("cursor");
    expect(cursor).toBeTruthy();
    return cursor as string;
  }

  it("refuses a cursor the service did not issue", async () => {
    for (const forged of ["abc", "MTAw", btoa("c1.10..AAAAAAAAAAAAAAAA"), "%00", "a".repeat(500)]) {
      await expectError(
        await call(`/v1/pets?cursor=${encodeURIComponent(forged)}`, { key }),
        400,
        "invalid_cursor",
        /"cursor"/,
      );
    }
  });

  it("refuses an altered cursor", async () => {
    const cursor = await cursorFor("limit=2");
    const decoded = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
    const altered = btoa(decoded.replace(/^c1\.\d+/, "c1.40")).replaceAll("=", "");
    await expectError(await call(`/v1/pets?cursor=${altered}`, { key }), 400, "invalid_cursor");
    const flipped = cursor.slice(0, -2) + (cursor.endsWith("A") ? "BB" : "AA");
    await expectError(await call(`/v1/pets?cursor=${flipped}`, { key }), 400, "invalid_cursor");
  });

  it("refuses a cursor replayed with another status, or without its status", async () => {
    const sold = await cursorFor("limit=2&status=sold");
    await expectError(
      await call(`/v1/pets?cursor=${sold}&status=pending`, { key }),
      400,
      "invalid_cursor",
      /status=sold/,
    );
    await expectError(await call(`/v1/pets?cursor=${sold}`, { key }), 400, "invalid_cursor");
    const unfiltered = await cursorFor("limit=2");
    await expectError(
      await call(`/v1/pets?cursor=${unfiltered}&status=sold`, { key }),
      400,
      "invalid_cursor",
      /no status filter/,
    );
  });

  it("refuses an empty cursor", async () => {
    await expectError(await call("/v1/pets?cursor=", { key }), 400, "invalid_cursor");
  });
});
