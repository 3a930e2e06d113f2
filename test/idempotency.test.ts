// Idempotency-Key on POST /v1/pets (decisions.md, "Beyond the document"):
// replay, reuse with another body, scoping, validation first, the fixed-size record,
// records of the previous design (in flight, completed), expiry after 24 hours and the
// scheduled purge, and concurrent retries.
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { IDEMPOTENCY_TTL_SECONDS } from "../src/config.ts";
import { sha256Hex } from "../src/encoding.ts";
import worker from "../src/index.ts";
import { bodyFingerprint } from "../src/pets/idempotency.ts";
import type { Pet } from "../src/pets/schemas.ts";
import { call, createCheckedApp, createKey, expectError, makeRequest } from "./helpers.ts";
import { idempotencyRecords } from "./support/requests.ts";

let key: string;
let keyId: number;
let counter = 0;

beforeAll(async () => {
  ({ key, id: keyId } = await createKey("idempotency"));
});

/** A name (and Idempotency-Key) no other test in this file uses. */
function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${crypto.randomUUID()}`;
}

function post(
  idempotencyKey: string | undefined,
  body: unknown,
  options: { key?: string; raw?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    ...options.headers,
  };
  if (idempotencyKey !== undefined) headers["Idempotency-Key"] = idempotencyKey;
  return call("/v1/pets", {
    method: "POST",
    key: options.key ?? key,
    headers,
    body: options.raw ?? JSON.stringify(body),
  });
}

async function petsNamed(name: string): Promise<Pet[]> {
  const { results } = await env.DB.prepare(
    "SELECT id, name, category_id AS categoryId, status FROM pets WHERE name = ?1 ORDER BY id",
  )
    .bind(name)
    .all<Pet>();
  return results;
}

/** The record of `idempotencyKey` under API key `apiKeyId`, or null. */
async function record(idempotencyKey: string, apiKeyId = keyId) {
  return (await idempotencyRecords(idempotencyKey, apiKeyId))[0] ?? null;
}

/**
 * POSTs through a fresh app whose D1 runs `batch` (the create's transaction)
 * through `around`, so a test can fail or hold the create while it is in flight.
 */
function appWithBatch(
  around: (batch: () => Promise<D1Result[]>) => Promise<D1Result[]>,
): (idempotencyKey: string, body: unknown) => Promise<Response> {
  const wrap = (db: D1Database | D1DatabaseSession): unknown =>
    new Proxy(db, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property === "batch") {
          return (statements: D1PreparedStatement[]) =>
            around(() => (target as D1Database).batch(statements));
        }
        if (property === "withSession") {
          return (c?: D1SessionConstraint) => wrap((target as D1Database).withSession(c));
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const app = createCheckedApp({ log: () => {} });
  const appEnv = { ...env, DB: wrap(env.DB) as D1Database };
  return async (idempotencyKey, body) =>
    app.fetch(
      makeRequest("/v1/pets", {
        method: "POST",
        key,
        json: body,
        headers: { "Idempotency-Key": idempotencyKey },
      }),
      appEnv,
    );
}

/** Asserts the first (original) 201 of a create: the pet, Location, no replay marker. */
async function expectOriginal(
  response: Response,
  name: string,
): Promise<{ pet: Pet; text: string }> {
  const text = await response.text();
  expect(response.status, text).toBe(201);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(response.headers.get("Idempotent-Replayed")).toBeNull();
  const pet = JSON.parse(text) as Pet;
  expect(pet.name).toBe(name);
  expect(response.headers.get("Location")).toBe(`/v1/pets/${pet.id}`);
  return { pet, text };
}

/** Asserts a replay of `original`: same status, body (byte for byte) and Location. */
async function expectReplay(response: Response, original: { pet: Pet; text: string }) {
  const text = await response.text();
  expect(response.status, text).toBe(201);
  expect(response.headers.get("Idempotent-Replayed")).toBe("true");
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(response.headers.get("Location")).toBe(`/v1/pets/${original.pet.id}`);
  expect(response.headers.get("X-Request-Id")).toBeTruthy();
  expect(JSON.parse(text)).toEqual(original.pet);
  expect(text).toBe(original.text);
}

describe("a repeated request", () => {
  it("with the same key and body replays the first response and creates nothing", async () => {
    const name = unique("Replay");
    const idem = unique("k");
    const body = { name, categoryId: 3, status: "pending" };
    const original = await expectOriginal(await post(idem, body), name);
    for (let i = 0; i < 3; i++) await expectReplay(await post(idem, body), original);
    expect(await petsNamed(name)).toEqual([original.pet]);
  });

  it("replays a name with quotes, backslashes, non-ASCII and astral characters exactly", async () => {
    const name = unique('Zoë "the\\cat" 🐈 日本');
    const idem = unique("k");
    const body = { name, categoryId: 9007199254740991 };
    const original = await expectOriginal(await post(idem, body), name);
    expect(original.pet).toMatchObject({ categoryId: 9007199254740991, status: "available" });
    await expectReplay(await post(idem, body), original);
    expect(await petsNamed(name)).toHaveLength(1);
  });

  it("counts as the same body when only key order and white space differ", async () => {
    const name = unique("Order");
    const idem = unique("k");
    const original = await expectOriginal(
      await post(idem, undefined, { raw: `{"name":${JSON.stringify(name)},"categoryId":4}` }),
      name,
    );
    const reordered = `\n{ "categoryId" : 4.0 ,\t"name" : ${JSON.stringify(name)} }\n`;
    await expectReplay(await post(idem, undefined, { raw: reordered }), original);
    expect(await petsNamed(name)).toHaveLength(1);
  });

  it("answers a replay with the CORS headers, so browsers can read Idempotent-Replayed", async () => {
    const name = unique("Cors");
    const idem = unique("k");
    const body = { name, categoryId: 1 };
    const original = await expectOriginal(await post(idem, body), name);
    const replay = await post(idem, body, { headers: { Origin: "https://app.example" } });
    expect(replay.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(replay.headers.get("Access-Control-Expose-Headers")).toMatch(/Idempotent-Replayed/i);
    await expectReplay(replay, original);
  });

  it("with the same key and another body is 422 idempotency_key_reused and creates nothing", async () => {
    const name = unique("Reused");
    const idem = unique("k");
    const original = await expectOriginal(await post(idem, { name, categoryId: 1 }), name);
    for (const other of [
      { name, categoryId: 2 },
      { name, categoryId: 1, status: "available" }, // the default spelled out is another JSON value
      { name: `${name} `, categoryId: 1 },
    ]) {
      const response = await post(idem, other);
      await expectError(response, 422, "idempotency_key_reused", /Idempotency-Key/);
      expect(response.headers.get("Idempotent-Replayed")).toBeNull();
      expect(response.headers.get("Location")).toBeNull();
    }
    expect(await petsNamed(name)).toEqual([original.pet]);
    expect(await petsNamed(`${name} `)).toEqual([]);
    // The first response is still what the key replays.
    await expectReplay(await post(idem, { name, categoryId: 1 }), original);
  });

  it("without an Idempotency-Key creates a new pet every time", async () => {
    const name = unique("NoKey");
    const body = { name, categoryId: 1 };
    const a = await expectOriginal(await post(undefined, body), name);
    const b = await expectOriginal(await post(undefined, body), name);
    expect(b.pet.id).toBeGreaterThan(a.pet.id);
    expect(await petsNamed(name)).toHaveLength(2);
  });
});

describe("the Idempotency-Key value", () => {
  it('written as a structured-field string ("abc") means abc', async () => {
    const name = unique("Sf");
    const idem = unique("k");
    const body = { name, categoryId: 1 };
    const original = await expectOriginal(await post(`"${idem}"`, body), name);
    await expectReplay(await post(idem, body), original);
    expect(await record(idem)).not.toBeNull();
    expect(await record(`"${idem}"`)).toBeNull();
  });

  it('unescapes \\" and \\\\ inside a structured-field string', async () => {
    const name = unique("SfEsc");
    const idem = `${unique("k")}"q\\b`;
    const body = { name, categoryId: 1 };
    const sf = `"${idem.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
    const original = await expectOriginal(await post(sf, body), name);
    await expectReplay(await post(idem, body), original);
  });

  it.each([
    ["empty", ""],
    ["an empty structured-field string", '""'],
    ["256 characters", "k".repeat(256)],
    ["256 characters inside quotes", `"${"k".repeat(256)}"`],
    ["a tab", "a\tb"],
    ["DEL", "a\u007fb"],
  ])(
    "is refused with 400 invalid_idempotency_key when it is %s, and nothing is created",
    async (_what, value) => {
      const name = unique("BadKey");
      const response = await post(value, { name, categoryId: 1 });
      await expectError(response, 400, "invalid_idempotency_key", /"Idempotency-Key"/);
      expect(await petsNamed(name)).toEqual([]);
    },
  );

  it("counts the 255 characters after unquoting: 255 inside quotes is the bare key", async () => {
    const name = unique("LongQuoted");
    const idem = `${crypto.randomUUID()}`.padEnd(255, "q");
    const original = await expectOriginal(await post(`"${idem}"`, { name, categoryId: 1 }), name);
    await expectReplay(await post(idem, { name, categoryId: 1 }), original);
  });

  it("may be exactly 255 printable ASCII characters, space and tilde included", async () => {
    const name = unique("Long");
    const idem = `${crypto.randomUUID()} ~!#`.padEnd(255, "~");
    expect(idem).toHaveLength(255);
    const original = await expectOriginal(await post(idem, { name, categoryId: 1 }), name);
    await expectReplay(await post(idem, { name, categoryId: 1 }), original);
  });
});

