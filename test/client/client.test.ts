// The client package (packages/client) against the worker in workerd: real keys, real D1,
// every response checked against the OpenAPI document (`workerFetch`). The expectTypeOf lines
// and the expected type errors are type tests: `npm run typecheck` fails when they drift.
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type Created,
  type NotModified,
  type Page,
  type Pet,
  type PetPatch,
  type PetRead,
  PetStoreClient,
  type PetStoreClientOptions,
  PetStoreError,
  type Removed,
  type Updated,
} from "../../packages/client/src/index.ts";
import type { Scope } from "../../src/scopes.ts";
import { BASE, createKey, workerFetch } from "../helpers.ts";

/** What the client sent and what the API responded, one entry per attempt. */
type Exchange = { request: Request; response?: Response };

/** What a fault does to an attempt whose request it matches, after the worker responded. */
type Fault = (request: Request, response: Response) => Promise<Response> | Response;

/** The connection is lost after the worker responded (it did the work). */
const lost: Fault = () => {
  throw new TypeError("fetch failed: the connection was lost after the response");
};

/**
 * A client with a fresh key (`scopes`, default all), sending through the worker. `fault`
 * changes the first `times` attempts (default 1) whose request `on` matches.
 */
async function client(
  options: {
    scopes?: Scope[];
    fault?: Fault;
    on?: (request: Request) => boolean;
    times?: number;
    settings?: Partial<PetStoreClientOptions>;
  } = {},
) {
  const { key } = await createKey("client-package", { scopes: options.scopes });
  const sent: Exchange[] = [];
  let faults = options.times ?? 1;
  const api = new PetStoreClient({
    baseUrl: `${BASE}/v1`,
    apiKey: key,
    retry: { baseDelayMs: 1 },
    ...options.settings,
    fetch: async (request) => {
      const exchange: Exchange = { request: request.clone() };
      sent.push(exchange);
      exchange.response = await workerFetch(request);
      if (options.fault && faults > 0 && (options.on?.(request) ?? true)) {
        faults--;
        return options.fault(request, exchange.response);
      }
      return exchange.response;
    },
  });
  return { api, sent, key };
}

const isCreate = (request: Request) => request.method === "POST";
const isUpdate = (request: Request) => request.method === "PATCH";
const isDelete = (request: Request) => request.method === "DELETE";

/** The pets named `name`, read through `api`. */
async function named(api: PetStoreClient, name: string): Promise<Pet[]> {
  const pets: Pet[] = [];
  for await (const pet of api.pets({ limit: 100 })) if (pet.name === name) pets.push(pet);
  return pets;
}

const uniqueName = () => `client-${crypto.randomUUID()}`;

/** The rejection of `call`, which must be a PetStoreError. */
async function refusal(call: Promise<unknown>): Promise<PetStoreError> {
  const error = await call.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(PetStoreError);
  return error as PetStoreError;
}

describe("pages", () => {
  it("pets() yields every animal of the listing, page by page by Link rel=next", async () => {
    const { api, sent } = await client();
    // The only pending animals of this file (storage is per file): three pages of two.
    const created: Pet[] = [];
    for (let i = 0; i < 5; i++) {
      created.push(
        (await api.createPet({ name: uniqueName(), categoryId: 3, status: "pending" })).pet,
      );
    }
    sent.length = 0;
    const walked: Pet[] = [];
    for await (const pet of api.pets({ status: "pending", limit: 2 })) walked.push(pet);
    expect(walked).toEqual(created);
    const urls = sent.map(({ request }) => new URL(request.url));
    expect(urls.map((url) => url.searchParams.get("limit"))).toEqual(["2", "2", "2"]);
    expect(urls.map((url) => url.searchParams.has("cursor"))).toEqual([false, true, true]);

    const pages: Page[] = [];
    for await (const page of api.pages({ status: "pending", limit: 2 })) pages.push(page);
    expect(pages.map((page) => page.pets)).toEqual([
      created.slice(0, 2),
      created.slice(2, 4),
      created.slice(4),
    ]);
    expect(pages.map((page) => page.nextCursor === undefined)).toEqual([false, false, true]);
    for (const page of pages) expect(page.etag).toMatch(/^"[^"]+"$/);
    // A page's cursor resumes the walk where it ended.
    const rest: Pet[] = [];
    for await (const pet of api.pets({ status: "pending", limit: 2, cursor: pages[0]?.nextCursor }))
      rest.push(pet);
    expect(rest).toEqual(created.slice(2));
  });

  it("sends the key as a Bearer token to the base URL it is given", async () => {
    const { api, sent, key } = await client();
    const page = await api.listPets({ limit: 1 });
    expect(page.notModified).toBe(false);
    expect(sent.map(({ request }) => [request.url, request.headers.get("Authorization")])).toEqual([
      [`${BASE}/v1/pets?limit=1`, `Bearer ${key}`],
    ]);
  });
});

