// The typed client (src/client.ts) against the worker in workerd: real keys, real D1.
// Every answer it receives is also checked against the OpenAPI document.
// The expectTypeOf / @ts-expect-error lines are type tests: `npm run typecheck` fails
// when the client's types drift from the routes.
import { exports } from "cloudflare:workers";
import type { InferRequestType, InferResponseType } from "hono/client";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  createPetStoreClient,
  type ErrorBody,
  type Pet,
  type PetStoreClient,
  readError,
  requiredScope,
  type Scope,
} from "../src/client.ts";
import { DEPRECATION_HEADERS } from "../src/pets/deprecation.ts";
import { BASE, createKey, expectDeprecationHeaders } from "./helpers.ts";
import { assertConforms } from "./support/conformance.ts";

/** The worker's own fetch, with every answer checked against the OpenAPI document. */
const workerFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await exports.default.fetch(request);
  await assertConforms(request, response);
  return response;
};

async function client(): Promise<PetStoreClient> {
  const { key } = await createKey("client");
  return createPetStoreClient(BASE, { apiKey: key, fetch: workerFetch });
}

function uniqueName(): string {
  return `client-${crypto.randomUUID()}`;
}

describe("types", () => {
  it("types paths, inputs and success bodies from the routes", () => {
    type Api = PetStoreClient;
    expectTypeOf<InferResponseType<Api["pets"]["$get"], 200>>().toEqualTypeOf<Pet[]>();
    expectTypeOf<InferResponseType<Api["pets"]["$post"], 201>>().toEqualTypeOf<Pet>();
    expectTypeOf<InferResponseType<Api["pets"][":petId"]["$get"], 200>>().toEqualTypeOf<Pet>();
    expectTypeOf<InferRequestType<Api["pets"]["$post"]>["json"]>().toHaveProperty("categoryId");
    expectTypeOf<InferRequestType<Api["pets"][":petId"]["$get"]>["param"]>().toEqualTypeOf<{
      petId: string;
    }>();
  });

  it("rejects unknown paths and ill-typed bodies at compile time", async () => {
    const api = await client();
    // Type-only check: hc's proxy answers any name at run time, the compiler does not.
    // @ts-expect-error there is no /v1/cats
    void api.cats;
    const refused = await api.pets.$post({
      // @ts-expect-error name must be a string
      json: { name: 7, categoryId: 1 },
    });
    expect(refused.status).toBe(400);
    expect(await readError(refused)).toMatchObject({ code: "validation_failed", status: 400 });
  });
});

describe("createPet", () => {
  it("creates an animal: 201, the Pet, Location", async () => {
    const api = await client();
    const name = uniqueName();
    const res = await api.pets.$post({ json: { name, categoryId: 12, status: "pending" } });
    expect(res.status).toBe(201);
    const pet = await res.json();
    expect(pet).toEqual({ id: expect.any(Number), name, categoryId: 12, status: "pending" });
    expect(res.headers.get("Location")).toBe(`/v1/pets/${pet.id}`);
  });

  it("sends Idempotency-Key through the per-call headers and replays", async () => {
    const api = await client();
    const json = { name: uniqueName(), categoryId: 3 };
    const headers = { "Idempotency-Key": crypto.randomUUID() };
    const first = await api.pets.$post({ json }, { headers });
    const second = await api.pets.$post({ json }, { headers });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get("Idempotent-Replayed")).toBe("true");
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    expect(second.headers.get("Location")).toBe(first.headers.get("Location"));
    expect(await second.json()).toEqual(await first.json());
  });

  it("hands back the Error object of a refused body", async () => {
    const api = await client();
    const res = await api.pets.$post({ json: { name: "Rex", categoryId: 0 } });
    expect(res.status).toBe(400);
    const error = await readError(res);
    expect(error).toMatchObject({ code: "validation_failed", status: 400 });
    expect(error.message).toContain("categoryId");
  });
});

