// npm run usage:live: usage as a developer sees it, against the real `npm run dev`. An
// account signed up on the platform (a software passkey) makes keys there; the test times
// how long a response takes to reach the key's usage (GET /api/keys/{id}/usage, the figures
// of the key's page), idle and under load, then kills the server's whole process group with
// SIGKILL, starts it again on the same database and counts what was lost: nothing of an
// idle key, at most the last 10 s of a busy one (docs/platform.md, "Usage").
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { USAGE_WRITE_INTERVAL_MS } from "../../src/config.ts";
import { SoftwareAuthenticator } from "../platform/authenticator.ts";
import { type DevServer, startDevServer } from "./dev-server.ts";

const PORT = Number(process.env.USAGE_PORT ?? 8798);
const PLATFORM_PORT = Number(process.env.USAGE_PLATFORM_PORT ?? PORT + 1);
/** The contract's bound: every response on its key's page within 60 s with no further traffic. */
const PAGE_BOUND_MS = 60_000;
/** Time for a due write to reach D1 and the page to read it, on a machine shared with others. */
const WRITE_MS = 2_000;

let server: DevServer;
let session = "";
beforeAll(async () => {
  server = await startDevServer(PORT, false, PLATFORM_PORT);
  session = await signUp();
});
afterAll(() => server?.stop());