describe("a request refused before it is processed", () => {
  it.each([
    [
      "400 validation_failed",
      400,
      "validation_failed",
      '{"name":"","categoryId":1}',
      "application/json",
    ],
    ["400 invalid_json", 400, "invalid_json", '{"name":', "application/json"],
    [
      "413 payload_too_large",
      413,
      "payload_too_large",
      `{"name":"${"x".repeat(17_000)}"}`,
      "application/json",
    ],
    [
      "415 unsupported_media_type",
      415,
      "unsupported_media_type",
      '{"name":"x","categoryId":1}',
      "text/plain",
    ],
  ])("(%s) stores nothing and does not consume the key", async (_what, status, code, raw, type) => {
    const idem = unique("k");
    const refused = await post(idem, undefined, { raw, headers: { "Content-Type": type } });
    await expectError(refused, status, code);
    expect(refused.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await record(idem)).toBeNull();
    // The same key then works for a valid request, which is an original, not a replay.
    const name = unique("AfterRefusal");
    const original = await expectOriginal(await post(idem, { name, categoryId: 1 }), name);
    await expectReplay(await post(idem, { name, categoryId: 1 }), original);
  });

  it("checks the body before the key's history: 400, not a replay or 422, for a used key", async () => {
    const idem = unique("k");
    const name = unique("UsedThenBad");
    const original = await expectOriginal(await post(idem, { name, categoryId: 1 }), name);
    const refused = await post(idem, undefined, {
      raw: '{"name":"","categoryId":1}',
      headers: { "Content-Type": "application/json" },
    });
    await expectError(refused, 400, "validation_failed", /"name"/);
    expect(refused.headers.get("Idempotent-Replayed")).toBeNull();
    await expectReplay(await post(idem, { name, categoryId: 1 }), original);
  });

  it("a 401 stores nothing either", async () => {
    const idem = unique("k");
    const response = await post(
      idem,
      { name: unique("NoAuth"), categoryId: 1 },
      { key: "psk_nope" },
    );
    await expectError(response, 401, "unauthorized");
    expect(await idempotencyRecords(idem)).toEqual([]);
  });
});