describe("createPet", () => {
  it("retries a lost response with the same Idempotency-Key: one animal, the replay", async () => {
    const { api, sent } = await client({ fault: lost, on: isCreate });
    const body = { name: uniqueName(), categoryId: 12 };
    const created = await api.createPet(body);
    expect(created.pet).toEqual({ id: expect.any(Number), ...body, status: "available" });
    expect(created.location).toBe(`/v1/pets/${created.pet.id}`);
    expect(created.replayed).toBe(true);
    expectTypeOf(created).toEqualTypeOf<Created>();
    // The replay's ETag is the first response's, the pet's as created: getPet's.
    expect(created.etag).toMatch(/^"[^"]+"$/);
    expect(created.etag).toBe(sent[0]?.response?.headers.get("ETag"));
    const keys = sent.map(({ request }) => request.headers.get("Idempotency-Key"));
    expect(keys).toEqual([created.idempotencyKey, created.idempotencyKey]);
    expect(created.idempotencyKey).toMatch(/^[0-9a-f]{32}$/);
    expect(sent.map(({ response }) => response?.status)).toEqual([201, 201]);
    expect(sent[0]?.response?.headers.get("Idempotent-Replayed")).toBeNull();
    expect(sent[1]?.response?.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await named(api, body.name)).toEqual([created.pet]);
    expect((await api.getPet(created.pet.id)).etag).toBe(created.etag);
  });

  it("every response lost: a network failure with the key, sent again by hand: one animal", async () => {
    const { api, sent } = await client({ fault: lost, on: isCreate, times: 3 });
    const body = { name: uniqueName(), categoryId: 2 };
    const error = await refusal(api.createPet(body));
    expect(error).toMatchObject({ kind: "network", code: "network_error", attempts: 3 });
    expect(error.status).toBeUndefined();
    expect((error.cause as Error).message).toMatch(/connection was lost/);
    const keys = new Set(sent.map(({ request }) => request.headers.get("Idempotency-Key")));
    expect([...keys]).toEqual([error.idempotencyKey]);
    expect(sent.map(({ response }) => response?.status)).toEqual([201, 201, 201]);

    const again = await api.createPet(body, { idempotencyKey: error.idempotencyKey });
    expect(again.replayed).toBe(true);
    expect(await named(api, body.name)).toEqual([again.pet]);
  });

  it("a gateway's 502 or 504 is retried under the same key: one animal", async () => {
    for (const status of [502, 504]) {
      const gateway: Fault = () => new Response("<html>bad gateway</html>", { status });
      const { api, sent } = await client({ fault: gateway, on: isCreate });
      const body = { name: uniqueName(), categoryId: 3 };
      const created = await api.createPet(body);
      expect(created.replayed).toBe(true);
      expect(sent).toHaveLength(2);
      expect(await named(api, body.name)).toEqual([created.pet]);
    }
  });

  it("responses slower than attemptTimeoutMs (per call): timed out, retried under the key, one animal", async () => {
    const slow: Fault = async (_, response) => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return response;
    };
    const { api, sent } = await client({ fault: slow, on: isCreate, times: 2 });
    const body = { name: uniqueName(), categoryId: 4 };
    const created = await api.createPet(body, { attemptTimeoutMs: 400 });
    expect(created.replayed).toBe(true);
    expect(sent).toHaveLength(3);

    const { api: impatient } = await client({ fault: slow, times: 5 });
    const started = Date.now();
    const error = await refusal(impatient.listPets({}, { timeoutMs: 200 }));
    expect(error).toMatchObject({ kind: "timeout", code: "timeout", idempotencyKey: undefined });
    expect(Date.now() - started).toBeLessThan(800);
    expect(await named(api, body.name)).toEqual([created.pet]);
  });

  it("a success that is not the API's (a captive portal's page): unexpected_response, the key", async () => {
    const portal: Fault = () =>
      new Response("<html>Sign in to the hotel's wifi</html>", {
        status: 200,
        headers: { "Content-Type": "text/html" },
      });
    const { api } = await client({ fault: portal, times: 2 });
    const page = await refusal(api.listPets());
    expect(page).toMatchObject({ kind: "response", code: "unexpected_response", status: 200 });
    expect(page.headers.get("Content-Type")).toBe("text/html");
    const body = { name: uniqueName(), categoryId: 5 };
    const error = await refusal(api.createPet(body));
    expect(error).toMatchObject({ kind: "response", code: "unexpected_response", attempts: 1 });
    const again = await api.createPet(body, { idempotencyKey: error.idempotencyKey });
    expect(again.replayed).toBe(true);
    expect(await named(api, body.name)).toEqual([again.pet]);
  });

  it("a success that is not the operation's (another status, JSON of another shape): unexpected_response, never retried, the key", async () => {
    const as200: Fault = (_, response) =>
      new Response(response.body, { status: 200, headers: response.headers });
    const notOurs: Fault = (_, response) =>
      Response.json({ pets: [] }, { status: response.status });
    for (const [fault, message] of [
      [as200, "HTTP 200: the operation responds with 201"],
      [notOurs, "HTTP 201: JSON that is not the operation's"],
    ] as const) {
      const { api, sent } = await client({ fault, on: isCreate });
      const body = { name: uniqueName(), categoryId: 6 };
      const error = await refusal(api.createPet(body));
      expect(error).toMatchObject({ kind: "response", code: "unexpected_response", message });
      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
      const again = await api.createPet(body, { idempotencyKey: error.idempotencyKey });
      expect(again.replayed).toBe(true);
      expect(await named(api, body.name)).toEqual([again.pet]);
    }
    const { api } = await client({ fault: notOurs });
    const page = await refusal(api.listPets());
    expect(page).toMatchObject({ code: "unexpected_response", status: 200 });
    const noId: Fault = async (_, response) => {
      const { id: _id, ...rest } = (await response.json()) as Pet;
      return Response.json(rest);
    };
    const isRead = (request: Request) => /\/pets\/\d+$/.test(new URL(request.url).pathname);
    const { api: reader } = await client({ fault: noId, on: isRead });
    const { pet } = await reader.createPet({ name: uniqueName(), categoryId: 6 });
    const read = await refusal(reader.getPet(pet.id));
    expect(read).toMatchObject({ code: "unexpected_response", status: 200, attempts: 1 });
    expect(read.message).toBe("HTTP 200: JSON that is not the operation's");
  });

  it("a redirect is never followed: unexpected_response with its Location, nothing sent there", async () => {
    const location = "https://elsewhere.example/v1/pets";
    const away: Fault = () => new Response(null, { status: 307, headers: { Location: location } });
    const { api, sent } = await client({ fault: away, on: isCreate });
    const error = await refusal(api.createPet({ name: uniqueName(), categoryId: 8 }));
    expect(error).toMatchObject({ kind: "response", code: "unexpected_response", status: 307 });
    expect(error.message).toBe(`HTTP 307: a redirect to ${location}, not followed`);
    expect(error.idempotencyKey).toMatch(/^[0-9a-f]{32}$/);
    const requests = sent.map(({ request }) => [request.url, request.redirect]);
    expect(requests).toEqual([[`${BASE}/v1/pets`, "manual"]]);
  });

  it("a create the caller aborts: kind abort, the signal's reason, the key", async () => {
    const { api, sent } = await client();
    const signal = AbortSignal.abort(new Error("the user left the page"));
    const error = await refusal(api.createPet({ name: uniqueName(), categoryId: 1 }, { signal }));
    expect(error).toMatchObject({ kind: "abort", code: "aborted", attempts: 1 });
    expect(error.idempotencyKey).toMatch(/^[0-9a-f]{32}$/);
    expect((error.cause as Error).message).toBe("the user left the page");
    expect(sent).toHaveLength(0);
  });

  it("sends the caller's key; the same key with another body is 422, never retried", async () => {
    const { api, sent } = await client();
    const idempotencyKey = `order-${crypto.randomUUID()}`;
    const body = { name: uniqueName(), categoryId: 4, status: "sold" as const };
    const first = await api.createPet(body, { idempotencyKey });
    const again = await api.createPet(body, { idempotencyKey });
    expect([first.replayed, again.replayed]).toEqual([false, true]);
    expect(again.pet).toEqual(first.pet);
    expect(again.idempotencyKey).toBe(idempotencyKey);
    sent.length = 0;
    const error = await refusal(api.createPet({ ...body, categoryId: 5 }, { idempotencyKey }));
    expect(error).toMatchObject({ code: "idempotency_key_reused", status: 422 });
    expect(sent).toHaveLength(1);
  });
});

