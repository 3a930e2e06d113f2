// Helpers of the platform's tests: requests through the platform worker's own fetch (or
// its app factory with an injected clock), accounts made with the software authenticator.
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { PlatformAppOptions } from "../../platform/src/app.ts";
import { createPlatformApp } from "../../platform/src/app.ts";
import worker from "../../platform/src/index.ts";
import type { Forgery } from "./authenticator.ts";
import { SoftwareAuthenticator } from "./authenticator.ts";

/** The platform's own origin (platform/wrangler.toml's PLATFORM_ORIGIN). */
export const ORIGIN = env.PLATFORM_ORIGIN;

/**
 * A client address no other test uses: each address has its own sign-up budget, and an
 * IPv6 address counts by its /64, so the random part is the /64's.
 */
export function freshAddress(): string {
  const hex = Array.from(crypto.getRandomValues(new Uint16Array(3)), (n) => n.toString(16));
  return `2001:db8:${hex.slice(0, 2).join(":")}::${hex[2]}`;
}

export interface Call {
  method?: string;
  /** Sent as JSON with Content-Type: application/json. */
  json?: unknown;
  body?: BodyInit;
  /** The session token (the cookie's value). */
  session?: string;
  /** Origin header; a state change sends the platform's own unless this says otherwise (null: none). */
  origin?: string | null;
  headers?: Record<string, string>;
  /** CF-Connecting-IP (default: a fresh address). */
  address?: string;
}

function platformRequest(path: string, call: Call = {}): Request {
  const method = call.method ?? (call.json !== undefined || call.body ? "POST" : "GET");
  const headers = new Headers(call.headers);
  if (call.json !== undefined && !headers.has("Content-Type")) {
    headers.set("Content-Type", "application/json");
  }
  const origin = call.origin === undefined ? (method === "GET" ? null : ORIGIN) : call.origin;
  if (origin !== null) headers.set("Origin", origin);
  if (call.session) headers.set("Cookie", `__Host-session=${call.session}`);
  headers.set("CF-Connecting-IP", call.address ?? freshAddress());
  const body = call.json !== undefined ? JSON.stringify(call.json) : call.body;
  return new Request(`${ORIGIN}${path}`, { method, headers, body, redirect: "manual" });
}

export type Send = (path: string, call?: Call) => Promise<Response>;

/** The platform worker's own fetch. */
export const send: Send = (path, call) => exports.default.fetch(platformRequest(path, call));

/** The platform's app factory with options (a clock), and `bindings` over env: what `send` reaches, built here. */
export function platformWith(options: PlatformAppOptions, bindings: Partial<Env> = {}): Send {
  const app = createPlatformApp(options);
  return async (path, call) =>
    app.fetch(platformRequest(path, call), { ...env, ...bindings }, createExecutionContext());
}

/** A clock the test moves: milliseconds since the epoch. */
export function movableClock(start = Date.now()) {
  const clock = () => clock.now;
  clock.now = start;
  clock.advance = (seconds: number) => {
    clock.now += seconds * 1000;
  };
  return clock;
}

/** The session token a response sets (at most one), or undefined; and the cookie's raw header. */
export function setSession(response: Response): { token: string | undefined; header: string } {
  const cookies = response.headers.getSetCookie().filter((c) => c.startsWith("__Host-session="));
  expect(cookies.length).toBeLessThanOrEqual(1);
  const header = cookies[0] ?? "";
  const token = /^__Host-session=([^;]*)/.exec(header)?.[1];
  return { token: token || undefined, header };
}

export interface SignedUp {
  authenticator: SoftwareAuthenticator;
  session: string;
  account: { id: string; displayName: string; createdAt: string };
}

/** A new account: sign-up with a new software authenticator; its session. */
export async function signUp(
  options: {
    displayName?: string;
    fetch?: Send;
    address?: string;
    forgery?: Forgery;
    /** A session token the browser already holds. */
    session?: string;
    /** The authenticator that makes the passkey (default: a new one). */
    authenticator?: SoftwareAuthenticator;
  } = {},
): Promise<SignedUp> {
  const fetch = options.fetch ?? send;
  const address = options.address ?? freshAddress();
  const authenticator = options.authenticator ?? (await SoftwareAuthenticator.create(ORIGIN));
  const begun = await fetch("/api/sign-up/options", {
    json: { displayName: options.displayName ?? "Ada's shop" },
    address,
  });
  expect(begun.status, await begun.clone().text()).toBe(200);
  const credential = await authenticator.register(await begun.json(), options.forgery);
  const done = await fetch("/api/sign-up", {
    json: credential,
    address,
    ...(options.session ? { session: options.session } : {}),
  });
  expect(done.status, await done.clone().text()).toBe(201);
  const { token } = setSession(done);
  if (!token) throw new Error("sign-up set no session cookie");
  return { authenticator, session: token, account: await done.json() };
}

/** A sign-in ceremony with `authenticator`; the answer to its last step. */
export async function signIn(
  authenticator: SoftwareAuthenticator,
  options: { fetch?: Send; session?: string; forgery?: Forgery; address?: string } = {},
): Promise<Response> {
  const fetch = options.fetch ?? send;
  const address = options.address ?? freshAddress();
  const begun = await fetch("/api/sign-in/options", { json: {}, address });
  expect(begun.status, await begun.clone().text()).toBe(200);
  const assertion = await authenticator.authenticate(await begun.json(), options.forgery);
  return fetch("/api/sign-in", {
    json: assertion,
    address,
    ...(options.session ? { session: options.session } : {}),
  });
}

/** Asserts a JSON Error response: status, code, all three fields, and no internals. */
export async function expectError(
  response: Response,
  status: number,
  code: string,
  messageIncludes?: string | RegExp,
): Promise<{ code: string; message: string; status: number; details?: unknown[] }> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(response.headers.get("X-Request-Id")).toBeTruthy();
  expect(response.headers.get("Cache-Control")).toBe("no-store");
  const body = JSON.parse(text);
  expect(body).toMatchObject({ code, status, message: expect.stringMatching(/./) });
  if (messageIncludes !== undefined) expect(body.message).toMatch(messageIncludes);
  expect(text).not.toMatch(/\bat .+:\d+:\d+|SQLITE|D1_ERROR|env\.DB/);
  return body;
}

/** A row count of `table` where `where` holds (bound `params`). */
export async function count(table: string, where: string, ...params: unknown[]): Promise<number> {
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`)
    .bind(...params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** Adds a passkey made by `authenticator` to the signed-in account; the answer. */
export async function addPasskey(
  session: string,
  authenticator: SoftwareAuthenticator,
  fetch: Send = send,
): Promise<Response> {
  const begun = await fetch("/api/passkeys/options", { json: {}, session });
  expect(begun.status, await begun.clone().text()).toBe(200);
  return fetch("/api/passkeys", {
    json: await authenticator.register(await begun.json()),
    session,
  });
}

/** Runs the platform's hourly Cron Trigger (platform/wrangler.toml) and waits for its work. */
export async function runCron(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: Date.now(), cron: "41 * * * *" }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}
