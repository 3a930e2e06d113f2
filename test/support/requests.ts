// Helpers shared by the request tests: refusals before the database, pet checks, D1 snapshots.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { sha256Hex } from "../../src/encoding.ts";
import type { ErrorBody } from "../../src/errors.ts";
import type { Pet } from "../../src/pets/schemas.ts";
import { type CallOptions, call, createKey, expectError } from "../helpers.ts";
import { fixedVerifier, instrumentedApp, NO_EDGE_CACHE } from "./instrumented-app.ts";

/** SQL metacharacters, comment sequences and statements, for every string input. */
export const SQL_PAYLOADS = [
  "'; DROP TABLE pets; --",
  "Robert'); DROP TABLE pets;--",
  "' OR '1'='1",
  '" OR ""="',
  "1 OR 1=1",
  "1; DELETE FROM pets",
  "x' UNION SELECT key_hash, prefix, 1, 'sold' FROM api_keys --",
  "'; UPDATE pets SET status='sold' WHERE 1=1; --",
  "x'||(SELECT sql FROM sqlite_master)||'",
  "/* comment */ x",
  "x -- comment",
  "x #",
  "%' OR name LIKE '%",
  "_%",
  "?1 ?2 $1 :name @p",
  "\\'; DROP TABLE pets; --",
  "`pets`; DROP TABLE `api_keys`",
  "\"; ATTACH DATABASE 'x.db' AS x; --",
  "' ; PRAGMA writable_schema=1; --",
  "0x27 CHAR(39)",
] as const;

/** A Pet as a body read back: its `status` any string, for tests that check it. */
export type PetBody = Omit<Pet, "status"> & { status: string };

/** POST /v1/pets with a body sent byte for byte (a function makes a fresh stream per send). */
export function postOptions(
  key: string,
  body: BodyInit | null | (() => BodyInit),
  headers: Record<string, string> = { "Content-Type": "application/json" },
): () => CallOptions {
  return () => ({
    method: "POST",
    key,
    headers,
    ...(body === null ? {} : { body: typeof body === "function" ? body() : body }),
  });
}

/**
 * A new API key (`label`), and a check that a request is refused before the database: sent
 * through the worker (`call`) and through the real app over a recorded D1 (no edge cache,
 * the key accepted without a lookup), both responses must be the same short Error, D1 must
 * run no statement and no pet may appear. `options` default to a GET with the key. The
 * first check reads once through the app: that spends its once-a-while work (the key's last
 * use) and shows that the recording sees statements, so an empty record means something.
 */
export async function refusalChecker(label: string) {
  const { key, id } = await createKey(label);
  const verifier = fixedVerifier(key, id);
  const app = instrumentedApp({ db: env.DB, verifier, cache: NO_EDGE_CACHE });
  let warm = false;
  return {
    key,
    id,
    app,
    async expectRefused(
      path: string,
      status: number,
      code: string,
      message?: RegExp,
      options: () => CallOptions = () => ({ key }),
    ): Promise<{ body: ErrorBody; response: Response }> {
      if (!warm) {
        expect((await app.fetch("/v1/pets?limit=1", { key })).status).toBe(200);
        expect(app.statements.some((sql) => /\bFROM pets\b/.test(sql))).toBe(true);
        warm = true;
      }
      const before = await petCount();
      const response = await call(path, options());
      await expectError(response, status, code, message);
      const body = await expectError(await app.fetch(path, options()), status, code, message);
      expect(JSON.stringify(body).length).toBeLessThan(1_000);
      // Nothing but the key's usage, which every response's work after it may write.
      const statements = app.statements.filter(
        (sql) => !/\b(api_key_usage|last_used_at)\b/.test(sql),
      );
      expect(statements, statements.join("; ")).toEqual([]);
      expect(await petCount()).toBe(before);
      return { body, response };
    },
  };
}

export type RefusalChecker = Awaited<ReturnType<typeof refusalChecker>>;

/** Asserts a 201 createPet response: exactly the four fields, Location, JSON media type. */
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

/** The rel="next" URL of a listing page, or null. */
export function nextLink(response: Response): string | null {
  return response.headers.get("Link")?.match(/<([^>]+)>;\s*rel="next"/)?.[1] ?? null;
}

/** Follows rel="next" from `path` (at most 100 pages): each page's pets and its next link. */
export async function walkPages(path: string, key: string) {
  const pages: Array<{ pets: PetBody[]; next: string | null }> = [];
  for (let at: string | null = path; at !== null && pages.length < 100; ) {
    const response = await call(at, { key });
    expect(response.status).toBe(200);
    const next = nextLink(response);
    pages.push({ pets: (await response.json()) as PetBody[], next });
    at = next && new URL(next).pathname + new URL(next).search;
  }
  return pages;
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

/**
 * The records (migrations 0005, 0008) of Idempotency-Key `idempotencyKey`, found by its
 * SHA-256 as the service stores it, of key owner `scope` (`key:<id>` for an operator key,
 * an account's id) or of any; hashes as lower-case hex.
 */
export async function idempotencyRecords(idempotencyKey: string, scope?: string) {
  const { results } = await env.DB.prepare(
    `SELECT scope, lower(hex(key_hash)) AS key_hash, lower(hex(fingerprint)) AS fingerprint,
            pet_id, created_at
     FROM idempotency_records WHERE key_hash = unhex(?1) AND (?2 IS NULL OR scope = ?2)`,
  )
    .bind(await sha256Hex(idempotencyKey), scope ?? null)
    .all<
      Record<"pet_id" | "created_at", number> & Record<"scope" | "key_hash" | "fingerprint", string>
    >();
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
