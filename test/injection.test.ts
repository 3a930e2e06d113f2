// SQL injection (issue 3, item 6): SQL metacharacters and comment sequences in every
// string input are stored literally or refused; the schema, the other rows and the
// API keys stay exactly as they were.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createKey, createPetVia, expectError } from "./helpers.ts";
import {
  allPetRows,
  expectCreated,
  idempotencyRows,
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

let key: string;
let keyId: number;
const createdIds = new Set<number>();
let baselineRows: Record<string, unknown>[];
let baselineSchema: Record<string, unknown>[];
let baselineKeys: Record<string, unknown>[];

async function apiKeyRows() {
  const { results } = await env.DB.prepare(
    "SELECT id, key_hash, prefix, label, created_at, revoked_at FROM api_keys ORDER BY id",
  ).all<Record<string, unknown>>();
  return results;
}

/** The schema, the API keys and every pet this file did not create are unchanged. */
async function expectDatabaseIntact() {
  expect(await schemaObjects()).toEqual(baselineSchema);
  expect(await apiKeyRows()).toEqual(baselineKeys);
  const rows = await allPetRows();
  expect(rows.filter((row) => !createdIds.has(row.id as number))).toEqual(baselineRows);
  expect(rows.every((row) => ["available", "pending", "sold"].includes(row.status as string))).toBe(
    true,
  );
}

beforeAll(async () => {
  ({ key, id: keyId } = await createKey("injection"));
  for (const [i, status] of (["available", "pending", "sold"] as const).entries()) {
    await createPetVia(key, { name: `bystander ${i}`, categoryId: 100 + i, status });
  }
  baselineRows = await allPetRows();
  baselineSchema = await schemaObjects();
  baselineKeys = await apiKeyRows();
  expect(baselineRows.length).toBeGreaterThanOrEqual(3);
  expect(baselineSchema.map((o) => o.name)).toEqual(
    expect.arrayContaining(["pets", "api_keys", "idempotency_keys"]),
  );
});

describe("name: stored and returned literally", () => {
  it.each(PAYLOADS)("%s", async (payload) => {
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
    await expectDatabaseIntact();
  });

  it("lists the injected names verbatim, each exactly once", async () => {
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
    await expectDatabaseIntact();
  });
});

describe("status: refused literally", () => {
  it.each([...PAYLOADS, "available' --", "sold'; --", "pending/**/"])(
    "in a create body: %s",
    async (status) => {
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
      await expectDatabaseIntact();
    },
  );

  it.each([...PAYLOADS, "available' --", "sold' OR '1'='1"])(
    "in the list query: %s",
    async (status) => {
      const response = await call(`/v1/pets?${new URLSearchParams({ status })}`, { key });
      await expectError(response, 400, "invalid_parameter", /"status"/);
      await expectDatabaseIntact();
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
    const response = await call(`/v1/pets?${new URLSearchParams({ cursor })}`, { key });
    await expectError(response, 400, "invalid_cursor", /"cursor"/);
    await expectDatabaseIntact();
  });
});

describe("petId: refused literally", () => {
  it.each([...PAYLOADS, "1--", "1/**/", "1;", "1 ", "1'"])("%s", async (petId) => {
    const response = await call(`/v1/pets/${encodeURIComponent(petId)}`, { key });
    await expectError(response, 400, "invalid_parameter", /"petId"/);
    await expectDatabaseIntact();
  });
});

describe("Idempotency-Key: stored literally, scoped exactly", () => {
  it.each(PAYLOADS.filter((p) => /^[\x20-\x7e]+$/.test(p)))("%s", async (idempotencyKey) => {
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

    const stored = (await idempotencyRows(keyId)).filter(
      (row) => row.idempotency_key === idempotencyKey,
    );
    expect(stored).toEqual([
      { idempotency_key: idempotencyKey, state: "completed", response_body: JSON.stringify(pet) },
    ]);
    await expectDatabaseIntact();
  });

  it("does not match a key by pattern: 'a' and \"a' OR '1'='1\" are different keys", async () => {
    const base = `k-${crypto.randomUUID()}`;
    const one = await createPetWithKey(base, uniqueName("k1"));
    const two = await createPetWithKey(`${base}' OR '1'='1`, uniqueName("k2"));
    const three = await createPetWithKey(`${base.slice(0, -1)}_`, uniqueName("k3"));
    const four = await createPetWithKey(`${base.slice(0, -3)}%`, uniqueName("k4"));
    expect(new Set([one, two, three, four].map((p) => p.id)).size).toBe(4);
    await expectDatabaseIntact();
  });

  async function createPetWithKey(idempotencyKey: string, name: string) {
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
      const response = await call("/v1/pets", { headers: { Authorization: `Bearer ${token}` } });
      await expectError(response, 401, "unauthorized");
      expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="petstore"/);
      await expectDatabaseIntact();
    },
  );
});

describe("the store after all of the above", () => {
  it("still serves every bystander pet unchanged", async () => {
    for (const row of baselineRows) {
      const response = await call(`/v1/pets/${row.id}`, { key });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        id: row.id,
        name: row.name,
        categoryId: row.category_id,
        status: row.status,
      });
    }
    await expectDatabaseIntact();
  });
});