/** A JSON request to the platform, from its own pages (Origin), with the session. */
async function platform<T>(
  path: string,
  json?: unknown,
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await fetch(`${server.platform}${path}`, {
    method: json === undefined ? "GET" : "POST",
    headers: {
      Origin: server.platform,
      ...(json === undefined ? {} : { "Content-Type": "application/json" }),
      ...(session ? { Cookie: `__Host-session=${session}` } : {}),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: response.status, body: (await response.json()) as T, headers: response.headers };
}

/** A new account with a software passkey: its session token. */
async function signUp(): Promise<string> {
  const authenticator = await SoftwareAuthenticator.create(server.platform);
  const options = await platform<Parameters<SoftwareAuthenticator["register"]>[0]>(
    "/api/sign-up/options",
    { displayName: "Usage timing" },
  );
  expect(options.status).toBe(200);
  const done = await platform("/api/sign-up", await authenticator.register(options.body));
  expect(done.status).toBe(201);
  const token = /__Host-session=([^;]+)/.exec(done.headers.get("Set-Cookie") ?? "")?.[1];
  expect(token).toBeTruthy();
  return token as string;
}

/** A new key of the account: the key and its id. */
async function newKey(label: string): Promise<{ key: string; id: number }> {
  const created = await platform<{ key: string; id: number }>("/api/keys", {
    label,
    scopes: ["pets:read"],
  });
  expect(created.status).toBe(201);
  return created.body;
}

/** One response with `key`; its status. */
async function call(key: string): Promise<number> {
  const response = await fetch(`${server.base}/v1/pets?limit=1`, {
    headers: { Authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(15_000),
  });
  await response.arrayBuffer();
  return response.status;
}

/** The key's responses as its page counts them (the last 30 days). */
async function counted(id: number): Promise<number> {
  const usage = await platform<{ totals: Record<string, number> }>(`/api/keys/${id}/usage`);
  expect(usage.status).toBe(200);
  return Object.values(usage.body.totals).reduce((a, b) => a + b, 0);
}

/** Milliseconds from `since` until the key's page counts `n` responses; fails past the bound. */
async function untilCounted(id: number, n: number, since: number): Promise<number> {
  while ((await counted(id)) < n) {
    if (Date.now() - since > PAGE_BOUND_MS)
      throw new Error(`key ${id}: ${n} responses not counted within 60 s`);
    await sleep(100);
  }
  return Date.now() - since;
}

/**
 * Responses with `key` from `connections` loops until `stop` is aborted or the server is
 * gone: the instant each 200 arrived (filled as they come), and the end of the loops.
 */
function load(key: string, connections: number, stop: AbortSignal, pauseMs = 0) {
  const arrivals: number[] = [];
  const loop = async () => {
    while (!stop.aborted) {
      let status: number;
      try {
        status = await call(key);
      } catch {
        return; // the server was killed
      }
      expect(status).toBe(200);
      arrivals.push(Date.now());
      if (pauseMs > 0) await sleep(pauseMs);
    }
  };
  return { arrivals, done: Promise.all(Array.from({ length: connections }, loop)) };
}

const report = (what: string, figure: string) => console.log(`usage:live: ${what}: ${figure}`);

it("a response reaches its key's page within 60 s with no further traffic, idle and under load", async () => {
  const quiet = await newKey("idle");
  // The first response of a key is written right after it; one right after that waits for the interval.
  let at = Date.now();
  expect(await call(quiet.key)).toBe(200);
  const first = await untilCounted(quiet.id, 1, at);
  at = Date.now();
  expect(await call(quiet.key)).toBe(200);
  const held = await untilCounted(quiet.id, 2, at);
  report("idle: a key's first response on its page after", `${first} ms`);
  report("idle: a response within 10 s of the key's last write, on its page after", `${held} ms`);
  expect(held).toBeLessThanOrEqual(USAGE_WRITE_INTERVAL_MS + WRITE_MS);

  // Under load: 8 connections with one key for 20 s; another key's response in the middle.
  const busy = await newKey("busy");
  const other = await newKey("beside the load");
  const stop = new AbortController();
  const busyLoad = load(busy.key, 8, stop.signal);
  await sleep(8_000);
  at = Date.now();
  expect(await call(other.key)).toBe(200);
  expect(await call(other.key)).toBe(200);
  const beside = untilCounted(other.id, 2, at);
  // The busy key's responses that had arrived by an instant: when does its page count them all?
  const instant = Date.now();
  const n = busyLoad.arrivals.length;
  const lagMs = await untilCounted(busy.id, n, instant);
  const besideMs = await beside;
  await sleep(Math.max(0, instant + 12_000 - Date.now())); // the load goes on meanwhile
  stop.abort();
  await busyLoad.done;
  const all = busyLoad.arrivals;
  const rate = all.length / (((all.at(-1) ?? 0) - (all[0] ?? 0)) / 1000);
  report("under load: another key's response on its page after", `${besideMs} ms`);
  report(
    "under load: the busy key's responses up to an instant on its page after",
    `${lagMs} ms (${n} responses; ${rate.toFixed(0)} responses a second)`,
  );
  // A write then waits behind the load's queries: more room than idle, far within the 60 s.
  expect(besideMs).toBeLessThanOrEqual(USAGE_WRITE_INTERVAL_MS + 3 * WRITE_MS);
  expect(lagMs).toBeLessThanOrEqual(USAGE_WRITE_INTERVAL_MS + 3 * WRITE_MS);
}, 180_000);

it("kill -9 loses nothing of an idle key and at most the last 10 s of a busy one", async () => {
  const quiet = await newKey("idle before the kill");
  const steady = await newKey("busy at the kill");
  // The idle key: 31 responses, then more than 10 s of silence (the case).
  for (let i = 0; i < 31; i++) expect(await call(quiet.key)).toBe(200);
  // The busy key: a response every 100 ms on 2 connections, right up to the kill.
  const stop = new AbortController();
  const steadyLoad = load(steady.key, 2, stop.signal, 100);
  await sleep(USAGE_WRITE_INTERVAL_MS + 5_000);
  const killedAt = Date.now();
  await server.kill();
  stop.abort();
  await steadyLoad.done;
  const arrivals = steadyLoad.arrivals.filter((t) => t <= killedAt).sort((a, b) => a - b);

  server = await startDevServer(PORT, false, PLATFORM_PORT, server.persistTo);
  const idleCounted = await counted(quiet.id);
  const busyCounted = await counted(steady.id);
  const lost = arrivals.length - busyCounted;
  // Lost ones are the newest: how long before the kill the oldest of them came.
  const oldestLost = lost > 0 ? killedAt - (arrivals[busyCounted] ?? killedAt) : 0;
  report("kill -9: the idle key's responses counted", `${idleCounted} of 31`);
  report(
    "kill -9: the busy key's responses counted",
    `${busyCounted} of ${arrivals.length} (${lost} lost, the oldest ${oldestLost} ms before the kill)`,
  );
  expect(idleCounted).toBe(31);
  // Every response older than the interval (and a write's time) was written before the kill.
  const old = arrivals.filter((t) => t < killedAt - USAGE_WRITE_INTERVAL_MS - WRITE_MS).length;
  expect(busyCounted).toBeGreaterThanOrEqual(old);
  expect(busyCounted).toBeLessThanOrEqual(arrivals.length);
}, 240_000);
