// Key management with the statements `npm run keys` sends (scripts/key-statements.ts):
// create, rotate, `list --json`. "Last used" is test/key-use.test.ts.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  createKeyStatement,
  LIST_KEYS_STATEMENT,
  revokeKeyStatement,
  toOwnedKey,
} from "../scripts/key-statements.ts";
import { displayPrefix, hashApiKey } from "../src/auth/keys.ts";
import { findApiKeyByHash } from "../src/db/api-keys.ts";
import { toListedKey } from "../src/db/listed-keys.ts";
import {
  createAccount,
  createCheckedApp,
  createKey,
  expectError,
  makeRequest,
  rotateKey as rotate,
  unknownKey,
} from "./helpers.ts";

const INVALID = 'Bearer realm="petstore", error="invalid_token"';

/** One column of key `id`'s row. */
async function keyColumn(id: number, column: "expires_at" | "last_used_at"): Promise<unknown> {
  return env.DB.prepare(`SELECT ${column} FROM api_keys WHERE id = ?1`).bind(id).first(column);
}

/** GET /v1/pets with `key` through an app at a fixed instant (unix seconds). */
async function listAt(seconds: number, key: string): Promise<Response> {
  const app = createCheckedApp({ clock: () => seconds * 1000, log: () => {} });
  return app.fetch(makeRequest("/v1/pets?limit=1", { key }));
}

it("keys create stores the hash, not the key, and returns the row as list --json shows it", async () => {
  const key = await unknownKey();
  const label = "O'Brien'); DROP TABLE api_keys; --"; // kept literally
  const row = await env.DB.prepare(
    createKeyStatement({
      keyHash: await hashApiKey(key),
      prefix: displayPrefix(key),
      label,
      now: 1_900_000_000,
      scopes: ["orders:read", "pets:read", "pets:read"],
      expiresAt: 1_900_000_005,
    }),
  ).first<Record<string, unknown>>();
  const created = toListedKey(row ?? {});
  expect(created).toEqual({
    id: expect.any(Number),
    prefix: displayPrefix(key),
    label,
    scopes: ["pets:read", "orders:read"],
    createdAt: "2030-03-17T17:46:40.000Z",
    expiresAt: "2030-03-17T17:46:45.000Z",
    lastUsedAt: null,
    revokedAt: null,
  });
  const stored = env.DB.prepare("SELECT * FROM api_keys WHERE id = ?1").bind(created.id);
  expect(await stored.first()).toMatchObject({ key_hash: await hashApiKey(key), label });
  expect(JSON.stringify(await stored.first())).not.toContain(key.slice(4));
  await env.DB.prepare(revokeKeyStatement(created.id, 1_900_000_001)).run();
  const platformKey = await createKey("made on the platform");
  const { accountId } = await createAccount([platformKey.id]);
  const { results } = await env.DB.prepare(LIST_KEYS_STATEMENT).all<Record<string, unknown>>();
  const listed = results.map(toOwnedKey);
  const revokedAt = "2030-03-17T17:46:41.000Z";
  const operatorKey = listed.find((k) => k.id === created.id);
  expect(operatorKey).toEqual({ ...created, revokedAt, account: "operator" });
  // In this order, as `list --json` prints them.
  expect(Object.keys(operatorKey ?? {}).join()).toBe(
    "id,prefix,label,scopes,createdAt,expiresAt,lastUsedAt,revokedAt,account",
  );
  expect(listed.find((k) => k.id === platformKey.id)?.account).toBe(accountId);
  expect(listed.map((k) => k.id)).toEqual([...listed.map((k) => k.id)].sort((a, b) => a - b));
});

it("keys create counts --expires-in from the moment the database stores the key; no --scope is every scope", async () => {
  const key = await unknownKey();
  const before = Math.floor(Date.now() / 1000);
  const row = await env.DB.prepare(
    createKeyStatement({
      keyHash: await hashApiKey(key),
      prefix: displayPrefix(key),
      label: "expires-in",
      expiresInSeconds: 5,
    }),
  ).first<{ created_at: number; expires_at: number; scopes: string }>();
  expect(row?.scopes).toBe("pets:read pets:write orders:read");
  const after = Math.ceil(Date.now() / 1000);
  expect(row?.created_at).toBeGreaterThanOrEqual(before);
  expect(row?.created_at).toBeLessThanOrEqual(after);
  expect((row?.expires_at ?? 0) - (row?.created_at ?? 0)).toBe(5);
});