describe("updatePet", () => {
  it("changes what the patch names, as merge-patch+json: the pet, its new ETag, the bookmark to read it back", async () => {
    const { api, sent } = await client();
    const created = await api.createPet({ name: uniqueName(), categoryId: 7 });
    sent.length = 0;
    const updated = await api.updatePet(created.pet.id, { status: "pending", categoryId: 8 });
    expectTypeOf(updated).toEqualTypeOf<Updated>();
    expect(updated).toEqual({
      pet: { ...created.pet, status: "pending", categoryId: 8 },
      etag: expect.stringMatching(/^"[^"]+"$/),
      bookmark: expect.stringMatching(/^[0-9a-f-]+$/),
    });
    expect(updated.etag).not.toBe(created.etag);
    const [request] = sent.map((exchange) => exchange.request);
    expect([request?.method, request?.url]).toEqual(["PATCH", `${BASE}/v1/pets/${created.pet.id}`]);
    expect(request?.headers.get("Content-Type")).toBe("application/merge-patch+json");
    expect(request?.headers.has("If-Match")).toBe(false);
    expect(await request?.json()).toEqual({ status: "pending", categoryId: 8 });
    // Read at once with its bookmark: the change, and the same ETag.
    const read = await api.getPet(created.pet.id, { bookmark: updated.bookmark });
    expect(read).toMatchObject({ pet: updated.pet, etag: updated.etag });
    // {} changes nothing: the pet and the same ETag.
    expect(await api.updatePet(created.pet.id, {})).toMatchObject({
      pet: updated.pet,
      etag: updated.etag,
    });
  });

  it("ifMatch takes the ETag of a create, a read or an update; a stale one is 412 precondition_failed, never retried, nothing changed", async () => {
    const { api, sent } = await client();
    const created = await api.createPet({ name: uniqueName(), categoryId: 7 });
    const first = await api.updatePet(
      created.pet.id,
      { name: uniqueName() },
      { ifMatch: created.etag },
    );
    const read = await api.getPet(created.pet.id, { bookmark: first.bookmark });
    const second = await api.updatePet(created.pet.id, { status: "sold" }, { ifMatch: read.etag });
    const third = await api.updatePet(created.pet.id, { categoryId: 9 }, { ifMatch: second.etag });
    expect(third.pet).toEqual({ ...first.pet, status: "sold", categoryId: 9 });
    sent.length = 0;
    const error = await refusal(
      api.updatePet(created.pet.id, { categoryId: 10 }, { ifMatch: created.etag }),
    );
    expect(error).toMatchObject({
      kind: "response",
      code: "precondition_failed",
      status: 412,
      attempts: 1,
    });
    expect(error.message).toContain("If-Match");
    expect(error.requestId).toMatch(/./);
    expect(sent.map(({ request }) => request.headers.get("If-Match"))).toEqual([created.etag]);
    const now = await api.getPet(created.pet.id, { bookmark: api.bookmark });
    expect(now).toMatchObject({ pet: third.pet, etag: third.etag });
  });

  it("a status move the pet cannot make: 409 invalid_transition naming both, never retried", async () => {
    const { api, sent } = await client();
    const { pet } = await api.createPet({ name: uniqueName(), categoryId: 7, status: "sold" });
    sent.length = 0;
    const error = await refusal(api.updatePet(pet.id, { status: "available" }));
    expect(error).toMatchObject({
      kind: "response",
      code: "invalid_transition",
      status: 409,
      attempts: 1,
    });
    expect(error.details).toEqual([
      { field: "status", message: 'cannot go from "sold" to "available"' },
    ]);
    expect(sent).toHaveLength(1);
  });

  it("a patch the API refuses: 400 naming the field; no such pet: 404 not_found", async () => {
    const { api } = await client();
    const { pet } = await api.createPet({ name: uniqueName(), categoryId: 7 });
    const error = await refusal(api.updatePet(pet.id, { categoryId: 0 }));
    expect(error).toMatchObject({ code: "validation_failed", status: 400 });
    expect(error.details.map((detail) => detail.field)).toEqual(["categoryId"]);
    const missing = await refusal(api.updatePet(9007199254740991, { status: "sold" }));
    expect(missing).toMatchObject({ code: "not_found", status: 404, attempts: 1 });
    // The types are the document's merge patch: its fields, never id, never null.
    expectTypeOf<Parameters<PetStoreClient["updatePet"]>[1]>().toEqualTypeOf<PetPatch>();
    expectTypeOf<PetPatch>().toEqualTypeOf<{
      name?: string;
      categoryId?: number;
      status?: Pet["status"];
    }>();
    // @ts-expect-error the id is not a field a patch changes
    await refusal(api.updatePet(pet.id, { id: 1 }));
    // @ts-expect-error no field can be removed: null is refused
    await refusal(api.updatePet(pet.id, { name: null }));
  });

  it("a lost response without ifMatch: retried, the patch applied once, the pet", async () => {
    const { api, sent } = await client({ fault: lost, on: isUpdate });
    const created = await api.createPet({ name: uniqueName(), categoryId: 7 });
    const updated = await api.updatePet(created.pet.id, { status: "pending", categoryId: 3 });
    expect(updated.pet).toEqual({ ...created.pet, status: "pending", categoryId: 3 });
    const patches = sent.filter(({ request }) => isUpdate(request));
    expect(patches.map(({ response }) => response?.status)).toEqual([200, 200]);
    // Sent twice, it ends as once: the second response is the first's pet and ETag.
    expect(patches[0]?.response?.headers.get("ETag")).toBe(updated.etag);
    expect(await named(api, created.pet.name)).toEqual([updated.pet]);
  });

  it("a lost response under ifMatch: not retried (its retry would meet its own change as 412), the network failure; a read shows the change", async () => {
    const { api, sent } = await client({ fault: lost, on: isUpdate });
    const created = await api.createPet({ name: uniqueName(), categoryId: 7 });
    const patch = { status: "pending", categoryId: 3 } as const;
    const error = await refusal(api.updatePet(created.pet.id, patch, { ifMatch: created.etag }));
    expect(error).toMatchObject({ kind: "network", code: "network_error", attempts: 1 });
    expect(sent.filter(({ request }) => isUpdate(request))).toHaveLength(1);
    const bookmark = sent.at(-1)?.response?.headers.get("x-d1-bookmark") ?? undefined;
    const read = await api.getPet(created.pet.id, { bookmark });
    expect(read.pet).toEqual({ ...created.pet, ...patch });
    expect(read.etag).not.toBe(created.etag);
    expect(await named(api, created.pet.name)).toEqual([read.pet]);
  });
});

