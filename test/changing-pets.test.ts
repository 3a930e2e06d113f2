// Changing animals (docs/api.md, "Changing animals"): updatePet's JSON Merge Patch, If-Match
// and 412, the status transitions and 409, deletePet's 204 and 404, no lost update under
// concurrent changes, a keyed create's replay after its pet changed or went, and listings
// that follow. Real keys, the real local D1, through the worker's fetch (`call`).
import { beforeAll, describe, expect, it } from "vitest";
import { PET_TRANSITIONS, type Pet, type PetStatus } from "../src/pets/schemas.ts";
import {
  type CallOptions,
  call,
  createKey,
  createPetVia,
  expectDeprecationHeaders,
  expectError,
} from "./helpers.ts";

let key: string;
beforeAll(async () => {
  ({ key } = await createKey("changing-pets"));
});

const STATUSES: PetStatus[] = ["available", "pending", "sold"];
const MERGE_PATCH = "application/merge-patch+json";

/** A pet of this test's own. */
const newPet = (pet: Partial<Pet> = {}) =>
  createPetVia(key, { name: `change-${crypto.randomUUID()}`, categoryId: 4, ...pet });

async function patch(id: number, body: unknown, options: CallOptions = {}) {
  return changed(
    await call(`/v1/pets/${id}`, {
      method: "PATCH",
      key,
      body: JSON.stringify(body),
      ...options,
      headers: { "Content-Type": MERGE_PATCH, ...options.headers },
    }),
  );
}

const remove = async (id: number, headers: Record<string, string> = {}) =>
  changed(await call(`/v1/pets/${id}`, { method: "DELETE", key, headers }));

/**
 * getPet's response after the last change this file made: its bookmark sent back, so never
 * a response cached before that change (as a changing client reads its changes).
 */
let seen: string | undefined;
async function read(id: number) {
  const headers: Record<string, string> = seen ? { "x-d1-bookmark": seen } : {};
  const response = await call(`/v1/pets/${id}`, { key, headers });
  return { response, etag: response.headers.get("ETag") as string };
}

/** Keeps the bookmark of a change's response, for the reads after it. */
function changed(response: Response): Response {
  const bookmark = response.headers.get("x-d1-bookmark");
  if (bookmark && (!seen || bookmark > seen)) seen = bookmark;
  return response;
}

/** Asserts a 200 of updatePet: the whole pet, its new ETag (getPet's), and no cache keeping it. */
async function expectChanged(response: Response, pet: Pet): Promise<string> {
  expect(response.status, await response.clone().text()).toBe(200);
  expect(await response.json()).toEqual(pet);
  const etag = response.headers.get("ETag") as string;
  expect(etag).toMatch(/^"[^"]+"$/);
  expect(response.headers.get("x-d1-bookmark")).toBeTruthy();
  expect(response.headers.get("Deprecation")).toBeNull();
  const now = await read(pet.id);
  expect(await now.response.json()).toEqual(pet);
  expect(now.etag).toBe(etag);
  return etag;
}

describe("updatePet: a JSON Merge Patch", () => {
  it("changes the fields it names and keeps the others, as merge-patch+json or json", async () => {
    const pet = await newPet({ status: "available" });
    await expectChanged(await patch(pet.id, { name: "Rex II" }), { ...pet, name: "Rex II" });
    await expectChanged(await patch(pet.id, { categoryId: 9007199254740991 }), {
      ...pet,
      name: "Rex II",
      categoryId: 9007199254740991,
    });
    const asJson = changed(
      await call(`/v1/pets/${pet.id}`, {
        method: "PATCH",
        key,
        json: { status: "pending", name: "Rex" },
      }),
    );
    await expectChanged(asJson, {
      ...pet,
      name: "Rex",
      categoryId: 9007199254740991,
      status: "pending",
    });
  });

  it("{} changes nothing and returns the pet and its unchanged tag", async () => {
    const pet = await newPet();
    const { etag } = await read(pet.id);
    expect(await expectChanged(await patch(pet.id, {}), pet)).toBe(etag);
  });

  it.each([
    ["null for a field", { name: null }, /name/],
    ["null for the status", { status: null }, /status/],
    ["null for categoryId", { categoryId: null }, /categoryId/],
    ["the id", { id: 5 }, /id/],
    ["a field it does not have", { colour: "red" }, /colour/],
    ["a name of 101 characters", { name: "x".repeat(101) }, /name/],
    ["a categoryId above 2^53 - 1", { categoryId: 9007199254740992 }, /categoryId/],
    ["a fractional categoryId", { categoryId: 1.5 }, /categoryId/],
    ["an unknown status", { status: "adopted" }, /status/],
    ["an array", [{ name: "x" }], /object/],
    ["a string", "name", /object/],
  ])("refuses %s: 400 naming it, and changes nothing", async (_what, body, field) => {
    const pet = await newPet();
    const { etag } = await read(pet.id);
    const refused = await patch(pet.id, body);
    const error = await expectError(refused, 400, "validation_failed", field);
    expect(JSON.stringify(error.details ?? error.message)).toMatch(field);
    expect((await read(pet.id)).etag).toBe(etag);
  });

  it.each([
    ["text/plain", "text/plain"],
    ["a charset other than UTF-8", `${MERGE_PATCH}; charset=utf-16`],
    ["a JSON Patch (RFC 6902)", "application/json-patch+json"],
  ])("refuses %s with 415, naming the media types it takes", async (_what, type) => {
    const pet = await newPet();
    const refused = await patch(pet.id, { name: "x" }, { headers: { "Content-Type": type } });
    await expectError(refused, 415, "unsupported_media_type", /merge-patch\+json/);
  });

  it("responds with 404 for a pet that does not exist, with or without If-Match", async () => {
    const conditions: Array<Record<string, string>> = [
      {},
      { "If-Match": '"x"' },
      { "If-Match": "*" },
    ];
    for (const headers of conditions) {
      const missing = await patch(999_999_999, { name: "Ghost" }, { headers });
      await expectError(missing, 404, "not_found", /999999999/);
    }
  });
});

