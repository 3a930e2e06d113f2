// SQL injection (issue 3, item 6): SQL metacharacters and comment sequences in every
// string input are stored literally or refused; the schema, the other rows and the
// API keys stay exactly as they were. Every test makes its own key, bystander pets and
// snapshot (freshStore), so the tests pass alone and in any order
// (`npx vitest run test/injection.test.ts --sequence.shuffle`).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/encoding.ts";
import { call, createKey, createPetVia, expectError } from "./helpers.ts";
import {
  allPetRows,
  expectCreated,
  idempotencyRecords,
  schemaObjects,
  uniqueName,
} from "./support/requests.ts";

const PAYLOADS = [
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

/** The API keys, without their last use (written after answers, off the request path). */
async function apiKeyRows() {
  const { results } = await env.DB.prepare(
    "SELECT id, key_hash, prefix, label, created_at, revoked_at FROM api_keys ORDER BY id",
  ).all<Record<string, unknown>>();
  return results;
}

/**
 * What one test needs, made by that test (nothing is shared between tests, so their
 * order does not matter): its own API key, three bystander pets (one per status), and a
 * snapshot of the schema, the keys and every pet, to prove afterwards that the hostile
 * input changed nothing but the pets this test created.
 */
async function freshStore() {
  const { key, id: keyId } = await createKey("injection");
  const bystanders = [];
  for (const [i, status] of (["available", "pending", "sold"] as const).entries()) {
    bystanders.push(
      await createPetVia(key, {
        name: `bystander ${i} ${uniqueName()}`,
        categoryId: 100 + i,
        status,
      }),
    );
  }
  const baselineRows = await allPetRows();
  const baselineSchema = await schemaObjects();
  const baselineKeys = await apiKeyRows();
  expect(baselineSchema.map((o) => o.name)).toEqual(
    expect.arrayContaining(["pets", "api_keys", "idempotency_keys", "idempotency_records"]),
  );
  /** Pets this test created on purpose (the only rows allowed to appear). */
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
      expect(
        rows.every((row) => ["available", "pending", "sold"].includes(row.status as string)),
      ).toBe(true);
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
    const fetched = await call(`/v1/pets/${pet.id}`, { key });
    expect(await fetched.json()).toEqual(pet);
    const row = await env.DB.prepare("SELECT name FROM pets WHERE id = ?1")
      .bind(pet.id)
      .first<{ name: string }>();
    expect(row?.name).toBe(name);
    await expectIntact();
  });

  it("lists the injected names verbatim, each exactly once", async () => {
    const { key, createdIds, expectIntact } = await freshStore();
    const names: string[] = [];
    for (const payload of PAYLOADS.slice(0, 5)) {
      const name = `${payload} ${uniqueName("list")}`;
      names.push(name);
      createdIds.add((await createPetVia(key, { name, categoryId: 9 })).id);
    }
    const seen: string[] = [];
    let next: string | null = "/v1/pets?limit=100";
    while (next) {
      const response: Response = await call(next, { key });
      expect(response.status).toBe(200);
      for (const pet of (await response.json()) as { name: string }[]) seen.push(pet.name);
      const link = response.headers.get("Link")?.match(/<([^>]+)>; rel="next"/)?.[1];
      next = link ? new URL(link).pathname + new URL(link).search : null;
    }
    for (const name of names) expect(seen.filter((n) => n === name)).toHaveLength(1);
    await expectIntact();
  });
});

describe("status: refused literally", () => {
  it.each([...PAYLOADS, "available' --", "sold'; --", "pending/**/"])(
    "in a create body: %s",
    async (status) => {
      const { key, expectIntact } = await freshStore();
      await expectError(
        await call("/v1/pets", {
          method: "POST",
          key,
          json: { name: "Inj", categoryId: 1, status },
        }),
        400,
        "validation_failed",
        /"status"/,
      );
      await expectIntact();
    },
  );

  it.each([...PAYLOADS, "available' --", "sold' OR '1'='1"])(
    "in the list query: %s",
    async (status) => {
      const { key, expectIntact } = await freshStore();
      const response = await call(`/v1/pets?${new URLSearchParams({ status })}`, { key });
      await expectError(response, 400, "invalid_parameter", /"status"/);
      await expectIntact();
    },
  );
});

describe("cursor: refused literally", () => {
  const forged = (payload: string) =>
    btoa(`c1.${payload}..AAAAAAAAAAAAAAAA`)
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");

  it.each([...PAYLOADS, ...PAYLOADS.slice(0, 6).map(forged)])("%s", async (cursor) => {
    const { key, expectIntact } = await freshStore();
    const response = await call(`/v1/pets?${new URLSearchParams({ cursor })}`, { key });
    await expectError(response, 400, "invalid_cursor", /"cursor"/);
    await expectIntact();
  });
});

