// Shared test helpers: real keys in the real local D1, requests through the worker's fetch.
import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import {
  createKeyStatement,
  revokeKeyStatement,
  rotateKeyStatements,
} from "../scripts/key-statements.ts";
import { type AppOptions, createApp } from "../src/app.ts";
import { displayPrefix, hashApiKey, issueApiKey, LOCAL_KEY_TAG_SECRET } from "../src/auth/keys.ts";
import type { VerifyContext } from "../src/auth/verifier.ts";
import { toListedKey } from "../src/db/listed-keys.ts";
import { insertPet as insertPetRow } from "../src/db/pets.ts";
import { base64url } from "../src/encoding.ts";
import type { ErrorBody } from "../src/errors.ts";
import { OPERATIONS, type Operation } from "../src/operations/index.ts";
import type { NewPet, Pet } from "../src/pets/schemas.ts";
import type { Scope } from "../src/scopes.ts";
import { assertConforms, doc, exampleBody } from "./support/conformance.ts";

export const BASE = "https://petstore.test";

/**
 * Every response header of the contract a page on another origin may read, in the order
 * Access-Control-Expose-Headers lists them, by name (written out, so a change to src/ fails).
 */
export const CONTRACT_EXPOSED_HEADERS = [
  "Allow",
  "Deprecation",
  "ETag",
  "Idempotent-Replayed",
  "Link",
  "Location",
  "Retry-After",
  "Sunset",
  "WWW-Authenticate",
  "x-d1-bookmark",
  "X-Request-Id",
];

/**
 * Issues a fresh API key, tagged with the local tag secret, into D1 with the statement of
 * `npm run keys -- create`. No scopes means every scope; `expiresAt` in unix seconds.
 */
export async function createKey(
  label = "test",
  options: { scopes?: Scope[]; expiresAt?: number; now?: number } = {},
): Promise<{ key: string; id: number }> {
  const key = await issueApiKey(LOCAL_KEY_TAG_SECRET);
  const row = await env.DB.prepare(
    createKeyStatement({
      keyHash: await hashApiKey(key),
      prefix: displayPrefix(key),
      label,
      now: options.now ?? Math.floor(Date.now() / 1000),
      ...(options.scopes ? { scopes: options.scopes } : {}),
      ...(options.expiresAt !== undefined ? { expiresAt: options.expiresAt } : {}),
    }),
  ).first<{ id: number }>();
  if (!row) throw new Error("the create statement returned no id");
  return { key, id: row.id };
}

/**
 * A developer platform account (the row its sign-up stores) owning the keys `keyIds`, as
 * if it had created them there; its id, `acct_` and 22 base64url characters.
 */
export async function createAccount(keyIds: number[] = []): Promise<{ accountId: string }> {
  const accountId = `acct_${base64url(crypto.getRandomValues(new Uint8Array(16)))}`;
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO accounts (id, display_name, created_at) VALUES (?1, 'test account', unixepoch())",
    ).bind(accountId),
    ...keyIds.map((id) =>
      env.DB.prepare("UPDATE api_keys SET account_id = ?1 WHERE id = ?2").bind(accountId, id),
    ),
  ]);
  return { accountId };
}

/** Revokes a key with the statement of `npm run keys -- revoke`; false if none was active. */
export async function revokeKey(id: number, now = Math.floor(Date.now() / 1000)): Promise<boolean> {
  const { results } = await env.DB.prepare(revokeKeyStatement(id, now)).all();
  return results.length === 1;
}

/** Rotates key `oldId` as `npm run keys -- rotate` does; returns the new key and both statements' rows. */
export async function rotateKey(
  oldId: number,
  options: { now?: number; graceSeconds: number; expiresAt?: number },
) {
  const key = await unknownKey();
  const statements = rotateKeyStatements({
    oldId,
    keyHash: await hashApiKey(key),
    prefix: displayPrefix(key),
    ...options,
  });
  // `wrangler d1 execute --command "A; B"` runs the two as one batch, in order.
  const [inserted, expired] = await env.DB.batch(statements.map((sql) => env.DB.prepare(sql)));
  const listed = (result?: D1Result) =>
    (result?.results ?? []).map((r) => toListedKey(r as Record<string, unknown>));
  return { key, created: listed(inserted), old: listed(expired) };
}

/** A well-formed key (valid tag) that no database holds. */
export function unknownKey(): Promise<string> {
  return issueApiKey(LOCAL_KEY_TAG_SECRET);
}

/**
 * What the auth middleware hands the verifier, for tests that call one directly; its
 * afterResponse starts the work at once and keeps it in `pending` (await it).
 */
export function verifyContext(
  appEnv: Env = env,
  clientAddress = "192.0.2.1",
): VerifyContext & { pending: Promise<unknown>[] } {
  const pending: Promise<unknown>[] = [];
  return {
    env: appEnv,
    clientAddress,
    origin: BASE,
    afterResponse: (work) => {
      pending.push(work());
    },
    pending,
  };
}