describe("listPets", () => {
  it("filters by status and pages with the Link header", async () => {
    const api = await client();
    const status = "sold" as const;
    const created: Pet[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api.pets.$post({ json: { name: uniqueName(), categoryId: 5, status } });
      expect(res.status).toBe(201);
      created.push(await res.json());
    }
    const first = await api.pets.$get({ query: { status, limit: "2" } });
    expect(first.status).toBe(200);
    const page = await first.json();
    expect(page).toHaveLength(2);
    expect(page.every((pet) => pet.status === status)).toBe(true);
    const next = first.headers.get("Link")?.match(/^<([^>]+)>; rel="next"$/)?.[1];
    expect(next).toBeDefined();
    const cursor = new URL(next ?? "").searchParams.get("cursor") ?? "";
    expect(cursor).not.toBe("");

    // Walk every page: the three animals made here come back once each, in id order.
    const seen: Pet[] = [...page];
    let link: string | null = first.headers.get("Link");
    let after = cursor;
    while (link) {
      const res = await api.pets.$get({ query: { status, limit: "2", cursor: after } });
      expect(res.status).toBe(200);
      seen.push(...(await res.json()));
      link = res.headers.get("Link");
      after = link
        ? (new URL(link.slice(1, link.indexOf(">"))).searchParams.get("cursor") ?? "")
        : "";
    }
    const ids = seen.map((pet) => pet.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(seen.filter((pet) => created.some((c) => c.id === pet.id))).toEqual(created);
  });

  it("refuses an out-of-range limit with the Error object", async () => {
    const api = await client();
    const res = await api.pets.$get({ query: { limit: "101" } });
    expect(res.status).toBe(400);
    expect(await readError(res)).toMatchObject({ code: "invalid_parameter", status: 400 });
  });
});

describe("getPet (deprecated)", () => {
  it("fetches one animal and carries the deprecation headers", async () => {
    const api = await client();
    const made = await api.pets.$post({ json: { name: uniqueName(), categoryId: 9 } });
    const pet = await made.json();
    const res = await api.pets[":petId"].$get({ param: { petId: String(pet.id) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ...pet, status: "available" });
    expectDeprecationHeaders(res);
    expect(res.headers.get("Link")).toBe(DEPRECATION_HEADERS.Link);
  });

  it("answers 404 not_found for an id nobody has", async () => {
    const api = await client();
    const res = await api.pets[":petId"].$get({ param: { petId: "9007199254740991" } });
    expect(res.status).toBe(404);
    const error: ErrorBody = await readError(res);
    expect(error.code).toBe("not_found");
  });
});

describe("authentication", () => {
  it("sends the key as a Bearer token: a wrong key is 401 invalid_token", async () => {
    const api = createPetStoreClient(BASE, { apiKey: "psk_not_a_real_key", fetch: workerFetch });
    const res = await api.pets.$get({ query: {} });
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBe(
      'Bearer realm="petstore", error="invalid_token"',
    );
    expect(await readError(res)).toMatchObject({ code: "unauthorized", status: 401 });
  });

  it("hands back a 403 insufficient_scope and the scope it names", async () => {
    const { key } = await createKey("client-read-only", { scopes: ["pets:read"] });
    const api = createPetStoreClient(BASE, { apiKey: key, fetch: workerFetch });
    const list = await api.pets.$get({ query: { limit: "1" } });
    expect(list.status).toBe(200);
    expect(requiredScope(list)).toBeUndefined();
    const res = await api.pets.$post({ json: { name: uniqueName(), categoryId: 1 } });
    expect(res.status).toBe(403);
    expect(requiredScope(res)).toBe("pets:write");
    const error: ErrorBody = await readError(res);
    expect(error).toEqual({
      code: "insufficient_scope",
      status: 403,
      message: expect.stringContaining('"pets:write"'),
    });
    expectTypeOf(requiredScope).returns.toEqualTypeOf<Scope | undefined>();
  });

  it("adds /v1 to the origin it is given, with or without a trailing slash", async () => {
    const urls: string[] = [];
    const { key } = await createKey("client-url");
    const recording: typeof fetch = (input, init) => {
      urls.push(new Request(input, init).url);
      return workerFetch(input, init);
    };
    const api = createPetStoreClient(`${BASE}/`, { apiKey: key, fetch: recording });
    const res = await api.pets.$get({ query: { limit: "1" } });
    expect(res.status).toBe(200);
    expect(urls).toEqual([`${BASE}/v1/pets?limit=1`]);
  });
});
