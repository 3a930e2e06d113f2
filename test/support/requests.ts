// Helpers shared by the hardening tests: raw bodies, pet checks, D1 snapshots.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { sha256Hex } from "../../src/encoding.ts";
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

/** An idempotency record as stored (migration 0005), its hashes as lower-case hex. */
export interface IdempotencyRecord {
  api_key_id: number;
  key_hash: string;
  fingerprint: string;
  pet_id: number;
  created_at: number;
}

/**
 * The records of Idempotency-Key `idempotencyKey` (found by its SHA-256, as the service
 * stores it), of API key `apiKeyId` or of any key.
 */
export async function idempotencyRecords(
  idempotencyKey: string,
  apiKeyId?: number,
): Promise<IdempotencyRecord[]> {
  const { results } = await env.DB.prepare(
    `SELECT api_key_id, lower(hex(key_hash)) AS key_hash, lower(hex(fingerprint)) AS fingerprint,
            pet_id, created_at
     FROM idempotency_records WHERE key_hash = unhex(?1) AND (?2 IS NULL OR api_key_id = ?2)`,
  )
    .bind(await sha256Hex(idempotencyKey), apiKeyId ?? null)
    .all<IdempotencyRecord>();
  return results;
}

/** A name nobody else uses, to find "our" rows in a shared table. */
export function uniqueName(prefix = "pet"): string {
  return `${prefix}-${crypto.randomUUID()}`;
}

/**
 * The local rate limiter (miniflare) counts in fixed 60 s windows aligned to the wall
 * clock: a test that spends an allowance and then expects 429 must not straddle a
 * window boundary. With less than 5 s left in the window, wait for the next one.
 */
export async function freshWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}
