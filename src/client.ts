// Typed client for the Pet Store API, built with Hono's `hc` from the route types of
// src/pets/routes.ts: paths, query and path parameters, JSON bodies and success
// responses are checked by TypeScript. Nothing of the worker is bundled into a
// consumer: `petRoutes` is imported for its type only.
//
//   const api = createPetStoreClient("https://api.petstore.example.com", { apiKey });
//   const res = await api.pets.$get({ query: { status: "available", limit: "20" } });
//   if (res.ok) for (const pet of await res.json()) console.log(pet.id, pet.name);
//
// Error answers (4xx/5xx) are the `Error` object of the OpenAPI document: read them
// with `readError(res)`.
import type { ClientResponse } from "hono/client";
import { hc } from "hono/client";
import type { ErrorBody } from "./errors.ts";
import type { petRoutes } from "./pets/routes.ts";

export type { ErrorBody } from "./errors.ts";
export type { NewPet, Pet, PetStatus } from "./pets/schemas.ts";

/** The route types the client is generated from (mounted under `/v1`). */
export type PetRoutes = typeof petRoutes;

export type PetStoreClient = ReturnType<typeof hc<PetRoutes>>;

export interface PetStoreClientOptions {
  /** An API key (`psk_...`), sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** A fetch to use instead of the global one (tests, service bindings, retries). */
  fetch?: typeof fetch;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

/**
 * A client for the API at `origin` (e.g. `https://api.petstore.example.com`);
 * the `/v1` prefix is added here.
 */
export function createPetStoreClient(
  origin: string,
  options: PetStoreClientOptions,
): PetStoreClient {
  return hc<PetRoutes>(`${origin.replace(/\/+$/, "")}/v1`, {
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
  });
}

/** The `Error` object of a non-2xx answer. Throws if the answer is a success. */
export async function readError(
  response: ClientResponse<unknown, number, string> | Response,
): Promise<ErrorBody> {
  if (response.ok) throw new Error(`Expected an error answer, got ${response.status}`);
  return (await response.json()) as ErrorBody;
}