describe("deletePet", () => {
  it("removes the pet: removed, not alreadyGone, the bookmark; a read with it is 404; nothing else removed", async () => {
    const { api, sent } = await client();
    const name = uniqueName();
    const { pet } = await api.createPet({ name, categoryId: 7 });
    const { pet: other } = await api.createPet({ name, categoryId: 7 });
    sent.length = 0;
    const removed = await api.deletePet(pet.id);
    expectTypeOf(removed).toEqualTypeOf<Removed>();
    expect(removed).toEqual({
      removed: true,
      alreadyGone: false,
      bookmark: expect.stringMatching(/^[0-9a-f-]+$/),
    });
    expect(sent.map(({ request }) => [request.method, request.url])).toEqual([
      ["DELETE", `${BASE}/v1/pets/${pet.id}`],
    ]);
    expect(sent.map(({ response }) => response?.status)).toEqual([204]);
    const read = await refusal(api.getPet(pet.id, { bookmark: removed.bookmark }));
    expect(read).toMatchObject({ code: "not_found", status: 404 });
    expect(await named(api, name)).toEqual([other]);
  });

  it("a first attempt's 404 is not_found: no such pet, or one removed before", async () => {
    const { api } = await client();
    const { pet } = await api.createPet({ name: uniqueName(), categoryId: 7 });
    await api.deletePet(pet.id);
    for (const petId of [pet.id, 9007199254740991]) {
      const error = await refusal(api.deletePet(petId));
      expect(error).toMatchObject({
        kind: "response",
        code: "not_found",
        status: 404,
        attempts: 1,
      });
    }
  });

  it("a lost response: retried, its 404 resolves as removed (alreadyGone), with or without ifMatch; nothing else removed", async () => {
    for (const conditional of [false, true]) {
      const { api, sent } = await client({ fault: lost, on: isDelete });
      const name = uniqueName();
      const created = await api.createPet({ name, categoryId: 7 });
      const { pet: other } = await api.createPet({ name, categoryId: 7 });
      const ifMatch = conditional ? created.etag : undefined;
      const removed = await api.deletePet(created.pet.id, { ifMatch });
      expect(removed).toEqual({
        removed: true,
        alreadyGone: true,
        bookmark: expect.stringMatching(/^[0-9a-f-]+$/),
      });
      const deletes = sent.filter(({ request }) => isDelete(request));
      expect(deletes.map(({ response }) => response?.status)).toEqual([204, 404]);
      expect(deletes.map(({ request }) => request.headers.get("If-Match"))).toEqual([
        ifMatch ?? null,
        ifMatch ?? null,
      ]);
      const read = await refusal(api.getPet(created.pet.id, { bookmark: removed.bookmark }));
      expect(read).toMatchObject({ code: "not_found", status: 404 });
      expect(await named(api, name)).toEqual([other]);
    }
  });

  it("ifMatch: a stale ETag is 412 precondition_failed, never retried, the pet kept; the current one removes it", async () => {
    const { api, sent } = await client();
    const created = await api.createPet({ name: uniqueName(), categoryId: 7 });
    const updated = await api.updatePet(created.pet.id, { status: "pending" });
    sent.length = 0;
    const error = await refusal(api.deletePet(created.pet.id, { ifMatch: created.etag }));
    expect(error).toMatchObject({
      kind: "response",
      code: "precondition_failed",
      status: 412,
      attempts: 1,
    });
    expect(sent).toHaveLength(1);
    const kept = await api.getPet(created.pet.id, { bookmark: api.bookmark });
    expect(kept.pet).toEqual(updated.pet);
    expect(await api.deletePet(created.pet.id, { ifMatch: updated.etag })).toMatchObject({
      alreadyGone: false,
    });
  });
});

