// The typed client (src/client.ts) against the worker in workerd (`workerFetch`: every
// answer checked against the OpenAPI document): real keys, real D1.
// The expectTypeOf / @ts-expect-error lines are type tests: `npm run typecheck` fails
// when the client's types drift from the routes.
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
import { deprecationHeaders } from "../src/http/deprecation.ts";
import { getPet } from "../src/operations.ts";
import { BASE, createKey, expectDeprecationHeaders, workerFetch } from "./helpers.ts";

async function client(scopes?: Scope[]): Promise<PetStoreClient> {
  const { key } = await createKey("client", scopes ? { scopes } : {});
  return createPetStoreClient(BASE, { apiKey: key, fetch: workerFetch });
}

const uniqueName = () => `client-${crypto.randomUUID()}`;

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
    expectTypeOf(requiredScope).returns.toEqualTypeOf<Scope | undefined>();
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
    // At run time: the Error object of the refused body.
    expect(refused.status).toBe(400);
    const error = await readError(refused);
    expect(error).toMatchObject({ code: "validation_failed", status: 400 });
    expect(error.message).toContain("name");
  });
});

describe("the operations", () => {
  it("createPet: the Pet and Location; Idempotency-Key through the per-call headers replays", async () => {
    const api = await client();
    const json = { name: uniqueName(), categoryId: 12, status: "pending" as const };
    const headers = { "Idempotency-Key": crypto.randomUUID() };
    const first = await api.pets.$post({ json }, { headers });
    const second = await api.pets.$post({ json }, { headers });
    expect([first.status, second.status]).toEqual([201, 201]);
    const pet = await first.json();
    expect(pet).toEqual({ id: expect.any(Number), ...json });
    expect(first.headers.get("Location")).toBe(`/v1/pets/${pet.id}`);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    expect(second.headers.get("Idempotent-Replayed")).toBe("true");
    expect(second.headers.get("Location")).toBe(first.headers.get("Location"));
    expect(await second.json()).toEqual(pet);
  });

  it("hands back the Error object of a refused query", async () => {
    const api = await client();
    const query = await api.pets.$get({ query: { limit: "101" } });
    expect(query.status).toBe(400);
    expect(await readError(query)).toMatchObject({ code: "invalid_parameter", status: 400 });
  });

  it("listPets: status, limit and the cursor of the Link header reach the server", async () => {
    const api = await client();
    // The only sold animals of this file (storage is per file): two pages of them.
    const created: Pet[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api.pets.$post({
        json: { name: uniqueName(), categoryId: 5, status: "sold" },
      });
      created.push(await res.json());
    }
    const first = await api.pets.$get({ query: { status: "sold", limit: "2" } });
    expect(await first.json()).toEqual(created.slice(0, 2));
    const next = first.headers.get("Link")?.match(/^<([^>]+)>; rel="next"$/)?.[1] ?? "";
    const cursor = new URL(next).searchParams.get("cursor") ?? "";
    const second = await api.pets.$get({ query: { status: "sold", limit: "2", cursor } });
    expect(await second.json()).toEqual(created.slice(2));
    expect(second.headers.get("Link")).toBeNull();
  });

  it("getPet (deprecated): one animal with the deprecation headers, or 404 not_found", async () => {
    const api = await client();
    const pet = await (
      await api.pets.$post({ json: { name: uniqueName(), categoryId: 9 } })
    ).json();
    const res = await api.pets[":petId"].$get({ param: { petId: String(pet.id) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ...pet, status: "available" });
    expectDeprecationHeaders(res);
    expect(res.headers.get("Link")).toBe(deprecationHeaders(getPet.deprecation).Link);
    const missing = await api.pets[":petId"].$get({ param: { petId: "9007199254740991" } });
    expect(missing.status).toBe(404);
    const error: ErrorBody = await readError(missing);
    expect(error.code).toBe("not_found");
  });
});

describe("authentication", () => {
  it("hands back a 403 insufficient_scope and the scope it names", async () => {
    const api = await client(["pets:read"]);
    const list = await api.pets.$get({ query: { limit: "1" } });
    expect(list.status).toBe(200);
    expect(requiredScope(list)).toBeUndefined();
    const res = await api.pets.$post({ json: { name: uniqueName(), categoryId: 1 } });
    expect(res.status).toBe(403);
    expect(requiredScope(res)).toBe("pets:write");
    expect(await readError(res)).toEqual({
      code: "insufficient_scope",
      status: 403,
      message: expect.stringContaining('"pets:write"'),
    });
  });

  it("sends the key as a Bearer token to the origin it is given plus /v1 (with or without a trailing slash)", async () => {
    const sent: Array<[string, string | null]> = [];
    const { key } = await createKey("client-url");
    const recording: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      sent.push([request.url, request.headers.get("Authorization")]);
      return workerFetch(request);
    };
    const api = createPetStoreClient(`${BASE}/`, { apiKey: key, fetch: recording });
    const res = await api.pets.$get({ query: { limit: "1" } });
    expect(res.status).toBe(200);
    expect(sent).toEqual([[`${BASE}/v1/pets?limit=1`, `Bearer ${key}`]]);
  });
});
