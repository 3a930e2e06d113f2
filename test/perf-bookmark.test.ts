// The D1 Sessions API. listPets and getPet accept the
// `x-d1-bookmark` request header, every response that reached the database returns
// one, and a malformed bookmark is 400 invalid_parameter before any query. (That
// browsers may send and read the header is in routing.test.ts, with the other CORS headers.)
import { beforeAll, describe, expect, it } from "vitest";
import type { Pet } from "../src/pets/schemas.ts";
import { call, createPetVia, expectError, methodNotOn } from "./helpers.ts";
import { type RefusalChecker, refusalChecker } from "./support/requests.ts";

const HEADER = "x-d1-bookmark";
/** What the service accepts (src/http/d1-session.ts); D1 issues bookmarks of this shape. */
const BOOKMARK = /^[A-Za-z0-9-]{1,256}$/;

let key: string;
let checker: RefusalChecker;
let pet: Pet;

beforeAll(async () => {
  checker = await refusalChecker("bookmarks");
  key = checker.key;
  pet = (await createPetVia(key, { name: "Bookmarked", categoryId: 3, status: "sold" })) as Pet;
});

/** The bookmark of a response, asserting that it has one and that it is well-formed. */
function bookmarkOf(response: Response): string {
  const bookmark = response.headers.get(HEADER);
  expect(bookmark, `${response.status} response without ${HEADER}`).not.toBeNull();
  expect(bookmark).toMatch(BOOKMARK);
  return bookmark as string;
}

describe("listPets and getPet return a bookmark", () => {
  it("without a bookmark, and with one they issued on either operation: a fresh one each time", async () => {
    let sent: Record<string, string> = {};
    for (let i = 0; i < 4; i++) {
      const list = await call("/v1/pets", { key, headers: sent });
      sent = { [HEADER]: bookmarkOf(list) };
      expect(await list.json()).toContainEqual(pet);
      const get = await call(`/v1/pets/${pet.id}`, { key, headers: i === 0 ? {} : sent });
      sent = { [HEADER]: bookmarkOf(get) };
      expect(await get.json()).toEqual(pet);
    }
  });

  it("read-your-writes: createPet's bookmark, sent to getPet and listPets, sees the new pet", async () => {
    const json = { name: "Fresh", categoryId: 9, status: "pending" };
    const created = await call("/v1/pets", { method: "POST", key, json });
    expect(created.status, await created.clone().text()).toBe(201);
    const bookmark = bookmarkOf(created);
    const fresh = (await created.json()) as Pet;

    const get = await call(`/v1/pets/${fresh.id}`, { key, headers: { [HEADER]: bookmark } });
    bookmarkOf(get);
    expect(await get.json()).toEqual(fresh);

    const list = await call("/v1/pets?status=pending", { key, headers: { [HEADER]: bookmark } });
    bookmarkOf(list);
    expect(((await list.json()) as Pet[]).map((p) => p.id)).toContain(fresh.id);
  });

  it("getPet's 404 (the database was asked) also carries a bookmark", async () => {
    const response = await call("/v1/pets/987654321", { key });
    bookmarkOf(response);
    await expectError(response, 404, "not_found");
  });
});

describe("a malformed bookmark", () => {
  const MALFORMED = [
    ["empty", ""],
    ["a space", "0000 0001"],
    ["an underscore", "0000_0001"],
    ["257 characters", "a".repeat(257)],
    ["a header injection attempt", "abc%0d%0aSet-Cookie:x"],
    ["SQL", "'; DROP TABLE pets; --"],
  ] as const;

  it.each(
    ["/v1/pets", "/v1/pets/1"].flatMap((path) =>
      MALFORMED.map(([what, value]) => ({ path, what, value })),
    ),
  )("on $path with $what is 400 invalid_parameter, before any query", async ({ path, value }) => {
    const options = () => ({ key, headers: { [HEADER]: value } });
    const message = /^Header "x-d1-bookmark"/;
    const { body, response } = await checker.expectRefused(
      path,
      400,
      "invalid_parameter",
      message,
      options,
    );
    expect(body.details).toEqual([{ field: HEADER, message: "is not a D1 bookmark" }]);
    expect(response.headers.get(HEADER)).toBeNull();
  });

  it("is ignored where it is not a parameter: the changes, listOrders, 404 and 405", async () => {
    const headers = { [HEADER]: "not a bookmark" };
    const json = { name: "Ignores the bookmark", categoryId: 3 };
    const created = await call("/v1/pets", { method: "POST", key, headers, json });
    expect(created.status, await created.clone().text()).toBe(201);
    bookmarkOf(created);
    const { id } = (await created.json()) as { id: number };
    const changed = await call(`/v1/pets/${id}`, { method: "PATCH", key, headers, json: {} });
    expect(changed.status, await changed.clone().text()).toBe(200);
    bookmarkOf(changed);
    const removed = await call(`/v1/pets/${id}`, { method: "DELETE", key, headers });
    expect(removed.status).toBe(204);
    bookmarkOf(removed);
    await expectError(await call("/v1/store/orders", { key, headers }), 501, "not_implemented");
    await expectError(await call("/v1/cats", { key, headers }), 404, "not_found");
    await expectError(
      await call("/v1/pets/1", { method: methodNotOn("/pets/{petId}"), key, headers }),
      405,
      "method_not_allowed",
    );
  });

  it("is documented, with its pattern, exactly where it is a parameter (the reads)", async () => {
    const doc = (await (await call("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { parameters?: Array<Record<string, unknown>> }>>;
    };
    const documented: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const parameter = op.parameters?.find((p) => p.name === HEADER);
        if (!parameter) continue;
        documented.push(`${method} ${path}`);
        expect(parameter).toMatchObject({ in: "header", schema: { pattern: BOOKMARK.source } });
      }
    }
    expect(documented).toEqual([
      "get /pets",
      "head /pets",
      "get /pets/{petId}",
      "head /pets/{petId}",
    ]);
  });

  it("is checked only after the key: no key is still 401", async () => {
    const response = await call("/v1/pets", { headers: { [HEADER]: "not a bookmark" } });
    await expectError(response, 401, "unauthorized");
  });
});
