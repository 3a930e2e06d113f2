// Read-your-writes through a D1 replica that lags. Locally D1 has no replicas, so the app
// factory's store (`openPetStore`, the seam for another store) is given one: reads in a
// session see the pets as of the replica's last catch-up, over the real D1, every call
// recorded as a trip (test/support/instrumentation.ts) to the primary or a replica.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { PetStoreClient, type PetStoreClientOptions } from "../../packages/client/src/index.ts";
import { d1PetStore } from "../../src/db/d1-pet-store.ts";
import type { OpenPetStore } from "../../src/db/pet-store.ts";
import type { Pet } from "../../src/pets/schemas.ts";
import { BASE, createCheckedApp, createKey } from "../helpers.ts";
import { Recorder } from "../support/instrumentation.ts";

/**
 * One replica that lags behind the primary: a read session sees the pets it held at its
 * last catch-up (pets are only ever added: those up to the highest id it had), and
 * responses that catch-up's bookmark. A session that asks for a newer bookmark makes it
 * catch up first, as D1 serves a bookmark only from a replica that has applied it
 * (bookmarks compare as strings: a later one sorts after). Writes go to the primary.
 */
function laggingReplica(db: D1Database) {
  let position = { bookmark: "", lastId: 0 };
  const catchUp = async () => {
    const primary = db.withSession("first-primary");
    const row = await primary
      .prepare("SELECT coalesce(max(id), 0) AS lastId FROM pets")
      .first<{ lastId: number }>();
    position = { bookmark: primary.getBookmark() ?? "", lastId: row?.lastId ?? 0 };
  };
  const open: OpenPetStore = (_, { kind, after }) => {
    if (kind === "write") return d1PetStore(db.withSession("first-primary"));
    const store = d1PetStore(db.withSession(after ?? "first-unconstrained"));
    const ready = after !== undefined && after > position.bookmark ? catchUp() : undefined;
    const held = (pet: Pet) => pet.id <= position.lastId;
    return {
      ...store,
      async list(page) {
        await ready;
        const { pets, hasMore } = await store.list(page);
        return { pets: pets.filter(held), hasMore: hasMore && pets.every(held) };
      },
      async get(id) {
        await ready;
        const pet = await store.get(id);
        return pet && held(pet.pet) ? pet : null;
      },
      bookmark: () => position.bookmark,
    };
  };
  return { open, catchUp };
}

const recorder = new Recorder();
const replica = laggingReplica(recorder.d1(env.DB));
const app = createCheckedApp({ openPetStore: replica.open });
let key: string;

beforeAll(async () => {
  ({ key } = await createKey("read-your-writes"));
  await replica.catchUp();
  vi.spyOn(console, "warn").mockImplementation(() => {}); // getPet's deprecation notice
});

/** A client of the app on the lagging replica; what it sent. */
function client(options: Partial<PetStoreClientOptions> = {}) {
  const sent: Request[] = [];
  const api = new PetStoreClient({
    baseUrl: `${BASE}/v1`,
    apiKey: key,
    fetch: (request) => {
      sent.push(request.clone());
      return app.fetch(request);
    },
    ...options,
  });
  return { api, sent };
}

const pending = (pets: Pet[]) => pets.map((pet) => pet.id);

describe("a create's bookmark", () => {
  it("without it, the replica responds as it was: the new pet is not there yet", async () => {
    const { api } = client();
    const { pet, bookmark } = await api.createPet({
      name: "Lagged",
      categoryId: 1,
      status: "pending",
    });
    expect(bookmark).toMatch(/^[0-9a-f-]+$/);
    expect(api.bookmark).toBe(bookmark);

    const page = await api.listPets({ status: "pending", limit: 100 });
    expect(pending(page.pets)).not.toContain(pet.id);
    // The replica's bookmark is older than the create's: the client keeps the newer one.
    expect(page.bookmark && bookmark && page.bookmark < bookmark).toBe(true);
    expect(api.bookmark).toBe(bookmark);
    await expect(api.getPet(pet.id)).rejects.toMatchObject({ code: "not_found", status: 404 });
  });

  it("consistent: every read carries the newest bookmark; a replica reads the write", async () => {
    const { api, sent } = client({ consistent: true });
    const created = await api.createPet({ name: "Fresh", categoryId: 2, status: "pending" });
    sent.length = 0;
    recorder.reset();
    const page = await api.listPets({ status: "pending", limit: 100 });
    expect(pending(page.pets)).toContain(created.pet.id);
    const read = recorder.trips.find((trip) => /FROM pets WHERE/.test(trip.what));
    expect(read?.place).toBe("replica");
    expect((await api.getPet(created.pet.id)).pet).toEqual(created.pet);
    // The first read carries the create's bookmark; the next, the newest responded since.
    const carried = sent.map((request) => request.headers.get("x-d1-bookmark") ?? "");
    expect(carried).toEqual([created.bookmark, page.bookmark]);
    expect(carried[1] && created.bookmark && carried[1] >= created.bookmark).toBe(true);
    // createPet takes no bookmark: the client sends it with reads only.
    await api.createPet({ name: "Fresher", categoryId: 2 });
    expect(sent.at(-1)?.headers.get("x-d1-bookmark")).toBeNull();
  });

  it("passed to a read as `bookmark`, from another client: the read sees the write", async () => {
    const writer = client().api;
    const reader = client().api;
    const created = await writer.createPet({
      name: "Handed over",
      categoryId: 3,
      status: "pending",
    });
    const stale = await reader.listPets({ status: "pending", limit: 100 });
    expect(pending(stale.pets)).not.toContain(created.pet.id);
    const fresh = await reader.listPets(
      { status: "pending", limit: 100 },
      { bookmark: created.bookmark },
    );
    expect(pending(fresh.pets)).toContain(created.pet.id);
  });
});