describe("If-Match: a change only if the pet is as the client saw it", () => {
  it("the current tag, * or a list holding it: the change applies", async () => {
    const pet = await newPet();
    const { etag } = await read(pet.id);
    let changed = { ...pet, name: "One" };
    const next = await expectChanged(
      await patch(pet.id, { name: "One" }, { headers: { "If-Match": etag } }),
      changed,
    );
    changed = { ...changed, name: "Two" };
    await expectChanged(
      await patch(pet.id, { name: "Two" }, { headers: { "If-Match": "*" } }),
      changed,
    );
    const { etag: now } = await read(pet.id);
    expect(now).not.toBe(next);
    changed = { ...changed, name: "Three" };
    const list = `"stale", ${now}, "other"`;
    await expectChanged(
      await patch(pet.id, { name: "Three" }, { headers: { "If-Match": list } }),
      changed,
    );
  });

  it("a tag the pet no longer has, or its weak form: 412, and nothing changes", async () => {
    const pet = await newPet();
    const { etag: before } = await read(pet.id);
    await expectChanged(await patch(pet.id, { name: "Moved on" }), { ...pet, name: "Moved on" });
    const { etag: after } = await read(pet.id);
    for (const tag of [before, `W/${after}`]) {
      const refused = await patch(pet.id, { status: "sold" }, { headers: { "If-Match": tag } });
      await expectError(refused, 412, "precondition_failed", new RegExp(`${pet.id}.*If-Match`));
      const gone = await remove(pet.id, { "If-Match": tag });
      await expectError(gone, 412, "precondition_failed");
    }
    expect((await read(pet.id)).etag).toBe(after);
  });

  it("equal pets, equal tags: a name changed and changed back has its first tag again", async () => {
    const pet = await newPet();
    const { etag } = await read(pet.id);
    await patch(pet.id, { name: "Elsewhere" });
    const back = await patch(pet.id, { name: pet.name });
    expect(back.headers.get("ETag")).toBe(etag);
    expect((await read(pet.id)).etag).toBe(etag);
  });

  it.each([
    ["no entity tag", "abc"],
    ["an unquoted member", '"a", b'],
    ["more than 1,024 characters", `"${"a".repeat(1024)}"`],
  ])("a field that is %s: 400 naming If-Match", async (_what, value) => {
    const pet = await newPet();
    const refused = await patch(pet.id, { name: "x" }, { headers: { "If-Match": value } });
    const error = await expectError(refused, 400, "invalid_parameter", /If-Match/);
    expect(error.details).toEqual([{ field: "If-Match", message: expect.any(String) }]);
  });

  it("concurrent changes of one version: exactly one wins, every other is 412, nothing lost", async () => {
    const pet = await newPet();
    const { etag } = await read(pet.id);
    const names = Array.from({ length: 8 }, (_, i) => `racer-${i}`);
    const responses = await Promise.all(
      names.map((name) => patch(pet.id, { name }, { headers: { "If-Match": etag } })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
    const winner = responses.find((r) => r.status === 200) as Response;
    const won = (await winner.json()) as Pet;
    expect(names).toContain(won.name);
    expect(await (await read(pet.id)).response.json()).toEqual(won);
  });

  it("concurrent changes without If-Match each apply in turn: every field named by one survives", async () => {
    const pet = await newPet({ status: "available" });
    const [named, categorised] = await Promise.all([
      patch(pet.id, { name: "Both" }),
      patch(pet.id, { categoryId: 77 }),
    ]);
    expect([named?.status, categorised?.status]).toEqual([200, 200]);
    expect(await (await read(pet.id)).response.json()).toEqual({
      ...pet,
      name: "Both",
      categoryId: 77,
    });
  });
});

describe("status transitions: available -> pending | sold, pending -> available | sold, sold is final", () => {
  const pairs = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as const));

  it.each(pairs)("%s -> %s", async (from, to) => {
    const pet = await newPet({ status: from });
    const response = await patch(pet.id, { status: to });
    if (from === to || PET_TRANSITIONS[from].includes(to)) {
      await expectChanged(response, { ...pet, status: to });
      return;
    }
    const error = await expectError(response, 409, "invalid_transition");
    expect(error.message).toContain(`"${from}"`);
    expect(error.message).toContain(`"${to}"`);
    expect(error.details).toEqual([{ field: "status", message: expect.stringContaining(to) }]);
    expect(await (await read(pet.id)).response.json()).toEqual(pet);
  });

  it("a refused transition with a stale If-Match is 412: the precondition comes first", async () => {
    const pet = await newPet({ status: "sold" });
    const refused = await patch(
      pet.id,
      { status: "available" },
      { headers: { "If-Match": '"old"' } },
    );
    await expectError(refused, 412, "precondition_failed");
  });

  it("a listing follows: a pet sold leaves status=available and joins status=sold", async () => {
    const pet = await newPet({ status: "available" });
    // The listings' last pages (never cached), read after the change.
    const ids = async (status: PetStatus) => {
      const headers: Record<string, string> = seen ? { "x-d1-bookmark": seen } : {};
      const page = await call(`/v1/pets?status=${status}&limit=100`, { key, headers });
      return ((await page.json()) as Pet[]).map((p) => p.id);
    };
    expect(await ids("available")).toContain(pet.id);
    await patch(pet.id, { status: "sold" });
    expect(await ids("available")).not.toContain(pet.id);
    expect(await ids("sold")).toContain(pet.id);
  });
});

