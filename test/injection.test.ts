// SQL injection: SQL metacharacters and comment sequences in every string input are
// stored literally or refused; the schema, the other rows and the API keys stay exactly
// as they were. Every test makes its own key, bystander pets and snapshot (freshStore),
// so the tests pass alone and in any order (`--sequence.shuffle`).
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
    expect.arrayContaining(["pets", "api_keys", "idempotency_keys", "idempotency_records"]),
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
    expect(await (await call(`/v1/pets/${pet.id}`, { key })).json()).toEqual(pet);
    const row = await env.DB.prepare("SELECT name FROM pets WHERE id = ?1")
      .bind(pet.id)
      .first<{ name: string }>();
    expect(row?.name).toBe(name);
    await expectIntact();
  });

  it("lists the injected names verbatim, each exactly once", async () => {
    const { key, createdIds, expectIntact } = await freshStore();
    const names = PAYLOADS.slice(0, 5).map((payload) => `${payload} ${uniqueName("list")}`);
    for (const name of names) createdIds.add((await createPetVia(key, { name, categoryId: 9 })).id);
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

const forgedCursor = (payload: string) =>
  btoa(`c1.${payload}..AAAAAAAAAAAAAAAA`)
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

/** Where a payload is refused: the values sent, how, and the Error that answers. */
const REFUSED: Array<{
  where: string;
  values: string[];
  send: (key: string, value: string) => Promise<Response>;
  status: number;
  code: string;
  message: RegExp;
  challenge?: string;
}> = [
  {
    where: "status in a create body",
    values: [...PAYLOADS, "available' --", "sold'; --", "pending/**/"],
    send: (key, status) =>
      call("/v1/pets", { method: "POST", key, json: { name: "Inj", categoryId: 1, status } }),
    status: 400,
    code: "validation_failed",
    message: /"status"/,
  },
  {
    where: "status in the list query",
    values: [...PAYLOADS, "available' --", "sold' OR '1'='1"],
    send: (key, status) => call(`/v1/pets?${new URLSearchParams({ status })}`, { key }),
    status: 400,
    code: "invalid_parameter",
    message: /"status"/,
  },
  {
    where: "cursor",
    values: [...PAYLOADS, ...PAYLOADS.slice(0, 6).map(forgedCursor)],
    send: (key, cursor) => call(`/v1/pets?${new URLSearchParams({ cursor })}`, { key }),
    status: 400,
    code: "invalid_cursor",
    message: /"cursor"/,
  },
  {
    where: "petId",
    values: [...PAYLOADS, "1--", "1/**/", "1;", "1 ", "1'"],
    send: (key, petId) => call(`/v1/pets/${encodeURIComponent(petId)}`, { key }),
    status: 400,
    code: "invalid_parameter",
    message: /"petId"/,
  },
  {
    where: "the bearer token",
    values: [
      ...PAYLOADS,
      "x' OR '1'='1",
      "' OR 1=1 --",
      "psk_' OR revoked_at IS NULL --",
      "A".repeat(8_192),
    ],
    send: (_key, token) => call("/v1/pets", { headers: { Authorization: `Bearer ${token}` } }),
    status: 401,
    code: "unauthorized",
    message: /^The API key is (malformed|invalid or revoked)\.$/,
    challenge: 'Bearer realm="petstore", error="invalid_token"',
  },
];

describe.each(REFUSED)("$where: refused literally", ({ values, send, ...refusal }) => {
  it.each(values.map((value) => ({ value, shown: value.slice(0, 60) })))(
    "$shown",
    async ({ value }) => {
      const { key, expectIntact } = await freshStore();
      const response = await send(key, value);
      await expectError(response, refusal.status, refusal.code, refusal.message);
      if (refusal.challenge)
        expect(response.headers.get("WWW-Authenticate")).toBe(refusal.challenge);
      await expectIntact();
    },
  );
});

describe("Idempotency-Key: stored literally, scoped exactly", () => {
  it.each(PAYLOADS.filter((p) => /^[\x20-\x7e]+$/.test(p)))("%s", async (idempotencyKey) => {
    const { key, keyId, createdIds, expectIntact } = await freshStore();
    const name = uniqueName("idem");
    const headers = { "Idempotency-Key": idempotencyKey };
    const first = await call("/v1/pets", {
      method: "POST",
      key,
      headers,
      json: { name, categoryId: 5 },
    });
    const pet = await expectCreated(first, { name, categoryId: 5, status: "available" });
    createdIds.add(pet.id);

    const replay = await call("/v1/pets", {
      method: "POST",
      key,
      headers,
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
    const { key, createdIds, expectIntact } = await freshStore();
    const base = `k-${crypto.randomUUID()}`;
    for (const idempotencyKey of [
      base,
      `${base}' OR '1'='1`,
      `${base.slice(0, -1)}_`,
      `${base.slice(0, -3)}%`,
    ]) {
      const name = uniqueName("k");
      const headers = { "Idempotency-Key": idempotencyKey };
      const response = await call("/v1/pets", {
        method: "POST",
        key,
        headers,
        json: { name, categoryId: 6 },
      });
      expect(response.headers.get("Idempotent-Replayed")).toBeNull();
      createdIds.add(
        (await expectCreated(response, { name, categoryId: 6, status: "available" })).id,
      );
    }
    expect(createdIds.size).toBe(4);
    await expectIntact();
  });
});

it("the store still serves every bystander pet unchanged after hostile input of every kind", async () => {
  const { key, bystanders, createdIds, expectIntact } = await freshStore();
  const payload = PAYLOADS[0];
  createdIds.add((await createPetVia(key, { name: payload, categoryId: 9 })).id);
  for (const { send, status, code } of REFUSED)
    await expectError(await send(key, payload), status, code);
  for (const bystander of bystanders) {
    const response = await call(`/v1/pets/${bystander.id}`, { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(bystander);
  }
  await expectIntact();
});