describe("scoping", () => {
  it("keeps keys per API key: two API keys use one Idempotency-Key independently", async () => {
    const other = await createKey("idempotency-other");
    const idem = unique("shared");
    const name = unique("Scoped");
    const mine = await expectOriginal(await post(idem, { name, categoryId: 1 }), name);
    const theirs = await expectOriginal(
      await post(idem, { name, categoryId: 1 }, { key: other.key }),
      name,
    );
    expect(theirs.pet.id).not.toBe(mine.pet.id);
    // Another body under the other API key is not "reused": it is the other key's first use.
    const third = await createKey("idempotency-third");
    const otherName = unique("Scoped2");
    await expectOriginal(
      await post(idem, { name: otherName, categoryId: 7 }, { key: third.key }),
      otherName,
    );
    // Each API key replays its own first response.
    await expectReplay(await post(idem, { name, categoryId: 1 }), mine);
    await expectReplay(await post(idem, { name, categoryId: 1 }, { key: other.key }), theirs);
    expect(await petsNamed(name)).toHaveLength(2);
  });

  it("stores the key's and the body's SHA-256, the pet's id and the time: never the key itself", async () => {
    const name = unique("Stored");
    const idem = unique("k").padEnd(255, "~");
    const body = { name, categoryId: 5, status: "sold" };
    const before = Math.floor(Date.now() / 1000);
    const { pet } = await expectOriginal(await post(idem, body), name);
    const row = await record(idem);
    expect(row).toEqual({
      api_key_id: keyId,
      key_hash: await sha256Hex(idem),
      fingerprint: await bodyFingerprint(body),
      pet_id: pet.id,
      created_at: expect.any(Number),
    });
    expect(Number(row?.created_at)).toBeGreaterThanOrEqual(before);
    expect(Number(row?.created_at)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    // Fixed size whatever the key's length: 32 bytes of key, 32 of fingerprint.
    const sizes = await env.DB.prepare(
      "SELECT length(key_hash) AS k, length(fingerprint) AS f FROM idempotency_records WHERE pet_id = ?1",
    )
      .bind(pet.id)
      .first<{ k: number; f: number }>();
    expect(sizes).toEqual({ k: 32, f: 32 });
    // Neither the Idempotency-Key nor the API key is stored in any table.
    const dump = JSON.stringify(
      (
        await env.DB.prepare("SELECT * FROM idempotency_records WHERE pet_id = ?1")
          .bind(pet.id)
          .all()
      ).results,
    );
    expect(dump).not.toContain(idem.slice(0, 40));
    expect(dump).not.toContain(key);
    const { n } = (await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM idempotency_keys WHERE idempotency_key = ?1",
    )
      .bind(idem)
      .first<{ n: number }>()) ?? { n: -1 };
    expect(n).toBe(0);
  });
});

