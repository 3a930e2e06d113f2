// Idempotency-Key on POST /v1/pets: replay, reuse with another body, scoping to the key's
// owner (its account, or an operator key's rotation chain), validation first, the
// fixed-size record, expiry after 24 hours and the scheduled purge, concurrent retries.
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
import { canonicalJson } from "../src/pets/idempotency.ts";
import type { Pet } from "../src/pets/schemas.ts";
import {
  call,
  createAccount,
  createCheckedApp,
  createKey,
  expectError,
  makeRequest,
  rotateKey,
} from "./helpers.ts";
import {
  idempotencyRecords,
  postOptions,
  type RefusalChecker,
  refusalChecker,
} from "./support/requests.ts";

let key: string;
let keyId: number;
let checker: RefusalChecker;

beforeAll(async () => {
  checker = await refusalChecker("idempotency");
  ({ key, id: keyId } = checker);
});

/** A name (and Idempotency-Key) no other test uses. */
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;

/** A fresh Idempotency-Key, and a pet body `{ name, categoryId: 1, ...extra }` with a fresh name. */
function fresh(prefix: string, extra: Record<string, unknown> = {}) {
  const name = unique(prefix);
  return { idem: unique("k"), name, body: { name, categoryId: 1, ...extra } };
}

/** POST /v1/pets: an object sent as JSON, a string byte for byte. */
function post(
  idempotencyKey: string | undefined,
  body: unknown,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers = {
    "Content-Type": "application/json",
    ...(idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey }),
    ...options.headers,
  };
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return call("/v1/pets", { method: "POST", key: options.key ?? key, headers, body: text });
}

async function petsNamed(name: string): Promise<Pet[]> {
  const { results } = await env.DB.prepare(
    "SELECT id, name, category_id AS categoryId, status FROM pets WHERE name = ?1 ORDER BY id",
  )
    .bind(name)
    .all<Pet>();
  return results;
}

/** The record of `idempotencyKey` under key owner `scope` (by default the tests' key's), or null. */
async function record(idempotencyKey: string, scope = `key:${keyId}`) {
  return (await idempotencyRecords(idempotencyKey, scope))[0] ?? null;
}

/**
 * POSTs through a fresh app whose D1 runs `batch` (the create's transaction)
 * through `around`, so a test can fail or hold the create while it is in flight.
 */
