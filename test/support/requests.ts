// Helpers shared by the hardening tests: raw bodies, pet checks, D1 snapshots.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { Pet } from "../../src/pets/schemas.ts";
import { call } from "../helpers.ts";

/** A Pet as a body read back: its `status` any string, for tests that check it. */
export type PetBody = Omit<Pet, "status"> & { status: string };

/** POST /v1/pets with a body sent byte for byte as given (no JSON.stringify). */
export function postRaw(
  key: string,
  body: BodyInit | null,
  headers: Record<string, string> = { "Content-Type": "application/json" },
): Promise<Response> {
  return call("/v1/pets", { method: "POST", key, headers, ...(body === null ? {} : { body }) });
}

/** Asserts a 201 createPet answer: exactly the four fields, Location, JSON media type. */
export async function expectCreated(
  response: Response,
  expected: { name: string; categoryId: number; status: string },
): Promise<PetBody> {
  const text = await response.text();
  expect(response.status, text).toBe(201);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(response.headers.get("X-Request-Id")).toBeTruthy();
  const pet = JSON.parse(text) as PetBody;
  expect(Object.keys(pet).sort()).toEqual(["categoryId", "id", "name", "status"]);
  expect(Number.isSafeInteger(pet.id) && pet.id >= 1).toBe(true);
  expect(pet).toEqual({ id: pet.id, ...expected });
  expect(response.headers.get("Location")).toBe(`/v1/pets/${pet.id}`);
  return pet;
}

/** Every row of `pets`, in id order, straight from D1. */
export async function allPetRows(): Promise<Record<string, unknown>[]> {
  const { results } = await env.DB.prepare(
    "SELECT id, name, category_id, status, created_at FROM pets ORDER BY id",
  ).all<Record<string, unknown>>();
  return results;
}

export async function petCount(): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM pets").first<{ n: number }>();
  return row?.n ?? -1;
}

/** The schema objects of the database (tables, indexes), to prove nothing was dropped. */
export async function schemaObjects(): Promise<Record<string, unknown>[]> {
  const { results } = await env.DB.prepare(
    "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
  ).all<Record<string, unknown>>();
  return results;
}

export async function idempotencyRows(apiKeyId: number): Promise<Record<string, unknown>[]> {
  const { results } = await env.DB.prepare(
    "SELECT idempotency_key, state, response_body FROM idempotency_keys WHERE api_key_id = ?1 ORDER BY idempotency_key",
  )
    .bind(apiKeyId)
    .all<Record<string, unknown>>();
  return results;
}

/** A name nobody else uses, to find "our" rows in a shared table. */
export function uniqueName(prefix = "pet"): string {
  return `${prefix}-${crypto.randomUUID()}`;
}