/**
 * Records written before migration 0005 (table idempotency_keys: the key as sent, a hex
 * fingerprint, the stored answer, an in-flight state with a lock) keep their meaning
 * for their 24 hours: a completed one replays, an unfinished one is 409 until its lock
 * passes. Written here with SQL, exactly as the previous version of the service did.
 */
describe("a record of the previous design", () => {
  const now = () => Math.floor(Date.now() / 1000);

  async function legacy(
    idem: string,
    fingerprint: string,
    state: { inFlightUntil: number } | { pet: Pet; createdAt?: number },
  ) {
    const completed = "pet" in state;
    await env.DB.prepare(
      `INSERT INTO idempotency_keys (api_key_id, idempotency_key, fingerprint, state,
         response_status, response_body, response_location, created_at, locked_until)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`,
    )
      .bind(
        keyId,
        idem,
        fingerprint,
        completed ? "completed" : "in_flight",
        completed ? 201 : null,
        completed ? JSON.stringify(state.pet) : null,
        completed ? `/v1/pets/${state.pet.id}` : null,
        completed ? (state.createdAt ?? now()) : now(),
        completed ? now() + 30 : state.inFlightUntil,
      )
      .run();
  }

  /** A pet made the way the previous version made one (its row exists before its record). */
  async function petRow(name: string): Promise<Pet> {
    const row = await env.DB.prepare(
      "INSERT INTO pets (name, category_id, status, created_at) VALUES (?1, 4, 'pending', ?2) RETURNING id",
    )
      .bind(name, now())
      .first<{ id: number }>();
    return { id: Number(row?.id), name, categoryId: 4, status: "pending" };
  }

  it("completed within its 24 hours: replays its pet, creates nothing, writes no new record", async () => {
    const idem = unique("k-legacy").padEnd(200, "x");
    const name = unique("Legacy");
    const body = { name, categoryId: 4, status: "pending" };
    const pet = await petRow(name);
    await legacy(idem, await bodyFingerprint(body), {
      pet,
      createdAt: now() - IDEMPOTENCY_TTL_SECONDS + 120,
    });
    const original = { pet, text: JSON.stringify(pet) };
    await expectReplay(await post(idem, body), original);
    await expectReplay(await post(`"${idem}"`, body), original);
    expect(await petsNamed(name)).toEqual([pet]);
    expect(await record(idem)).toBeNull();
    // Another body under that key is 422, as it was.
    await expectError(await post(idem, { ...body, categoryId: 5 }), 422, "idempotency_key_reused");
  });

  it("completed more than 24 hours ago: no obstacle, the key starts afresh", async () => {
    const idem = unique("k-legacy-old");
    const name = unique("LegacyOld");
    const body = { name, categoryId: 4, status: "pending" };
    const pet = await petRow(name);
    await legacy(idem, await bodyFingerprint(body), {
      pet,
      createdAt: now() - IDEMPOTENCY_TTL_SECONDS - 60,
    });
    const fresh = await expectOriginal(await post(idem, body), name);
    expect(fresh.pet.id).toBeGreaterThan(pet.id);
    await expectReplay(await post(idem, body), fresh);
  });

  it("still in flight: 409 idempotency_key_in_use with Retry-After, for the same or another body", async () => {
    const idem = unique("k");
    const name = unique("InFlight");
    const body = { name, categoryId: 1 };
    await legacy(idem, await bodyFingerprint(body), { inFlightUntil: now() + 30 });
    for (const sent of [body, { name, categoryId: 2 }]) {
      const response = await post(idem, sent);
      await expectError(response, 409, "idempotency_key_in_use", /Idempotency-Key/);
      expect(Number(response.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
      expect(response.headers.get("Idempotent-Replayed")).toBeNull();
    }
    expect(await petsNamed(name)).toEqual([]);
    expect(await record(idem)).toBeNull();
  });

  it("an invalid body with that key is 400, not 409: the body is checked first", async () => {
    const idem = unique("k");
    const body = { name: unique("InFlightBad"), categoryId: 1 };
    await legacy(idem, await bodyFingerprint(body), { inFlightUntil: now() + 30 });
    const refused = await post(idem, { ...body, categoryId: 0 });
    await expectError(refused, 400, "validation_failed", /"categoryId"/);
  });

  it("in flight past its lock (its isolate died): the key is taken over", async () => {
    const idem = unique("k");
    const name = unique("Abandoned");
    const body = { name, categoryId: 1 };
    await legacy(idem, await bodyFingerprint(body), { inFlightUntil: now() - 1 });
    const original = await expectOriginal(await post(idem, body), name);
    await expectReplay(await post(idem, body), original);
    expect(await petsNamed(name)).toHaveLength(1);
  });
});

describe("a create that fails", () => {
  it("releases the key: the 503 is not stored and a retry creates the pet", async () => {
    const idem = unique("k");
    const name = unique("Failed");
    const body = { name, categoryId: 1 };
    // A D1 whose batch() fails: the insert and the record's completion never commit.
    const response = await appWithBatch(() =>
      Promise.reject(new Error("D1_ERROR: Network connection lost.")),
    )(idem, body);
    await expectError(response, 503, "service_unavailable");
    expect(await record(idem)).toBeNull();
    expect(await petsNamed(name)).toEqual([]);

    const original = await expectOriginal(await post(idem, body), name);
    await expectReplay(await post(idem, body), original);
  });
});

describe("expiry", () => {
  async function age(idem: string, seconds: number) {
    await env.DB.prepare(
      "UPDATE idempotency_records SET created_at = created_at - ?3 WHERE api_key_id = ?1 AND key_hash = unhex(?2)",
    )
      .bind(keyId, await sha256Hex(idem), seconds)
      .run();
  }

  it("keeps records exactly 24 hours (the constant the tests below age records by)", () => {
    expect(IDEMPOTENCY_TTL_SECONDS).toBe(86_400);
  });

  it("replays within 24 hours", async () => {
    const idem = unique("k");
    const name = unique("Young");
    const body = { name, categoryId: 1 };
    const original = await expectOriginal(await post(idem, body), name);
    await age(idem, IDEMPOTENCY_TTL_SECONDS - 60);
    await expectReplay(await post(idem, body), original);
    expect(await petsNamed(name)).toHaveLength(1);
  });

  it("does not replay a record older than 24 hours: the key starts afresh", async () => {
    const idem = unique("k");
    const name = unique("Expired");
    const body = { name, categoryId: 1 };
    const first = await expectOriginal(await post(idem, body), name);
    await age(idem, IDEMPOTENCY_TTL_SECONDS + 60);
    const second = await expectOriginal(await post(idem, body), name);
    expect(second.pet.id).toBeGreaterThan(first.pet.id);
    expect(await petsNamed(name)).toHaveLength(2);
    // The new record replays the new pet, and another body is now "reused".
    await expectReplay(await post(idem, body), second);
    await expectError(await post(idem, { name, categoryId: 2 }), 422, "idempotency_key_reused");
  });

  it("an expired record is no obstacle for another body either", async () => {
    const idem = unique("k");
    const name = unique("ExpiredOther");
    await expectOriginal(await post(idem, { name, categoryId: 1 }), name);
    await age(idem, IDEMPOTENCY_TTL_SECONDS + 60);
    const other = unique("ExpiredOther2");
    await expectOriginal(await post(idem, { name: other, categoryId: 1 }), other);
  });

  it("the scheduled handler purges records older than 24 hours and keeps the others", async () => {
    const old = unique("k-old");
    const young = unique("k-young");
    const oldName = unique("PurgeOld");
    const youngName = unique("PurgeYoung");
    await expectOriginal(await post(old, { name: oldName, categoryId: 1 }), oldName);
    const kept = await expectOriginal(
      await post(young, { name: youngName, categoryId: 1 }),
      youngName,
    );
    await age(old, IDEMPOTENCY_TTL_SECONDS + 60);
    await age(young, IDEMPOTENCY_TTL_SECONDS - 60);

    const controller = createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" });
    const ctx = createExecutionContext();
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);

    expect(await record(old)).toBeNull();
    expect(await record(young)).toMatchObject({ pet_id: kept.pet.id });
    for (const table of ["idempotency_records", "idempotency_keys"]) {
      const { n } = (await env.DB.prepare(
        `SELECT COUNT(*) AS n FROM ${table} WHERE created_at < ?1`,
      )
        .bind(Math.floor(Date.now() / 1000) - IDEMPOTENCY_TTL_SECONDS)
        .first<{ n: number }>()) ?? { n: -1 };
      expect(n, table).toBe(0);
    }
    // The purge deletes records, never pets.
    expect(await petsNamed(oldName)).toHaveLength(1);
    await expectReplay(await post(young, { name: youngName, categoryId: 1 }), kept);
  });
});

describe("concurrent retries with one key", () => {
  /** Status, replay marker, Location and body of each answer. */
  async function answersOf(responses: Response[]) {
    return Promise.all(
      responses.map(async (r) => ({
        status: r.status,
        replayed: r.headers.get("Idempotent-Replayed"),
        location: r.headers.get("Location"),
        body: (await r.json()) as Record<string, unknown>,
      })),
    );
  }

  it.each([25, 50])(
    "create exactly one pet out of %i identical requests fired at once; every other one replays it",
    async (concurrency) => {
      const idem = unique("k");
      const name = unique("Concurrent");
      const body = { name, categoryId: 2, status: "available" };
      const answers = await answersOf(
        await Promise.all(Array.from({ length: concurrency }, () => post(idem, body))),
      );
      const statuses = JSON.stringify(answers.map((a) => [a.status, a.replayed]));
      const originals = answers.filter((a) => a.status === 201 && a.replayed === null);
      const replays = answers.filter((a) => a.status === 201 && a.replayed === "true");
      expect(originals, statuses).toHaveLength(1);
      // One transaction per request: nobody sees the key half-claimed, so no 409.
      expect(replays, statuses).toHaveLength(concurrency - 1);
      const pet = originals[0]?.body as unknown as Pet;
      for (const answer of [...originals, ...replays]) {
        expect(answer.body).toEqual(pet);
        expect(answer.location).toBe(`/v1/pets/${pet.id}`);
      }
      expect(await petsNamed(name)).toEqual([pet]);
      expect(await idempotencyRecords(idem, keyId)).toHaveLength(1);
      await expectReplay(await post(idem, body), { pet, text: JSON.stringify(pet) });
    },
  );

  it("create one pet out of 25 requests with different bodies; every other one is 422", async () => {
    const idem = unique("k");
    const name = unique("ConcurrentMixed");
    const answers = await answersOf(
      await Promise.all(
        Array.from({ length: 25 }, (_, i) => post(idem, { name, categoryId: i + 1 })),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    expect(created[0]?.replayed).toBeNull();
    for (const other of answers.filter((a) => a.status !== 201)) {
      expect(other.status).toBe(422);
      expect(other.body).toMatchObject({ code: "idempotency_key_reused", status: 422 });
    }
    expect(await petsNamed(name)).toHaveLength(1);
  });

  it("a first request whose transaction reaches D1 last replays what a retry created meanwhile", async () => {
    // The first request's batch is held until every retry has answered (a slow network
    // to the primary): the retries do not wait for it, one of them creates the pet, and
    // the held one, once it runs, finds the key taken and replays that pet.
    const idem = unique("k");
    const name = unique("Held");
    const body = { name, categoryId: 3 };
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
      setTimeout(resolve, 2_000); // safety valve: a failed assertion, never a hung test
    });
    let batches = 0;
    const send = appWithBatch(async (batch) => {
      batches += 1;
      if (batches === 1) await gate;
      return batch();
    });
    const held = send(idem, body);
    const retries = await Promise.all(Array.from({ length: 10 }, () => send(idem, body)));
    open();
    const first = await held;
    expect(batches).toBe(11);
    const retryAnswers = await answersOf(retries);
    const originals = retryAnswers.filter((a) => a.replayed === null);
    expect(originals).toHaveLength(1);
    expect(retryAnswers.every((a) => a.status === 201)).toBe(true);
    const pet = originals[0]?.body as unknown as Pet;
    await expectReplay(first, { pet, text: JSON.stringify(pet) });
    expect(await petsNamed(name)).toEqual([pet]);
  });
});