describe("conditional reads", () => {
  it("getPet with the ETag it returned: NotModified, a value; another tag: the pet", async () => {
    const { api } = await client();
    const { pet } = await api.createPet({ name: uniqueName(), categoryId: 7 });
    const read = await api.getPet(pet.id);
    expectTypeOf(read).toEqualTypeOf<PetRead>();
    expect(read).toEqual({
      notModified: false,
      pet,
      etag: expect.stringMatching(/^"[^"]+"$/),
      bookmark: expect.stringMatching(/^[0-9a-f-]+$/),
    });
    const again = await api.getPet(pet.id, { ifNoneMatch: read.etag });
    expectTypeOf(again).toEqualTypeOf<PetRead | NotModified>();
    expect(again).toEqual({ notModified: true, etag: read.etag });
    const other = await api.getPet(pet.id, { ifNoneMatch: '"another"' });
    // From the location's cache now, with the bookmark of the read it holds.
    expect(other).toEqual(read);
  });

  it("a page with the ETag it returned: NotModified", async () => {
    const { api } = await client();
    await api.createPet({ name: uniqueName(), categoryId: 7 });
    const page = await api.listPets({ limit: 1 });
    const again = await api.listPets({ limit: 1 }, { ifNoneMatch: page.etag });
    expectTypeOf(again).toEqualTypeOf<Page | NotModified>();
    // @ts-expect-error a NotModified has no pets: narrow on notModified first
    void again.pets;
    expect(again).toEqual({ notModified: true, etag: page.etag });
  });
});

