// SQL injection: SQL metacharacters and comment sequences (SQL_PAYLOADS) in a name, an
// Idempotency-Key or a bearer token are stored literally or refused, and the schema, the
// other rows and the API keys stay exactly as they were. Every test makes its own key,
// bystander pets and snapshot (freshStore), so the tests pass alone and in any order.
// Where a payload is refused before the database (a status, a cursor, a petId), the test
// of that input proves that no statement runs at all (create-validation, list-pets, get-pet).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/encoding.ts";
import { call, createKey, createPetVia, expectError } from "./helpers.ts";
import {
  allPetRows,
  expectCreated,
  idempotencyRecords,
  SQL_PAYLOADS as PAYLOADS,
  schemaObjects,
  uniqueName,
  walkPages,
} from "./support/requests.ts";

/** The API keys, without their last use (written after responses, off the request path). */
async function apiKeyRows() {
  const { results } = await env.DB.prepare(
    "SELECT id, key_hash, prefix, label, created_at, revoked_at FROM api_keys ORDER BY id",
  ).all<Record<string, unknown>>();
  return results;
}

/**
 * What one test needs, made by that test: its own API key, three bystander pets (one per
 * status), and a snapshot of the schema, the keys and every pet, to prove afterwards that
 * the hostile input changed nothing but the pets this test created (`createdIds`).
 */
async function freshStore() {
  const { key, id: keyId } = await createKey("injection");
  const bystanders = [];
  for (const [i, status] of (["available", "pending", "sold"] as const).entries()) {
    const name = `bystander ${i} ${uniqueName()}`;
    bystanders.push(await createPetVia(key, { name, categoryId: 100 + i, status }));
  }
  const baselineRows = await allPetRows();
  const baselineSchema = await schemaObjects();
  const baselineKeys = await apiKeyRows();
  expect(baselineSchema.map((o) => o.name)).toEqual(
    expect.arrayContaining(["pets", "api_keys", "idempotency_records"]),
  );
  const createdIds = new Set<number>();
  return {
    key,
    keyId,
    bystanders,
    createdIds,
    /** The schema, the API keys and every pet this test did not create are unchanged. */
    async expectIntact() {
      expect(await schemaObjects()).toEqual(baselineSchema);
      expect(await apiKeyRows()).toEqual(baselineKeys);
      const rows = await allPetRows();
      expect(rows.filter((row) => !createdIds.has(row.id as number))).toEqual(baselineRows);
      for (const { status } of rows) expect(["available", "pending", "sold"]).toContain(status);
    },
  };
}

describe("name: stored and returned literally", () => {
  it.each(PAYLOADS)("%s", async (payload) => {
    const { key, createdIds, expectIntact } = await freshStore();
    const name = `${payload} ${crypto.randomUUID().slice(0, 8)}`;
    const pet = await expectCreated(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 9 } }),
      { name, categoryId: 9, status: "available" },
    );
    createdIds.add(pet.id);
    expect(await (await call(`/v1/pets/${pet.id}`, { key })).json()).toEqual(pet);
    expect((await allPetRows()).find((row) => row.id === pet.id)?.name).toBe(name);
    await expectIntact();
  });

  it("lists the injected names verbatim, each exactly once", async () => {
    const { key, createdIds, expectIntact } = await freshStore();
    const names = PAYLOADS.slice(0, 5).map((payload) => `${payload} ${uniqueName("list")}`);
    for (const name of names) createdIds.add((await createPetVia(key, { name, categoryId: 9 })).id);
    const pages = await walkPages("/v1/pets?limit=100", key);
    const seen = pages.flatMap((page) => page.pets.map((pet) => pet.name));
    for (const name of names) expect(seen.filter((n) => n === name)).toHaveLength(1);
    await expectIntact();
  });
});