/** A D1 binding whose every method throws `message` at once. */
export function throwingDb(message: string): D1Database {
  const fail = () => {
    throw new Error(message);
  };
  return { prepare: fail, batch: fail, exec: fail, dump: fail, withSession: fail } as never;
}

export interface CallOptions {
  method?: string;
  key?: string | null;
  headers?: Record<string, string>;
  /** An object is sent as JSON with Content-Type: application/json. */
  json?: unknown;
  body?: BodyInit;
}

/**
 * The deployed worker's own fetch. Every response is checked against the OpenAPI document
 * (test/support/conformance.ts): a status, header or body it does not describe fails.
 */
export const workerFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  // assertConforms reads only the method and URL of the (consumed) request.
  const response = await exports.default.fetch(request);
  await assertConforms(request, response);
  return response;
};

/** A request through the worker's fetch (`workerFetch`), checked against the document. */
export function call(path: string, options: CallOptions = {}): Promise<Response> {
  return workerFetch(makeRequest(path, options));
}

/** The worker's app factory, for tests that inject a clock, logger, verifier or bindings. */
export function createCheckedApp(options: AppOptions = {}) {
  const app = createApp(options);
  return {
    async fetch(
      request: Request,
      appEnv: Env = env,
      ctx: ExecutionContext = createExecutionContext(),
    ): Promise<Response> {
      const response = await app.fetch(request, appEnv, ctx);
      await assertConforms(request, response);
      return response;
    },
  };
}

export function makeRequest(path: string, options: CallOptions = {}): Request {
  const headers = new Headers(options.headers);
  if (options.key) headers.set("Authorization", `Bearer ${options.key}`);
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  }
  return new Request(`${BASE}${path}`, { method: options.method ?? "GET", headers, body });
}

/** Asserts an Error response: status, all three fields, JSON media type, request id. */
export async function expectError(
  response: Response,
  status: number,
  code: string,
  messageIncludes?: string | RegExp,
): Promise<ErrorBody> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(response.headers.get("X-Request-Id")).toBeTruthy();
  const body = JSON.parse(text) as ErrorBody;
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  expect(body.message).toEqual(expect.stringMatching(/./));
  if (messageIncludes !== undefined) expect(body.message).toMatch(messageIncludes);
  expect(text).not.toMatch(/\bat .+:\d+:\d+|SQLITE|D1_ERROR|env\.DB/);
  return body;
}

/** Asserts getPet's deprecation headers as literal values (a change in src/config.ts fails). */
export function expectDeprecationHeaders(response: { headers: Headers }): void {
  // 2026-11-01T00:00:00Z, the documented deprecation date.
  expect(response.headers.get("Deprecation")).toBe("@1793491200");
  expect(response.headers.get("Sunset")).toBe("Thu, 05 Dec 2030 00:00:00 GMT");
  const link = response.headers.get("Link") ?? "";
  expect(link).toContain('</v1/pets>; rel="successor-version"');
  expect(link).toMatch(/<\/v1\/docs[^>]*>; rel="deprecation"/);
}

/**
 * A pet of the test's own, stored by the store's own insert (as a create writes it, its
 * name's digest included) without a request: a test that may change or remove it makes its own.
 */
export async function insertPet(pet: Partial<NewPet> = {}): Promise<Pet> {
  const made = await insertPetRow(
    env.DB,
    { name: "Walk", categoryId: 1, status: "available", ...pet },
    Math.floor(Date.now() / 1000),
  );
  return made.pet;
}

export async function createPetVia(key: string, pet: Record<string, unknown>) {
  const response = await call("/v1/pets", { method: "POST", key, json: pet });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Pet;
}

/** The Allow header of a path of the table (`/pets/{petId}`): its methods, HEAD after GET, OPTIONS. */
export function allowOf(path: string): string {
  const methods = OPERATIONS.filter((op) => op.path === path).flatMap((op) =>
    op.method === "get" ? ["GET", "HEAD"] : [op.method.toUpperCase()],
  );
  return [...methods, "OPTIONS"].join(", ");
}

/**
 * A method of HTTP (RFC 9110) that the table gives `path` none of, for 405s: found, never
 * assumed, so a new operation on the path moves the test to another method.
 */
export function methodNotOn(path: string): string {
  const allowed = allowOf(path).split(", ");
  const method = ["PUT", "PATCH", "DELETE", "POST", "GET"].find((m) => !allowed.includes(m));
  if (!method) throw new Error(`${path} has every method`);
  return method;
}

/**
 * A request `op` responds with its success (501 for one that cannot succeed yet): its path
 * with every parameter a pet of its own (made for this request, which may change or remove
 * it), and a body from the examples its document schema gives.
 */
export async function exampleRequest(op: Operation): Promise<
  CallOptions & {
    path: string;
    allowed: number;
  }
> {
  const documented = doc.paths[op.path]?.[op.method];
  const id = op.path.includes("{") ? (await insertPet()).id : 0;
  return {
    method: op.method.toUpperCase(),
    path: `/v1${op.path.replaceAll(/\{\w+\}/g, String(id))}`,
    ...(documented?.requestBody ? { json: exampleBody(documented) } : {}),
    allowed: op.success?.status ?? 501,
  };
}
