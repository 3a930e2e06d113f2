// Issue 15, "Trips at the floor": per request, the trips its answer waits for, to the D1
// primary, to a read replica and to the location's Cache API, counted by the one
// instrumentation (test/support/instrumentation.ts) around the real app, the real local
// D1 and the real Cache API. Work handed to waitUntil (last-use writes, cache puts) does
// not count. One test per row of the table; a change that adds a trip fails here.
import { beforeAll, describe, expect, it } from "vitest";
import { createKey, createPetVia } from "./helpers.ts";
import { type InstrumentedApp, instrumentedApp } from "./support/instrumented-app.ts";

let key: string;

beforeAll(async () => {
  ({ key } = await createKey("edge-trips"));
});

/** An isolate that has verified `key` already (its memory is warm). */
async function warmIsolate(): Promise<InstrumentedApp> {
  const app = instrumentedApp();
  const { response } = await app.exchange("/v1/pets?limit=1&status=sold", { key });
  expect(response.status).toBe(200);
  return app;
}

const ONE_PRIMARY = { primary: 1, replica: 0, cache: 0 };

describe("createPet", () => {
  it("waits for exactly one trip, to the primary", async () => {
    const app = await warmIsolate();
    const { response, counts } = await app.exchange("/v1/pets", {
      method: "POST",
      key,
      json: { name: "trip-plain", categoryId: 1 },
    });
    expect(response.status).toBe(201);
    expect(counts).toEqual(ONE_PRIMARY);
  });

  it("with a new Idempotency-Key, its replay and a 422: one primary trip each", async () => {
    const app = await warmIsolate();
    const idem = `trip-${crypto.randomUUID()}`;
    const post = (categoryId: number) =>
      app.exchange("/v1/pets", {
        method: "POST",
        key,
        headers: { "Idempotency-Key": idem },
        json: { name: "trip-keyed", categoryId },
      });

    const created = await post(1);
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get("Idempotent-Replayed")).toBeNull();
    expect(created.counts).toEqual(ONE_PRIMARY);
    // The one trip is one batch: the whole transaction.
    expect(created.trips[0]?.statements).toHaveLength(4);

    const replay = await post(1);
    expect(replay.response.status).toBe(201);
    expect(replay.response.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await replay.response.json()).toEqual(await created.response.json());
    expect(replay.counts).toEqual(ONE_PRIMARY);

    const reused = await post(2);
    expect(reused.response.status).toBe(422);
    expect(await reused.response.json()).toMatchObject({ code: "idempotency_key_reused" });
    expect(reused.counts).toEqual(ONE_PRIMARY);
  });

  it("counts what the answer waited for, not the work after it (a control)", async () => {
    // A fresh isolate's first request also writes the key's last use, after the answer:
    // the write is recorded, but it had not finished when the answer was handed back.
    const app = instrumentedApp();
    const pet = await createPetVia(key, { name: "trip-control", categoryId: 2 });
    const { response, counts } = await app.exchange(`/v1/pets/${pet.id}`, { key });
    expect(response.status).toBe(200);
    const lastUse = app.recorder.trips.filter((t) => /^UPDATE api_keys/.test(t.what));
    expect(lastUse).toHaveLength(1);
    expect(counts.primary + counts.replica + counts.cache).toBeLessThan(app.recorder.trips.length);
  });
});
