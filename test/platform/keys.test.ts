// Self-service keys: create (the key once, with a ready curl line), list, read, rotate
// with a grace period, revoke; at most 10 active keys per account, enforced atomically.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashApiKey, keyFormat, tagSecrets } from "../../src/auth/keys.ts";
import { count, expectError, movableClock, platformWith, send, signUp } from "./helpers.ts";

interface ListedKey {
  id: number;
  prefix: string;
  label: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  replacedBy: number | null;
  audience: "/mcp" | null;
}
type CreatedKey = ListedKey & { key: string; curl: string };

async function createKey(session: string, body: Record<string, unknown> = {}) {
  const response = await send("/api/keys", {
    json: { label: "storefront", scopes: ["pets:read"], ...body },
    session,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return { response, key: await response.json<CreatedKey>() };
}

const seconds = (iso: string | null) => (iso === null ? null : Date.parse(iso) / 1000);

describe("creating a key", () => {
  it("returns the whole key once, with a curl line for the API, and stores only its hash for the account", async () => {
    const { session, account } = await signUp();
    const { response, key } = await createKey(session, {
      label: "Storefront <web> ✓",
      scopes: ["pets:read", "pets:read"],
    });
    expect(response.headers.get("Location")).toBe(`/api/keys/${key.id}`);
    expect(key).toEqual({
      id: expect.any(Number),
      prefix: key.key.slice(0, 10),
      label: "Storefront <web> ✓",
      scopes: ["pets:read"],
      createdAt: expect.stringMatching(/Z$/),
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      replacedBy: null,
      // Where the API takes it: everywhere (an MCP client's grant says "/mcp").
      audience: null,
      key: expect.stringMatching(/^psk_[A-Za-z0-9_-]{65}$/),
      curl: `curl -H "Authorization: Bearer ${key.key}" http://localhost:8787/v1/pets`,
    });
    // An ordinary key of this environment: the API's own format check accepts its tag.
    expect(await keyFormat(key.key, tagSecrets(env), "local")).toBe("tagged");
    const row = await env.DB.prepare(
      "SELECT key_hash, account_id, scopes FROM api_keys WHERE id = ?1",
    )
      .bind(key.id)
      .first();
    expect(row).toEqual({
      key_hash: await hashApiKey(key.key),
      account_id: account.id,
      scopes: "pets:read",
    });
    expect(await count("api_keys", "key_hash = ?1", key.key)).toBe(0);
    // Never shown again.
    const read = await send(`/api/keys/${key.id}`, { session });
    expect(await read.json()).toEqual({ ...key, key: undefined, curl: undefined });
    expect(JSON.stringify(await (await send("/api/keys", { session })).json())).not.toContain(
      key.key,
    );
  });

  it("writes the curl line for the first operation the scopes allow, and an expiry counted from now", async () => {
    const { session } = await signUp();
    const { key: writer } = await createKey(session, {
      scopes: ["pets:write"],
      expiresInSeconds: 3600,
    });
    expect(writer.curl).toBe(
      `curl -H "Authorization: Bearer ${writer.key}" -H "Content-Type: application/json" -d '{"name":"Rex","categoryId":1}' http://localhost:8787/v1/pets`,
    );
    expect(seconds(writer.expiresAt)).toBe((seconds(writer.createdAt) ?? 0) + 3600);
    const { key: orders } = await createKey(session, {
      scopes: ["orders:read"],
      expiresInSeconds: null,
    });
    expect(orders.curl).toBe(
      `curl -H "Authorization: Bearer ${orders.key}" http://localhost:8787/v1/store/orders`,
    );
    const { key: all } = await createKey(session, {
      scopes: ["orders:read", "pets:write", "pets:read"],
    });
    expect(all.scopes).toEqual(["pets:read", "pets:write", "orders:read"]);
  });

  it("refuses a bad label, no scope, an unknown scope, a bad expiry or any other field, naming it", async () => {
    const { session } = await signUp();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ label: "" }, "label"],
      [{ label: "a\u0007b" }, "label"],
      [{ label: "\u200B" }, "label"],
      [{ label: "x".repeat(101) }, "label"],
      [{ scopes: [] }, "scopes"],
      [{ scopes: ["admin"] }, "scopes.0"],
      [{ scopes: "pets:read" }, "scopes"],
      [{ expiresInSeconds: 59 }, "expiresInSeconds"],
      [{ expiresInSeconds: 1.5 }, "expiresInSeconds"],
      [{ expiresInSeconds: 400 * 86_400 }, "expiresInSeconds"],
      [{ accountId: "acct_someone_else" }, "accountId"],
    ];
    for (const [change, field] of cases) {
      const response = await send("/api/keys", {
        json: { label: "ok", scopes: ["pets:read"], ...change },
        session,
      });
      const body = await expectError(response, 400, "validation_failed");
      expect(body.details, JSON.stringify(change)).toContainEqual(
        expect.objectContaining({ field }),
      );
    }
    expect(await (await send("/api/keys", { session })).json()).toEqual([]);
  });
});

describe("listing and reading keys", () => {
  it("lists the account's keys, newest first, with what the CLI lists", async () => {
    const { session } = await signUp();
    const { key: first } = await createKey(session, { label: "first" });
    const { key: second } = await createKey(session, { label: "second", scopes: ["pets:write"] });
    const strip = ({ key: _k, curl: _c, ...listed }: CreatedKey) => listed;
    expect(await (await send("/api/keys", { session })).json()).toEqual([
      strip(second),
      strip(first),
    ]);
    expect(await (await send(`/api/keys/${first.id}`, { session })).json()).toEqual(strip(first));
  });
});