describe("errors", () => {
  it("401: the Error object, its code and status, the request id", async () => {
    const stranger = new PetStoreClient({
      baseUrl: `${BASE}/v1`,
      apiKey: "psk_not-a-key",
      fetch: workerFetch,
    });
    const error = await refusal(stranger.listPets());
    expect(error).toMatchObject({ name: "PetStoreError", code: "unauthorized", status: 401 });
    expect(error).toMatchObject({ kind: "response", attempts: 1, idempotencyKey: undefined });
    expect(error.message).toMatch(/./);
    expect(error.requestId).toMatch(/./);
    expect(error.headers.get("X-Request-Id")).toBe(error.requestId);
    expect(error.headers.get("WWW-Authenticate")).toMatch(/^Bearer /);
    expect(error.requiredScope).toBeUndefined();
  });

  it("403: the scope the key lacks, and no retry", async () => {
    const { api, sent } = await client({ scopes: ["pets:read"] });
    const error = await refusal(api.createPet({ name: uniqueName(), categoryId: 1 }));
    expect(error).toMatchObject({
      code: "insufficient_scope",
      status: 403,
      requiredScope: "pets:write",
      attempts: 1,
    });
    expect(error.message).toContain("pets:write");
    expect(error.idempotencyKey).toBe(sent[0]?.request.headers.get("Idempotency-Key"));
    expect(sent).toHaveLength(1);
  });

  it("400: every field problem in details", async () => {
    const { api, sent } = await client();
    const error = await refusal(api.createPet({ name: "", categoryId: 0 }));
    expect(error).toMatchObject({ code: "validation_failed", status: 400 });
    expect(error.details.map((detail) => detail.field).sort()).toEqual(["categoryId", "name"]);
    expect(sent).toHaveLength(1);
    // @ts-expect-error name is a string
    await refusal(api.createPet({ name: 7, categoryId: 1 }));
  });

  it("getPet of an id no animal has: 404 not_found", async () => {
    const { api } = await client();
    const error = await refusal(api.getPet(9007199254740991));
    expect(error).toMatchObject({ code: "not_found", status: 404 });
  });

  it("listOrders: not available yet, 501 not_implemented", async () => {
    const { api } = await client();
    const orders = api.listOrders();
    expectTypeOf(orders).resolves.toBeNever();
    const error = await refusal(orders);
    expect(error).toMatchObject({ code: "not_implemented", status: 501 });
  });
});

describe("raw", () => {
  it("reaches every operation of the document, typed, with the key", async () => {
    const { api } = await client();
    const { data, response } = await api.raw.GET("/openapi.json");
    expect(response.status).toBe(200);
    expect(data?.openapi).toMatch(/^3\.1\./);
    const { data: pets } = await api.raw.GET("/pets", { params: { query: { limit: 1 } } });
    expectTypeOf(pets).toEqualTypeOf<Pet[] | undefined>();
    expect(pets).toHaveLength(1);
  });
});
