// API keys with the very statements `npm run keys` sends (the CLI process itself is
// exercised by `npm run e2e`, which .ci/run runs): revocation, keys never logged, stored
// and looked up only as their SHA-256.
import { env } from "cloudflare:workers";
import { afterEach, expect, it, vi } from "vitest";
import { revokeKeyStatement, sqlString } from "../scripts/key-statements.ts";
import { hashApiKey } from "../src/auth/keys.ts";
import { createApiKeyVerifier, type Verification } from "../src/auth/verifier.ts";
import { parseKeyId } from "../src/db/listed-keys.ts";
import type { LogLine } from "../src/log.ts";
import {
  type CallOptions,
  call,
  createCheckedApp,
  createKey,
  createPetVia,
  expectError,
  makeRequest,
  revokeKey,
  unknownKey,
  verifyContext,
} from "./helpers.ts";
import { NO_EDGE_CACHE } from "./support/instrumented-app.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const UNKNOWN = { ok: false, reason: "unknown" };

/** The key id a verification accepted, or null when it refused the key. */
function keyIdOf(verification: Verification): number | null {
  return verification.ok ? verification.key.id : null;
}

/** A D1 stand-in (its sessions are itself) whose only query, the key lookup, finds `found`. */
function fakeDb(found: { id: number; key_hash: string } | null) {
  const row = found && {
    scopes: "pets:read pets:write orders:read",
    expires_at: null,
    revoked: 0,
    ...found,
  };
  const queries: unknown[][] = [];
  const db = {
    prepare: (sql: string) => ({
      bind: (...args: unknown[]) => {
        queries.push([sql, ...args]);
        return { first: async () => row };
      },
    }),
    withSession: () => db,
  };
  return { env: { ...env, DB: db as unknown as D1Database }, queries };
}

it("keys revoke returns the id once, then nothing; it takes effect at once where the key is not cached", async () => {
  const a = await createKey("revoke-a");
  const b = await createKey("revoke-b");
  const first = await env.DB.prepare(revokeKeyStatement(a.id, 1_800_000_000)).all();
  const again = await env.DB.prepare(revokeKeyStatement(a.id, 1_800_000_001)).all();
  expect(first.results).toEqual([{ id: a.id }]);
  expect(again.results).toEqual([]);
  const revokedAt = env.DB.prepare("SELECT revoked_at FROM api_keys WHERE id = ?1").bind(a.id);
  expect(await revokedAt.first("revoked_at")).toBe(1_800_000_000); // the first revocation's
  // Where the key is cached, its TTL bounds revocation: test/edge-trips.test.ts.
  const refused = await call("/v1/pets", { key: a.key });
  await expectError(refused, 401, "unauthorized", /invalid or revoked/);
  expect(keyIdOf(await createApiKeyVerifier(Date.now).verify(b.key, verifyContext()))).toBe(b.id);
});

it("parseKeyId takes decimal ids only and sqlString doubles quotes and refuses NUL", () => {
  expect(parseKeyId("42")).toBe(42);
  for (const text of [
    undefined,
    "",
    "0",
    "01",
    "1 OR 1=1",
    "1;--",
    "1e3",
    "-1",
    "12345678901234567",
  ]) {
    expect(parseKeyId(text)).toBeUndefined();
  }
  expect(sqlString("it's")).toBe("'it''s'");
  expect(() => sqlString("a\u0000b")).toThrow(/NUL/);
});

/** A verifier over `fakeDb`s only: no Cache API tier, so every miss reaches the fake. */
const fromD1Only = () => createApiKeyVerifier(Date.now, { cache: () => NO_EDGE_CACHE });