describe("rotate (the statements of `keys rotate`)", () => {
  const NOW = 1_950_000_000;
  const DAY = 86_400;

  it("issues a key with the same label and scopes; the old one expires after the grace period", async () => {
    const old = await createKey("partner-acme", { scopes: ["pets:read", "orders:read"] });
    const { key, created, old: expired } = await rotate(old.id, { now: NOW, graceSeconds: DAY });
    const scopes = ["pets:read", "orders:read"];
    expect(created).toMatchObject([
      { label: "partner-acme", scopes, expiresAt: null, revokedAt: null },
    ]);
    expect(expired).toMatchObject([
      { id: old.id, expiresAt: new Date((NOW + DAY) * 1000).toISOString() },
    ]);
    // The old key names its successor, as the platform's rotation does.
    const successor = await env.DB.prepare("SELECT replaced_by FROM api_keys WHERE id = ?1")
      .bind(old.id)
      .first<{ replaced_by: number | null }>();
    expect(successor?.replaced_by).toBe(created[0]?.id);
    // During the grace period both keys work; from its end only the new one.
    for (const k of [old.key, key]) expect((await listAt(NOW + 3600, k)).status).toBe(200);
    const late = await listAt(NOW + DAY, old.key);
    await expectError(late, 401, "unauthorized", /expired/);
    expect(late.headers.get("WWW-Authenticate")).toBe(INVALID);
    expect((await listAt(NOW + DAY, key)).status).toBe(200);
  });

  it("with --grace 0s refuses the old key at once and the new key works at once", async () => {
    const now = Math.floor(Date.now() / 1000);
    const old = await createKey("rotate-now", { scopes: ["pets:write"] });
    const { key, created } = await rotate(old.id, { graceSeconds: 0 }); // the database's clock
    expect(created[0]?.scopes).toEqual(["pets:write"]);
    const refused = await listAt(now, old.key);
    await expectError(refused, 401, "unauthorized", /expired/);
    const app = createCheckedApp({ clock: () => now * 1000, log: () => {} });
    const write = await app.fetch(
      makeRequest("/v1/pets", { method: "POST", key, json: { name: "Rotated", categoryId: 1 } }),
    );
    expect(write.status).toBe(201);
    await write.body?.cancel();
  });

  it("keeps an earlier expiry, and the new key may get its own", async () => {
    const old = await createKey("rotate-early", { expiresAt: NOW + 60 });
    const { created, old: expired } = await rotate(old.id, {
      now: NOW,
      graceSeconds: 3600,
      expiresAt: NOW + 90 * DAY,
    });
    expect(expired[0]?.expiresAt).toBe(new Date((NOW + 60) * 1000).toISOString());
    expect(created[0]?.expiresAt).toBe(new Date((NOW + 90 * DAY) * 1000).toISOString());
  });

  it("keeps the old key's owner: its account, or for an operator key the chain's first key", async () => {
    const owner = async (key: string) =>
      (await findApiKeyByHash(env.DB, await hashApiKey(key)))?.owner;
    const first = await createKey("chain");
    const second = await rotate(first.id, { now: NOW, graceSeconds: DAY });
    const third = await rotate(second.created[0]?.id ?? 0, { now: NOW, graceSeconds: DAY });
    for (const k of [first.key, second.key, third.key])
      expect(await owner(k)).toBe(`key:${first.id}`);
    expect(await owner((await createKey("another chain")).key)).not.toBe(`key:${first.id}`);

    const platform = await createKey("account key");
    const { accountId } = await createAccount([platform.id]);
    const successor = await rotate(platform.id, { now: NOW, graceSeconds: DAY });
    expect(await owner(successor.key)).toBe(accountId);
    // `keys list` shows the successor under the account, not as the operator's.
    const { results } = await env.DB.prepare(LIST_KEYS_STATEMENT).all<Record<string, unknown>>();
    const listed = results.map(toOwnedKey).find((k) => k.id === successor.created[0]?.id);
    expect(listed?.account).toBe(accountId);
  });

  it("does nothing for a revoked, an expired or an unknown key", async () => {
    const revoked = await createKey("rotate-revoked");
    await env.DB.prepare(revokeKeyStatement(revoked.id, NOW - 10)).run();
    const expired = await createKey("rotate-expired", { expiresAt: NOW });
    const count = "SELECT COUNT(*) AS n FROM api_keys";
    const before = await env.DB.prepare(count).first("n");
    for (const id of [revoked.id, expired.id, 987_654_321]) {
      const result = await rotate(id, { now: NOW, graceSeconds: 3600 });
      expect(result.created).toEqual([]);
      expect(result.old).toEqual([]);
    }
    expect(await env.DB.prepare(count).first("n")).toBe(before);
    expect(await keyColumn(expired.id, "expires_at")).toBe(NOW);
  });
});