function appWithBatch(
  around: (batch: () => Promise<D1Result[]>) => Promise<D1Result[]>,
): (idempotencyKey: string, body: unknown) => Promise<Response> {
  // Only a session's batches: the creates run in one; the key's use, written after the
  // response, goes to the binding itself.
  const wrap = (db: D1Database | D1DatabaseSession): unknown =>
    new Proxy(db, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property === "batch" && target !== env.DB) {
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
  return async (idem, json) => {
    const headers = { "Idempotency-Key": idem };
    return app.fetch(makeRequest("/v1/pets", { method: "POST", key, json, headers }), appEnv);
  };
}

type Original = { pet: Pet; text: string };

/** Asserts the first (original) 201 of a create: the pet, Location, no replay marker. */
async function expectOriginal(response: Response, name: string): Promise<Original> {
  const text = await response.text();
  expect(response.status, text).toBe(201);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(response.headers.get("Idempotent-Replayed")).toBeNull();
  const pet = JSON.parse(text) as Pet;
  expect(pet.name).toBe(name);
  expect(response.headers.get("Location")).toBe(`/v1/pets/${pet.id}`);
  return { pet, text };
}

/** POSTs `body` and asserts the original 201 of its pet. */
async function create(
  idem: string | undefined,
  body: { name: string; categoryId: number },
  options = {},
) {
  return expectOriginal(await post(idem, body, options), body.name);
}

/** Asserts a replay of `original`: same status, body (byte for byte) and Location. */
async function expectReplay(response: Response, original: Original) {
  const text = await response.text();
  expect(response.status, text).toBe(201);
  expect(response.headers.get("Idempotent-Replayed")).toBe("true");
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(response.headers.get("Location")).toBe(`/v1/pets/${original.pet.id}`);
  expect(response.headers.get("X-Request-Id")).toBeTruthy();
  expect(JSON.parse(text)).toEqual(original.pet);
  expect(text).toBe(original.text);
}

/** POSTs `body` and asserts that it replays `original`. */
async function replays(idem: string, body: unknown, original: Original, options = {}) {
  await expectReplay(await post(idem, body, options), original);
}

describe("a repeated request", () => {
  it("with the same key and body replays the first response and creates nothing", async () => {
    const { idem, name, body } = fresh("Replay", { categoryId: 3, status: "pending" });
    const original = await create(idem, body);
    for (let i = 0; i < 3; i++) await replays(idem, body, original);
    expect(await petsNamed(name)).toEqual([original.pet]);
  });

  it("replays a name with quotes, backslashes, non-ASCII and astral characters exactly", async () => {
    const { idem, name, body } = fresh('Zoë "the\\cat" 🐈 日本', { categoryId: 9007199254740991 });
    const original = await create(idem, body);
    expect(original.pet).toMatchObject({ categoryId: 9007199254740991, status: "available" });
    await replays(idem, body, original);
    expect(await petsNamed(name)).toHaveLength(1);
  });

  it("counts as the same body when only key order and white space differ", async () => {
    const { idem, name } = fresh("Order");
    const text = `{"name":${JSON.stringify(name)},"categoryId":4}`;
    const original = await expectOriginal(await post(idem, text), name);
    await replays(idem, `\n{ "categoryId" : 4.0 ,\t"name" : ${JSON.stringify(name)} }\n`, original);
    expect(await petsNamed(name)).toHaveLength(1);
  });

  it("responds to a replay with the CORS headers, so browsers can read Idempotent-Replayed", async () => {
    const { idem, body } = fresh("Cors");
    const original = await create(idem, body);
    const replay = await post(idem, body, { headers: { Origin: "https://app.example" } });
    expect(replay.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(replay.headers.get("Access-Control-Expose-Headers")).toMatch(/Idempotent-Replayed/i);
    await expectReplay(replay, original);
  });

  it("with the same key and another body is 422 idempotency_key_reused and creates nothing", async () => {
    const { idem, name, body } = fresh("Reused");
    const original = await create(idem, body);
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
    await replays(idem, body, original);
  });

  it("without an Idempotency-Key creates a new pet every time", async () => {
    const { name, body } = fresh("NoKey");
    const a = await create(undefined, body);
    const b = await create(undefined, body);
    expect(b.pet.id).toBeGreaterThan(a.pet.id);
    expect(await petsNamed(name)).toHaveLength(2);
  });
});

describe("the Idempotency-Key value", () => {
  it('written as a structured-field string ("abc") means abc', async () => {
    const { idem, body } = fresh("Sf");
    await replays(idem, body, await create(`"${idem}"`, body));
    expect(await record(idem)).not.toBeNull();
    expect(await record(`"${idem}"`)).toBeNull();
  });

  it('unescapes \\" and \\\\ inside a structured-field string', async () => {
    const { body } = fresh("SfEsc");
    const idem = `${unique("k")}"q\\b`;
    const sf = `"${idem.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
    await replays(idem, body, await create(sf, body));
  });

  it.each([
    // 255 after unquoting: inside quotes it is the bare key.
    ["quoted", (idem: string) => `"${idem}"`],
    ["bare, space and tilde included", (idem: string) => idem],
  ])("may be exactly 255 printable ASCII characters, %s", async (_what, sent) => {
    const { body } = fresh("Long");
    const idem = `${crypto.randomUUID()} ~!#`.padEnd(255, "~");
    await replays(idem, body, await create(sent(idem), body));
  });

  it.each([
    ["empty", ""],
    ["an empty structured-field string", '""'],
    ["256 characters", "k".repeat(256)],
    ["256 characters inside quotes", `"${"k".repeat(256)}"`],
    ["a tab", "a\tb"],
    ["U+0001", "abc\u0001def"],
    ["DEL", "a\u007fb"],
  ])("is refused before D1 with 400 invalid_idempotency_key when %s", async (_what, value) => {
    const headers = { "Content-Type": "application/json", "Idempotency-Key": value };
    const options = postOptions(key, '{"name":"Rex","categoryId":1}', headers);
    const message = /"Idempotency-Key"/;
    await checker.expectRefused("/v1/pets", 400, "invalid_idempotency_key", message, options);
  });
});

describe("a request refused before it is processed", () => {
  it.each([
    [400, "validation_failed", '{"name":"","categoryId":1}', "application/json"],
    [400, "invalid_json", '{"name":', "application/json"],
    [413, "payload_too_large", `{"name":"${"x".repeat(17_000)}"}`, "application/json"],
    [415, "unsupported_media_type", '{"name":"x","categoryId":1}', "text/plain"],
  ])("(%i %s) stores nothing and does not consume the key", async (status, code, text, type) => {
    const { idem, body } = fresh("AfterRefusal");
    const refused = await post(idem, text, { headers: { "Content-Type": type } });
    await expectError(refused, status, code);
    expect(refused.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await record(idem)).toBeNull();
    // The same key then works for a valid request, which is an original, not a replay.
    await replays(idem, body, await create(idem, body));
  });

  it("checks the body before the key's history: 400, not a replay or 422, for a used key", async () => {
    const { idem, body } = fresh("UsedThenBad");
    const original = await create(idem, body);
    const refused = await post(idem, '{"name":"","categoryId":1}');
    await expectError(refused, 400, "validation_failed", /"name"/);
    expect(refused.headers.get("Idempotent-Replayed")).toBeNull();
    await replays(idem, body, original);
  });

  it("a 401 stores nothing either", async () => {
    const { idem, body } = fresh("NoAuth");
    await expectError(await post(idem, body, { key: "psk_nope" }), 401, "unauthorized");
    expect(await idempotencyRecords(idem)).toEqual([]);
  });
});

describe("scoping", () => {
  it("a create retried with the rotated successor of its key replays: one pet, through the whole chain", async () => {
    const { key: first, id } = await createKey("idempotency-chain");
    const { idem, name, body } = fresh("Rotated");
    const original = await create(idem, body, { key: first });
    const second = await rotateKey(id, { graceSeconds: 0 });
    const third = await rotateKey(second.created[0]?.id ?? 0, { graceSeconds: 3600 });
    await replays(idem, body, original, { key: second.key });
    await replays(idem, body, original, { key: third.key });
    await expectError(
      await post(idem, { name, categoryId: 9 }, { key: third.key }),
      422,
      "idempotency_key_reused",
    );
    expect(await petsNamed(name)).toHaveLength(1);
    // The record is the chain's, under its first key.
    expect(await record(idem, `key:${id}`)).toMatchObject({ pet_id: original.pet.id });
  });

  it("every key of one account shares the account's Idempotency-Keys; another account's do not", async () => {
    const [a, b, c] = [
      await createKey("acct-a"),
      await createKey("acct-b"),
      await createKey("acct-c"),
    ];
    const { accountId } = await createAccount([a.id, b.id]);
    await createAccount([c.id]);
    const { idem, name, body } = fresh("Account");
    const original = await create(idem, body, { key: a.key });
    await replays(idem, body, original, { key: b.key });
    const successor = await rotateKey(b.id, { graceSeconds: 0 }); // keeps b's account
    await replays(idem, body, original, { key: successor.key });
    await expectError(
      await post(idem, { name, categoryId: 2 }, { key: b.key }),
      422,
      "idempotency_key_reused",
    );
    const theirs = await create(idem, body, { key: c.key });
    expect(theirs.pet.id).not.toBe(original.pet.id);
    expect(await petsNamed(name)).toHaveLength(2);
    expect(await record(idem, accountId)).toMatchObject({ pet_id: original.pet.id });
  });

  it("keeps keys per owner: two operator keys use one Idempotency-Key independently", async () => {
    const other = { key: (await createKey("idempotency-other")).key };
    const { idem, name, body } = fresh("Scoped");
    const mine = await create(idem, body);
    const theirs = await create(idem, body, other);
    expect(theirs.pet.id).not.toBe(mine.pet.id);
    // Another body under the other API key is not "reused": it is the other key's first use.
    const third = { key: (await createKey("idempotency-third")).key };
    await create(idem, { name: unique("Scoped2"), categoryId: 7 }, third);
    // Each API key replays its own first response.
    await replays(idem, body, mine);
    await replays(idem, body, theirs, other);
    expect(await petsNamed(name)).toHaveLength(2);
  });

  it("stores the key's and the body's SHA-256, the pet's id and the time: never the key itself", async () => {
    const { body } = fresh("Stored", { categoryId: 5, status: "sold" });
    const idem = unique("k").padEnd(255, "~");
    const before = Math.floor(Date.now() / 1000);
    const { pet } = await create(idem, body);
    const row = await record(idem);
    expect(row).toEqual({
      scope: `key:${keyId}`,
      key_hash: await sha256Hex(idem),
      fingerprint: await sha256Hex(canonicalJson(body)),
      pet_id: pet.id,
      created_at: expect.any(Number),
    });
    expect(Number(row?.created_at)).toBeGreaterThanOrEqual(before);
    expect(Number(row?.created_at)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    // Fixed size whatever the key's length (32 bytes of key, 32 of fingerprint), and
    // neither the Idempotency-Key nor the API key is stored.
    const { results } = await env.DB.prepare(
      "SELECT *, length(key_hash) AS k, length(fingerprint) AS f FROM idempotency_records WHERE pet_id = ?1",
    )
      .bind(pet.id)
      .all();
    expect(results).toEqual([expect.objectContaining({ k: 32, f: 32 })]);
    expect(JSON.stringify(results)).not.toContain(idem.slice(0, 40));
    expect(JSON.stringify(results)).not.toContain(key);
  });

  it("keeps records in idempotency_records only: the first table (0003) and its index are dropped", async () => {
    const { results } = await env.DB.prepare(
      "SELECT type, name FROM sqlite_master WHERE tbl_name LIKE 'idempotency%' ORDER BY name",
    ).all();
    expect(results).toEqual([
      { type: "table", name: "idempotency_records" },
      { type: "index", name: "idempotency_records_created_at" },
    ]);
  });
});

it("a create that fails releases the key: the 503 is not stored and a retry creates the pet", async () => {
  const { idem, name, body } = fresh("Failed");
  // A D1 whose batch() fails: the insert and the record's completion never commit.
  const lost = () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
  await expectError(await appWithBatch(lost)(idem, body), 503, "service_unavailable");
  expect(await record(idem)).toBeNull();
  expect(await petsNamed(name)).toEqual([]);
  await replays(idem, body, await create(idem, body));
});

describe("expiry", () => {
  async function age(idem: string, seconds: number) {
    await env.DB.prepare(
      "UPDATE idempotency_records SET created_at = created_at - ?3 WHERE scope = ?1 AND key_hash = unhex(?2)",
    )
      .bind(`key:${keyId}`, await sha256Hex(idem), seconds)
      .run();
  }

  it("keeps records exactly 24 hours (the constant the tests below age records by)", () => {
    expect(IDEMPOTENCY_TTL_SECONDS).toBe(86_400);
  });

  it("does not replay a record older than 24 hours: the key starts afresh", async () => {
    const { idem, name, body } = fresh("Expired");
    const first = await create(idem, body);
    await age(idem, IDEMPOTENCY_TTL_SECONDS + 60);
    const second = await create(idem, body);
    expect(second.pet.id).toBeGreaterThan(first.pet.id);
    expect(await petsNamed(name)).toHaveLength(2);
    // The new record replays the new pet, and another body is now "reused".
    await replays(idem, body, second);
    await expectError(await post(idem, { name, categoryId: 2 }), 422, "idempotency_key_reused");
  });

  it("an expired record is no obstacle for another body either", async () => {
    const { idem, body } = fresh("ExpiredOther");
    await create(idem, body);
    await age(idem, IDEMPOTENCY_TTL_SECONDS + 60);
    await create(idem, { name: unique("ExpiredOther2"), categoryId: 1 });
  });

  it("the scheduled handler purges records older than 24 hours; a younger one is kept and replays", async () => {
    const old = fresh("PurgeOld");
    const young = fresh("PurgeYoung");
    await create(old.idem, old.body);
    const kept = await create(young.idem, young.body);
    await age(old.idem, IDEMPOTENCY_TTL_SECONDS + 60);
    await age(young.idem, IDEMPOTENCY_TTL_SECONDS - 60);

    const controller = createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" });
    const ctx = createExecutionContext();
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);

    expect(await record(old.idem)).toBeNull();
    expect(await record(young.idem)).toMatchObject({ pet_id: kept.pet.id });
    const { results } = await env.DB.prepare(
      "SELECT 1 FROM idempotency_records WHERE created_at < ?1",
    )
      .bind(Math.floor(Date.now() / 1000) - IDEMPOTENCY_TTL_SECONDS)
      .all();
    expect(results).toEqual([]);
    // The purge deletes records, never pets.
    expect(await petsNamed(old.name)).toHaveLength(1);
    await replays(young.idem, young.body, kept);
    expect(await petsNamed(young.name)).toHaveLength(1);
  });
});

describe("concurrent retries with one key", () => {
  /** Sends `count` requests at once; the status, replay marker, Location and body of each. */
  async function fire(count: number, send: (i: number) => Promise<Response>) {
    const responses = await Promise.all(Array.from({ length: count }, (_, i) => send(i)));
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
      const { idem, name, body } = fresh("Concurrent", { categoryId: 2, status: "available" });
      const responses = await fire(concurrency, () => post(idem, body));
      const statuses = JSON.stringify(responses.map((a) => [a.status, a.replayed]));
      const originals = responses.filter((a) => a.status === 201 && a.replayed === null);
      const replayed = responses.filter((a) => a.status === 201 && a.replayed === "true");
      expect(originals, statuses).toHaveLength(1);
      // One transaction per request: nobody sees the key half-claimed.
      expect(replayed, statuses).toHaveLength(concurrency - 1);
      const pet = originals[0]?.body as unknown as Pet;
      for (const response of [...originals, ...replayed]) {
        expect(response.body).toEqual(pet);
        expect(response.location).toBe(`/v1/pets/${pet.id}`);
      }
      expect(await petsNamed(name)).toEqual([pet]);
      expect(await idempotencyRecords(idem, `key:${keyId}`)).toHaveLength(1);
      await replays(idem, body, { pet, text: JSON.stringify(pet) });
    },
  );

  it("create one pet out of 25 requests with different bodies; every other one is 422", async () => {
    const { idem, name } = fresh("ConcurrentMixed");
    const responses = await fire(25, (i) => post(idem, { name, categoryId: i + 1 }));
    const created = responses.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    expect(created[0]?.replayed).toBeNull();
    for (const other of responses.filter((a) => a.status !== 201)) {
      expect(other.status).toBe(422);
      expect(other.body).toMatchObject({ code: "idempotency_key_reused", status: 422 });
    }
    expect(await petsNamed(name)).toHaveLength(1);
  });

  it("a first request whose transaction reaches D1 last replays what a retry created meanwhile", async () => {
    // The first request's batch is held until every retry has responded (a slow network
    // to the primary): the retries do not wait for it, one of them creates the pet, and
    // the held one, once it runs, finds the key taken and replays that pet.
    const { idem, name, body } = fresh("Held", { categoryId: 3 });
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
    const retryResponses = await fire(10, () => send(idem, body));
    open();
    const first = await held;
    expect(batches).toBe(11);
    const originals = retryResponses.filter((a) => a.replayed === null);
    expect(originals).toHaveLength(1);
    expect(retryResponses.every((a) => a.status === 201)).toBe(true);
    const pet = originals[0]?.body as unknown as Pet;
    await expectReplay(first, { pet, text: JSON.stringify(pet) });
    expect(await petsNamed(name)).toEqual([pet]);
  });
});
