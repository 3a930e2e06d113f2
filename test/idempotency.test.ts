// Idempotency-Key on POST /v1/pets (decisions.md, "Beyond the document"):
// replay, reuse with another body, in flight, scoping, validation first,
// expiry after 24 hours and the scheduled purge, and concurrent retries.
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { IDEMPOTENCY_LOCK_SECONDS, IDEMPOTENCY_TTL_SECONDS } from "../src/config.ts";
import worker from "../src/index.ts";
import { bodyFingerprint } from "../src/pets/idempotency.ts";
import { call, createCheckedApp, createKey, expectError, makeRequest } from "./helpers.ts";

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

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

async function record(idempotencyKey: string, apiKeyId = keyId) {
  return env.DB.prepare(
    "SELECT * FROM idempotency_keys WHERE api_key_id = ?1 AND idempotency_key = ?2",
  )
    .bind(apiKeyId, idempotencyKey)
    .first<Record<string, unknown>>();
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
    const { n } = (await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM idempotency_keys WHERE idempotency_key = ?1",
    )
      .bind(idem)
      .first<{ n: number }>()) ?? { n: -1 };
    expect(n).toBe(0);
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

  it("stores the record under the API key's id with the body's fingerprint, status, body, Location and time", async () => {
    const name = unique("Stored");
    const idem = unique("k");
    const body = { name, categoryId: 5, status: "sold" };
    const before = Math.floor(Date.now() / 1000);
    const { pet } = await expectOriginal(await post(idem, body), name);
    const row = await record(idem);
    expect(row).toMatchObject({
      api_key_id: keyId,
      idempotency_key: idem,
      fingerprint: await bodyFingerprint(body),
      state: "completed",
      response_status: 201,
      response_location: `/v1/pets/${pet.id}`,
    });
    expect(JSON.parse(String(row?.response_body))).toEqual(pet);
    expect(Number(row?.created_at)).toBeGreaterThanOrEqual(before);
    expect(Number(row?.created_at)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    // The raw API key is not stored with it.
    expect(JSON.stringify(row)).not.toContain(key);
  });
});

describe("while the first request is in flight", () => {
  async function reserve(idem: string, fingerprint: string, lockedUntil: number) {
    const now = Math.floor(Date.now() / 1000);
    await env.DB.prepare(
      `INSERT INTO idempotency_keys (api_key_id, idempotency_key, fingerprint, state, created_at, locked_until)
       VALUES (?1, ?2, ?3, 'in_flight', ?4, ?5)`,
    )
      .bind(keyId, idem, fingerprint, now, lockedUntil)
      .run();
  }

  it("the same key is 409 idempotency_key_in_use with Retry-After, for the same or another body", async () => {
    const idem = unique("k");
    const name = unique("InFlight");
    const body = { name, categoryId: 1 };
    await reserve(idem, await bodyFingerprint(body), Math.floor(Date.now() / 1000) + 30);
    for (const sent of [body, { name, categoryId: 2 }]) {
      const response = await post(idem, sent);
      await expectError(response, 409, "idempotency_key_in_use", /Idempotency-Key/);
      expect(Number(response.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
      expect(response.headers.get("Idempotent-Replayed")).toBeNull();
    }
    expect(await petsNamed(name)).toEqual([]);
    expect(await record(idem)).toMatchObject({ state: "in_flight" });
  });

  it("an invalid body with that key is 400, not 409: the body is checked first", async () => {
    const idem = unique("k");
    const body = { name: unique("InFlightBad"), categoryId: 1 };
    await reserve(idem, await bodyFingerprint(body), Math.floor(Date.now() / 1000) + 30);
    const refused = await post(idem, { ...body, categoryId: 0 });
    await expectError(refused, 400, "validation_failed", /"categoryId"/);
    expect(await record(idem)).toMatchObject({ state: "in_flight" });
  });

  it(`a reservation left unfinished past its ${IDEMPOTENCY_LOCK_SECONDS} s lock is taken over`, async () => {
    const idem = unique("k");
    const name = unique("Abandoned");
    const body = { name, categoryId: 1 };
    await reserve(idem, await bodyFingerprint(body), Math.floor(Date.now() / 1000) - 1);
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
      "UPDATE idempotency_keys SET created_at = created_at - ?3 WHERE api_key_id = ?1 AND idempotency_key = ?2",
    )
      .bind(keyId, idem, seconds)
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
    expect(await record(young)).toMatchObject({ state: "completed" });
    const { n } = (await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM idempotency_keys WHERE created_at < ?1",
    )
      .bind(Math.floor(Date.now() / 1000) - IDEMPOTENCY_TTL_SECONDS)
      .first<{ n: number }>()) ?? { n: -1 };
    expect(n).toBe(0);
    // The purge deletes records, never pets.
    expect(await petsNamed(oldName)).toHaveLength(1);
    await expectReplay(await post(young, { name: youngName, categoryId: 1 }), kept);
  });
});