it("a key is stored as the SHA-256 of the whole key, and only the row holding that digest accepts it", async () => {
  const { key, id } = await createKey("digest");
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)),
  );
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  const row = env.DB.prepare("SELECT * FROM api_keys WHERE id = ?1").bind(id);
  const stored = await row.first<Record<string, unknown>>();
  expect(stored?.key_hash).toBe(hex);
  expect(JSON.stringify(stored)).not.toContain(key.slice(10));
  expect(keyIdOf(await fromD1Only().verify(key, verifyContext()))).toBe(id);
  // The row now holds another digest, one character apart: the key no longer finds it.
  const near = `${hex.slice(0, -1)}${hex.endsWith("0") ? "1" : "0"}`;
  await env.DB.prepare("UPDATE api_keys SET key_hash = ?2 WHERE id = ?1").bind(id, near).run();
  expect(await fromD1Only().verify(key, verifyContext())).toEqual(UNKNOWN);
});

it("the verifier looks the key up by its SHA-256 hash and never sends the key to the database", async () => {
  const key = await unknownKey();
  const { env: fake, queries } = fakeDb(null);
  expect(await fromD1Only().verify(key, verifyContext(fake))).toEqual(UNKNOWN);
  // The replica, then (a valid tag: the key may be new) the primary.
  expect(queries).toHaveLength(2);
  for (const query of queries) expect(query.slice(1)).toEqual([await hashApiKey(key)]);
  expect(JSON.stringify(queries)).not.toContain(key);
});

it("logs never contain the key or its hash, across 200/400/401/404/429/500/503 responses", async () => {
  const { key } = await createKey("logged");
  const revoked = await createKey("logged-revoked");
  await revokeKey(revoked.id);
  const pet = await createPetVia(key, { name: "Logged", categoryId: 1 });
  const secrets = [key, revoked.key];
  const hashes = await Promise.all(secrets.map(hashApiKey));

  const lines: LogLine[] = [];
  const app = createCheckedApp({ log: (line) => lines.push(line) });
  const run = async (path: string, options: CallOptions, appEnv: Env = env) => {
    const response = await app.fetch(makeRequest(path, options), appEnv);
    await response.body?.cancel();
    return response.status;
  };
  const limiter = (limit: RateLimit["limit"]): Env => ({ ...env, RATE_LIMITER: { limit } });
  const limited = limiter(async () => ({ success: false }));
  const broken = limiter(async () => {
    throw new TypeError("rate limiter exploded");
  });
  const fail = () => {
    throw new Error("D1_ERROR: Network connection lost.");
  };
  const dbDown: Env = {
    ...env,
    DB: { prepare: fail, withSession: () => ({ prepare: fail }) } as never,
  };

  const statuses = [
    await run("/v1/pets?limit=1", { key }),
    await run(`/v1/pets/${pet.id}`, { key }),
    await run("/v1/pets", { method: "POST", key, json: { name: "Logged 2", categoryId: 1 } }),
    await run("/v1/pets?limit=0", { key }),
    await run("/v1/pets", { method: "POST", key, json: { name: "", categoryId: 1 } }),
    await run("/v1/pets", { key: `${key}x` }),
    await run("/v1/pets", { key: revoked.key }),
    await run("/v1/pets", { headers: { Authorization: `Basic ${btoa(`u:${key}`)}` } }),
    await run("/v1/pets/999999999", { key }),
    await run("/v1/nowhere", { key }),
    await run("/v1/pets", { key }, limited),
    await run(`/v1/pets/${pet.id}`, { key }, limited),
    await run("/v1/pets", { key }, broken),
    await run("/v1/pets", { key: await unknownKey() }, dbDown),
  ];
  expect(statuses).toEqual([200, 200, 201, 400, 400, 401, 401, 401, 404, 404, 429, 429, 500, 503]);
  // One request line per response, plus the error lines of the 500 and the 503.
  expect(lines.filter((l) => l.msg === "request")).toHaveLength(statuses.length);
  expect(lines.filter((l) => l.msg === "unhandled error")).toHaveLength(2);
  expect(lines.map((l) => l.status).filter((s) => s !== undefined)).toEqual(statuses);

  const text = JSON.stringify(lines);
  for (const secret of [...secrets, ...hashes]) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice(-16));
  }
  expect(text).not.toContain(btoa(`u:${key}`));
  expect(text).not.toMatch(/psk_[A-Za-z0-9_-]{8}/);
  expect(text).not.toMatch(/authorization|bearer/i);
});
