// Typed client for the Pet Store API, built with Hono's `hc` from the route types of
// src/handlers/pets.ts (written from the operation table): paths, query and path
// parameters, JSON bodies and success responses are checked by TypeScript. Nothing of
// the worker is bundled into a consumer: `PetRoutes` is a type.
//
//   const api = createPetStoreClient("https://api.petstore.example.com", { apiKey });
//   const res = await api.pets.$get({ query: { status: "available", limit: "20" } });
//   if (res.ok) for (const pet of await res.json()) console.log(pet.id, pet.name);
//
// Error answers (4xx/5xx) are the `Error` object of the OpenAPI document: read them
// with `readError(res)`. A 403 `insufficient_scope` means the key lacks the scope the
// operation needs: `requiredScope(res)` names it (from `WWW-Authenticate`).
import type { ClientResponse } from "hono/client";
import { hc } from "hono/client";
import type { ErrorBody } from "./errors.ts";
import type { PetRoutes } from "./handlers/pets.ts";
import type { Scope } from "./scopes.ts";
import { isScope } from "./scopes.ts";

export type { ErrorBody } from "./errors.ts";
/** The route types the client is generated from (mounted under `/v1`). */
export type { PetRoutes } from "./handlers/pets.ts";
export type { NewPet, Pet, PetStatus } from "./pets/schemas.ts";
export type { Scope } from "./scopes.ts";

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

/**
 * The scope that a 403 `insufficient_scope` answer names in `WWW-Authenticate`
 * (RFC 6750 section 3.1); undefined for any other answer.
 */
export function requiredScope(
  response: ClientResponse<unknown, number, string> | Response,
): Scope | undefined {
  if (response.status !== 403) return undefined;
  const challenge = response.headers.get("WWW-Authenticate") ?? "";
  if (!/error="insufficient_scope"/.test(challenge)) return undefined;
  const scope = /scope="([^"]*)"/.exec(challenge)?.[1];
  return scope !== undefined && isScope(scope) ? scope : undefined;
}