describe("the bearer token: refused literally", () => {
  const tokens = [
    "x' OR '1'='1",
    "' OR 1=1 --",
    "psk_' OR revoked_at IS NULL --",
    "A".repeat(8_192),
  ];
  it.each([...PAYLOADS, ...tokens].map((token) => ({ token, shown: token.slice(0, 60) })))(
    "$shown",
    async ({ token }) => {
      const { expectIntact } = await freshStore();
      const response = await call("/v1/pets", { headers: { Authorization: `Bearer ${token}` } });
      await expectError(
        response,
        401,
        "unauthorized",
        /^The API key is (malformed|invalid or revoked)\.$/,
      );
      const challenge = 'Bearer realm="petstore", error="invalid_token"';
      expect(response.headers.get("WWW-Authenticate")).toBe(challenge);
      await expectIntact();
    },
  );
});

describe("Idempotency-Key: stored literally, scoped exactly", () => {
  it.each(PAYLOADS.filter((p) => /^[\x20-\x7e]+$/.test(p)))("%s", async (idempotencyKey) => {
    const { key, keyId, createdIds, expectIntact } = await freshStore();
    const name = uniqueName("idem");
    const post = (json: unknown) =>
      call("/v1/pets", {
        method: "POST",
        key,
        headers: { "Idempotency-Key": idempotencyKey },
        json,
      });
    const pet = await expectCreated(await post({ name, categoryId: 5 }), {
      name,
      categoryId: 5,
      status: "available",
    });
    createdIds.add(pet.id);

    const replay = await post({ categoryId: 5, name });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.headers.get("Location")).toBe(`/v1/pets/${pet.id}`);
    expect(await replay.json()).toEqual(pet);

    // Stored under the key's SHA-256, never as sent, so its text cannot reach any SQL.
    expect(await idempotencyRecords(idempotencyKey)).toEqual([
      expect.objectContaining({
        scope: `key:${keyId}`,
        key_hash: await sha256Hex(idempotencyKey),
        pet_id: pet.id,
      }),
    ]);
    await expectIntact();
  });

  it("does not match a key by pattern: 'a' and \"a' OR '1'='1\" are different keys", async () => {
    const { key, createdIds, expectIntact } = await freshStore();
    const base = `k-${crypto.randomUUID()}`;
    const similar = [base, `${base}' OR '1'='1`, `${base.slice(0, -1)}_`, `${base.slice(0, -3)}%`];
    for (const idempotencyKey of similar) {
      const json = { name: uniqueName("k"), categoryId: 6 };
      const headers = { "Idempotency-Key": idempotencyKey };
      const response = await call("/v1/pets", { method: "POST", key, headers, json });
      expect(response.headers.get("Idempotent-Replayed")).toBeNull();
      createdIds.add((await expectCreated(response, { ...json, status: "available" })).id);
    }
    expect(createdIds.size).toBe(4);
    await expectIntact();
  });
});

it("the store still serves every bystander pet unchanged after hostile input of every kind", async () => {
  const { key, bystanders, createdIds, expectIntact } = await freshStore();
  const payload = PAYLOADS[0];
  createdIds.add((await createPetVia(key, { name: payload, categoryId: 9 })).id);
  const query = (name: string) => `/v1/pets?${new URLSearchParams({ [name]: payload })}`;
  await expectError(await call(query("status"), { key }), 400, "invalid_parameter");
  await expectError(await call(query("cursor"), { key }), 400, "invalid_cursor");
  await expectError(
    await call(`/v1/pets/${encodeURIComponent(payload)}`, { key }),
    400,
    "invalid_parameter",
  );
  const json = { name: "Inj", categoryId: 1, status: payload };
  await expectError(
    await call("/v1/pets", { method: "POST", key, json }),
    400,
    "validation_failed",
  );
  const headers = { Authorization: `Bearer ${payload}` };
  await expectError(await call("/v1/pets", { headers }), 401, "unauthorized");
  for (const bystander of bystanders) {
    const response = await call(`/v1/pets/${bystander.id}`, { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(bystander);
  }
  await expectIntact();
});