describe("deletePet", () => {
  it("204 without a body; then getPet, listings and a second removal say it is gone; its id is never reused", async () => {
    const pet = await newPet({ status: "pending" });
    const { etag } = await read(pet.id);
    const removed = await remove(pet.id, { "If-Match": etag });
    expect(removed.status).toBe(204);
    expect(await removed.text()).toBe("");
    expect(removed.headers.get("Content-Type")).toBeNull();
    expect(removed.headers.get("x-d1-bookmark")).toBeTruthy();

    const gone = (await read(pet.id)).response;
    await expectError(gone, 404, "not_found");
    expectDeprecationHeaders(gone);
    const listed = await call("/v1/pets?status=pending&limit=100", {
      key,
      headers: { "x-d1-bookmark": removed.headers.get("x-d1-bookmark") as string },
    });
    expect(((await listed.json()) as Pet[]).map((p) => p.id)).not.toContain(pet.id);
    await expectError(await remove(pet.id), 404, "not_found", new RegExp(String(pet.id)));
    await expectError(await patch(pet.id, { name: "Back" }), 404, "not_found");

    const next = await newPet();
    expect(next.id).toBeGreaterThan(pet.id);
  });
});

describe("a keyed create replayed after its pet changed or went", () => {
  it.each([
    ["changed", (id: number) => patch(id, { name: "Renamed", status: "sold" })],
    ["removed", (id: number) => remove(id)],
  ])(
    "%s: 201 and the pet as created, Idempotent-Replayed; a new body is still 422",
    async (_what, change) => {
      const headers = { "Idempotency-Key": `changing-${crypto.randomUUID()}` };
      const body = { name: "Replayed", categoryId: 6 };
      const first = await call("/v1/pets", { method: "POST", key, headers, json: body });
      expect(first.status).toBe(201);
      const created = (await first.json()) as Pet;
      expect((await change(created.id)).status).toBeLessThan(300);

      const replay = await call("/v1/pets", { method: "POST", key, headers, json: body });
      expect(replay.status).toBe(201);
      expect(await replay.json()).toEqual(created);
      expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
      expect(replay.headers.get("Location")).toBe(`/v1/pets/${created.id}`);
      expect(replay.headers.get("ETag")).toBe(first.headers.get("ETag"));
      const other = await call("/v1/pets", {
        method: "POST",
        key,
        headers,
        json: { ...body, categoryId: 7 },
      });
      await expectError(other, 422, "idempotency_key_reused");
    },
  );
});