describe("petId: refused literally", () => {
  it.each([...PAYLOADS, "1--", "1/**/", "1;", "1 ", "1'"])("%s", async (petId) => {
    const { key, expectIntact } = await freshStore();
    const response = await call(`/v1/pets/${encodeURIComponent(petId)}`, { key });
    await expectError(response, 400, "invalid_parameter", /"petId"/);
    await expectIntact();
  });
});

describe("Idempotency-Key: stored literally, scoped exactly", () => {
  it.each(PAYLOADS.filter((p) => /^[\x20-\x7e]+$/.test(p)))("%s", async (idempotencyKey) => {
    const { key, keyId, createdIds, expectIntact } = await freshStore();
    const name = uniqueName("idem");
    const first = await call("/v1/pets", {
      method: "POST",
      key,
      headers: { "Idempotency-Key": idempotencyKey },
      json: { name, categoryId: 5 },
    });
    const pet = await expectCreated(first, { name, categoryId: 5, status: "available" });
    createdIds.add(pet.id);

    const replay = await call("/v1/pets", {
      method: "POST",
      key,
      headers: { "Idempotency-Key": idempotencyKey },
      json: { categoryId: 5, name },
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.headers.get("Location")).toBe(`/v1/pets/${pet.id}`);
    expect(await replay.json()).toEqual(pet);

    // Stored under the key's SHA-256, never as sent, so its text cannot reach any SQL.
    expect(await idempotencyRecords(idempotencyKey)).toEqual([
      expect.objectContaining({
        api_key_id: keyId,
        key_hash: await sha256Hex(idempotencyKey),
        pet_id: pet.id,
      }),
    ]);
    await expectIntact();
  });

  it("does not match a key by pattern: 'a' and \"a' OR '1'='1\" are different keys", async () => {
    const store = await freshStore();
    const base = `k-${crypto.randomUUID()}`;
    const one = await createPetWithKey(store, base, uniqueName("k1"));
    const two = await createPetWithKey(store, `${base}' OR '1'='1`, uniqueName("k2"));
    const three = await createPetWithKey(store, `${base.slice(0, -1)}_`, uniqueName("k3"));
    const four = await createPetWithKey(store, `${base.slice(0, -3)}%`, uniqueName("k4"));
    expect(new Set([one, two, three, four].map((p) => p.id)).size).toBe(4);
    await store.expectIntact();
  });

  async function createPetWithKey(
    { key, createdIds }: { key: string; createdIds: Set<number> },
    idempotencyKey: string,
    name: string,
  ) {
    const response = await call("/v1/pets", {
      method: "POST",
      key,
      headers: { "Idempotency-Key": idempotencyKey },
      json: { name, categoryId: 6 },
    });
    expect(response.headers.get("Idempotent-Replayed")).toBeNull();
    const pet = await expectCreated(response, { name, categoryId: 6, status: "available" });
    createdIds.add(pet.id);
    return pet;
  }
});

describe("Authorization: refused literally", () => {
  it.each([...PAYLOADS, "x' OR '1'='1", "' OR 1=1 --", "psk_' OR revoked_at IS NULL --"])(
    "Bearer %s",
    async (token) => {
      const { expectIntact } = await freshStore();
      const response = await call("/v1/pets", { headers: { Authorization: `Bearer ${token}` } });
      await expectError(response, 401, "unauthorized");
      expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="petstore"/);
      await expectIntact();
    },
  );
});

describe("the store after hostile input of every kind", () => {
  it("still serves every bystander pet unchanged", async () => {
    const { key, bystanders, createdIds, expectIntact } = await freshStore();
    const payload = PAYLOADS[0];
    const pet = await createPetVia(key, { name: payload, categoryId: 9 });
    createdIds.add(pet.id);
    const send = (path: string) => call(path, { key });
    await expectError(
      await send(`/v1/pets?${new URLSearchParams({ status: payload })}`),
      400,
      "invalid_parameter",
    );
    await expectError(
      await send(`/v1/pets?${new URLSearchParams({ cursor: payload })}`),
      400,
      "invalid_cursor",
    );
    await expectError(
      await send(`/v1/pets/${encodeURIComponent(payload)}`),
      400,
      "invalid_parameter",
    );
    await expectError(
      await call("/v1/pets", { headers: { Authorization: `Bearer ${payload}` } }),
      401,
      "unauthorized",
    );
    for (const bystander of bystanders) {
      const response = await call(`/v1/pets/${bystander.id}`, { key });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(bystander);
    }
    await expectIntact();
  });
});
