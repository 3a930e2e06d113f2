// Shared test helpers: real keys in the real local D1, requests through the worker's fetch.
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { displayPrefix, generateApiKey, hashApiKey } from "../src/auth/keys.ts";
import { insertApiKey } from "../src/db/api-keys.ts";
import type { ErrorBody } from "../src/errors.ts";

export const BASE = "https://petstore.test";

/** Issues a fresh API key straight into D1, as `npm run keys -- create` would. */
export async function createKey(label = "test"): Promise<{ key: string; id: number }> {
  const key = generateApiKey();
  const id = await insertApiKey(env.DB, {
    keyHash: await hashApiKey(key),
    prefix: displayPrefix(key),
    label,
    createdAt: Math.floor(Date.now() / 1000),
  });
  return { key, id };
}

export interface CallOptions {
  method?: string;
  key?: string | null;
  headers?: Record<string, string>;
  /** An object is sent as JSON with Content-Type: application/json. */
  json?: unknown;
  body?: BodyInit;
}

/** A request through the deployed worker's own fetch handler. */
export function call(path: string, options: CallOptions = {}): Promise<Response> {
  return exports.default.fetch(makeRequest(path, options));
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

/** Asserts an Error answer: status, all three fields, JSON media type, request id. */
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
  expect(typeof body.message).toBe("string");
  expect(body.message.length).toBeGreaterThan(0);
  if (messageIncludes !== undefined) expect(body.message).toMatch(messageIncludes);
  expect(text).not.toMatch(/\bat .+:\d+:\d+|SQLITE|D1_ERROR|env\.DB/);
  return body;
}

export async function createPetVia(key: string, pet: Record<string, unknown>) {
  const response = await call("/v1/pets", { method: "POST", key, json: pet });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as {
    id: number;
    name: string;
    categoryId: number;
    status: string;
  };
}