describe("concurrent retries with one key", () => {
  const CONCURRENCY = 25;

  it(`create exactly one pet out of ${CONCURRENCY} identical requests`, async () => {
    const idem = unique("k");
    const name = unique("Concurrent");
    const body = { name, categoryId: 2, status: "available" };
    const responses = await Promise.all(
      Array.from({ length: CONCURRENCY }, () => post(idem, body)),
    );
    const answers = await Promise.all(
      responses.map(async (r) => ({
        status: r.status,
        replayed: r.headers.get("Idempotent-Replayed"),
        location: r.headers.get("Location"),
        retryAfter: r.headers.get("Retry-After"),
        body: (await r.json()) as Record<string, unknown>,
      })),
    );
    const originals = answers.filter((a) => a.status === 201 && a.replayed === null);
    const replays = answers.filter((a) => a.status === 201 && a.replayed === "true");
    const inUse = answers.filter((a) => a.status === 409);
    expect(originals, JSON.stringify(answers.map((a) => [a.status, a.replayed]))).toHaveLength(1);
    expect(originals.length + replays.length + inUse.length).toBe(CONCURRENCY);
    const pet = originals[0]?.body as unknown as Pet;
    for (const replay of replays) {
      expect(replay.body).toEqual(pet);
      expect(replay.location).toBe(`/v1/pets/${pet.id}`);
    }
    for (const busy of inUse) {
      expect(busy.body).toMatchObject({ code: "idempotency_key_in_use", status: 409 });
      expect(busy.retryAfter).toBeTruthy();
    }
    expect(await petsNamed(name)).toEqual([pet]);
    // Afterwards every retry replays.
    await expectReplay(await post(idem, body), { pet, text: JSON.stringify(pet) });
  });

  /**
   * Fires `bodies` at once through an app whose create transaction is held until
   * every other request has answered: the first request is certainly in flight
   * while the others arrive. (A safety valve opens the gate after 2 s, well inside
   * the test timeout, so a second create shows up as a failed assertion, not a hung test.)
   */
  async function whileHeld(idem: string, bodies: unknown[]) {
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
      setTimeout(resolve, 2_000);
    });
    let batches = 0;
    const send = appWithBatch(async (batch) => {
      batches += 1;
      await gate;
      return batch();
    });
    let answered = 0;
    const responses = await Promise.all(
      bodies.map((body) =>
        send(idem, body).then((r) => {
          answered += 1;
          if (answered === bodies.length - 1) open();
          return r;
        }),
      ),
    );
    return { responses, batches };
  }

  it(`answer 409 to every retry while the first is held, then replay (${CONCURRENCY} requests)`, async () => {
    const idem = unique("k");
    const name = unique("Held");
    const body = { name, categoryId: 3 };
    const { responses, batches } = await whileHeld(
      idem,
      Array.from({ length: CONCURRENCY }, () => body),
    );
    expect(batches).toBe(1);
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const original = await expectOriginal(created[0] as Response, name);
    for (const busy of responses.filter((r) => r.status !== 201)) {
      await expectError(busy, 409, "idempotency_key_in_use", /still being processed/);
      expect(Number(busy.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    }
    expect(await petsNamed(name)).toEqual([original.pet]);
    await expectReplay(await post(idem, body), original);
  });

  it("answer 409, not 422, to another body while the first is held", async () => {
    const idem = unique("k");
    const name = unique("HeldMixed");
    const bodies = Array.from({ length: CONCURRENCY }, (_, i) => ({ name, categoryId: i + 1 }));
    const { responses, batches } = await whileHeld(idem, bodies);
    expect(batches).toBe(1);
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const original = await expectOriginal(created[0] as Response, name);
    for (const busy of responses.filter((r) => r.status !== 201)) {
      await expectError(busy, 409, "idempotency_key_in_use");
    }
    expect(await petsNamed(name)).toEqual([original.pet]);
    // Once it has finished, another body is 422.
    const other = bodies.find((b) => b.categoryId !== original.pet.categoryId);
    await expectError(await post(idem, other), 422, "idempotency_key_reused");
  });

  it(`create one pet out of ${CONCURRENCY} requests with different bodies; the others get 409 or 422 by timing`, async () => {
    const idem = unique("k");
    const name = unique("ConcurrentMixed");
    const responses = await Promise.all(
      Array.from({ length: CONCURRENCY }, (_, i) => post(idem, { name, categoryId: i + 1 })),
    );
    const statuses = responses.map((r) => r.status);
    const codes = await Promise.all(
      responses.map(async (r) => ((await r.json()) as { code?: string }).code),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.every((s) => s === 201 || s === 409 || s === 422)).toBe(true);
    for (const [i, status] of statuses.entries()) {
      if (status === 409) expect(codes[i]).toBe("idempotency_key_in_use");
      if (status === 422) expect(codes[i]).toBe("idempotency_key_reused");
    }
    expect(await petsNamed(name)).toHaveLength(1);
  });
});