describe("rotating a key", () => {
  it("issues a new key with the same label and scopes; the old one expires after 24 hours by default", async () => {
    const { session } = await signUp();
    const { key: old } = await createKey(session, {
      label: "web",
      scopes: ["pets:read", "orders:read"],
    });
    const response = await send(`/api/keys/${old.id}/rotate`, { json: {}, session });
    expect(response.status, await response.clone().text()).toBe(201);
    const rotated = await response.json<CreatedKey & { previous: ListedKey }>();
    expect(response.headers.get("Location")).toBe(`/api/keys/${rotated.id}`);
    expect(rotated).toMatchObject({
      label: "web",
      scopes: ["pets:read", "orders:read"],
      expiresAt: null,
    });
    expect(rotated.key).not.toBe(old.key);
    expect(await keyFormat(rotated.key, tagSecrets(env), "local")).toBe("tagged");
    expect(rotated.previous).toMatchObject({ id: old.id, revokedAt: null });
    expect(seconds(rotated.previous.expiresAt)).toBe((seconds(rotated.createdAt) ?? 0) + 86_400);
  });

  it("with grace 0 ends the old key at once; an ended key cannot be rotated", async () => {
    const clock = movableClock();
    const fetch = platformWith({ clock });
    const { session } = await signUp({ fetch });
    const created = await fetch("/api/keys", {
      json: { label: "x", scopes: ["pets:read"] },
      session,
    });
    const old = await created.json<CreatedKey>();
    const rotated = await fetch(`/api/keys/${old.id}/rotate`, {
      json: { graceSeconds: 0 },
      session,
    });
    const { previous } = await rotated.json<{ previous: ListedKey }>();
    expect(seconds(previous.expiresAt)).toBe(Math.floor(clock.now / 1000));
    await expectError(
      await fetch(`/api/keys/${old.id}/rotate`, { json: {}, session }),
      409,
      "key_not_active",
    );
    const revokedKey = await (
      await fetch("/api/keys", { json: { label: "y", scopes: ["pets:read"] }, session })
    ).json<CreatedKey>();
    await fetch(`/api/keys/${revokedKey.id}/revoke`, { json: {}, session });
    await expectError(
      await fetch(`/api/keys/${revokedKey.id}/rotate`, { json: {}, session }),
      409,
      "key_not_active",
    );
    await expectError(
      await fetch(`/api/keys/${revokedKey.id}/rotate`, { json: { graceSeconds: -1 }, session }),
      400,
      "validation_failed",
      /graceSeconds/,
    );
  });
});

describe("revoking a key", () => {
  it("revokes it at once; revoking again keeps the first instant", async () => {
    const clock = movableClock();
    const fetch = platformWith({ clock });
    const { session } = await signUp({ fetch });
    const key = await (
      await fetch("/api/keys", { json: { label: "x", scopes: ["pets:read"] }, session })
    ).json<CreatedKey>();
    const revoked = await fetch(`/api/keys/${key.id}/revoke`, { json: {}, session });
    expect(revoked.status).toBe(200);
    const body = await revoked.json<ListedKey>();
    expect(seconds(body.revokedAt)).toBe(Math.floor(clock.now / 1000));
    clock.advance(60);
    const again = await fetch(`/api/keys/${key.id}/revoke`, { json: {}, session });
    expect(await again.json()).toEqual(body);
    expect(await count("api_keys", "id = ?1 AND revoked_at IS NOT NULL", key.id)).toBe(1);
  });
});

describe("the limit of 10 active keys", () => {
  it("refuses an 11th active key; a revoked or expired key frees its place", async () => {
    const clock = movableClock();
    const fetch = platformWith({ clock });
    const { session } = await signUp({ fetch });
    const create = (body: Record<string, unknown> = {}) =>
      fetch("/api/keys", { json: { label: "k", scopes: ["pets:read"], ...body }, session });
    const ids: number[] = [];
    for (let i = 0; i < 10; i++)
      ids.push(
        (await (await create(i === 0 ? { expiresInSeconds: 60 } : {})).json<ListedKey>()).id,
      );
    await expectError(await create(), 409, "key_limit_reached", /10 active keys/);
    await fetch(`/api/keys/${ids[1]}/revoke`, { json: {}, session });
    expect((await create()).status).toBe(201);
    await expectError(await create(), 409, "key_limit_reached");
    clock.advance(60); // the first key expires
    expect((await create()).status).toBe(201);
    await expectError(await create(), 409, "key_limit_reached");
  });

  it("holds under concurrent creates: exactly 10 of 16 succeed", async () => {
    const { session, account } = await signUp();
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        send("/api/keys", { json: { label: `k${i}`, scopes: ["pets:read"] }, session }),
      ),
    );
    const statuses = responses.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(10).fill(201), ...Array(6).fill(409)]);
    expect(await count("api_keys", "account_id = ?1", account.id)).toBe(10);
  });

  it("at the limit, rotation with a grace period is refused (both keys would be active); with grace 0 it replaces", async () => {
    const { session, account } = await signUp();
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) {
      ids.push((await createKey(session, { label: `k${i}` })).key.id);
    }
    await expectError(
      await send(`/api/keys/${ids[0]}/rotate`, { json: {}, session }),
      409,
      "key_limit_reached",
      /graceSeconds 0/,
    );
    const replaced = await send(`/api/keys/${ids[0]}/rotate`, {
      json: { graceSeconds: 0 },
      session,
    });
    expect(replaced.status).toBe(201);
    const now = Math.floor(Date.now() / 1000);
    expect(
      await count(
        "api_keys",
        "account_id = ?1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)",
        account.id,
        now,
      ),
    ).toBe(10);
  });
});
