// D1 faults (issue 3, item 5): a binding that throws or rejects, a missing table,
// a transaction that fails half-way. Every answer is 503 with the Error shape
// and no internals, the failure is logged with the request id, and nothing
// of a failed create remains (neither a pet nor an idempotency record).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { LogLine } from "../src/http/request-context.ts";
import { call, createKey, expectError } from "./helpers.ts";
import {
  fixedVerifier,
  type InstrumentedApp,
  instrumentedApp,
} from "./support/instrumented-app.ts";
import { expectCreated, idempotencyRecords, uniqueName } from "./support/requests.ts";

const DRIVER_TEXT = "D1_ERROR: no such table: pets: SQLITE_ERROR (env.DB secret-internal-detail)";

let key: string;
let keyId: number;
beforeAll(async () => {
  ({ key, id: keyId } = await createKey("faults"));
});

/** A DB binding whose every method throws at once. */
function throwingDb(): D1Database {
  const fail = () => {
    throw new Error(DRIVER_TEXT);
  };
  return { prepare: fail, batch: fail, exec: fail, dump: fail, withSession: fail } as never;
}

/** A DB binding that accepts statements but whose every query rejects (network gone). */
function rejectingDb(): D1Database {
  const reject = () => Promise.reject(new Error(DRIVER_TEXT));
  const statement = {
    bind: () => statement,
    first: reject,
    all: reject,
    run: reject,
    raw: reject,
  };
  const db = {
    prepare: () => statement,
    batch: reject,
    exec: reject,
    withSession: () => ({ ...db, getBookmark: () => null }),
  };
  return db as never;
}

/** The real D1, except that every batch (transaction) fails after its own statements ran. */
function failingBatchDb(): D1Database {
  const wrapSession = (session: D1DatabaseSession): D1DatabaseSession =>
    new Proxy(session, {
      get(target, property) {
        if (property === "batch") {
          return (statements: D1PreparedStatement[]) =>
            target.batch([
              ...statements,
              target.prepare("INSERT INTO no_such_table_for_faults (x) VALUES (1)"),
            ]);
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return new Proxy(env.DB, {
    get(target, property) {
      if (property === "withSession") {
        return (constraint?: D1SessionConstraint) => wrapSession(target.withSession(constraint));
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Asserts the 503 of an unreachable or broken database (decisions.md: "503 when the
 * database cannot be reached"), of the Error shape without internals, and that the
 * app logged the failure with the same request id (never the API key).
 */
async function expectServerFailure(app: InstrumentedApp, response: Response) {
  const requestId = response.headers.get("X-Request-Id");
  const status = response.status;
  const text = await response.clone().text();
  const body = await expectError(response, 503, "service_unavailable", /database.*unavailable/i);
  expect(Number(response.headers.get("Retry-After"))).toBeGreaterThan(0);
  expect(Object.keys(body).sort()).toEqual(["code", "message", "status"]);
  for (const internal of [
    "no such table",
    "secret-internal-detail",
    "pets_gone",
    "no_such_table",
    "Error:",
    "stack",
  ]) {
    expect(text).not.toContain(internal);
  }
  const forRequest = app.logs.filter((line: LogLine) => line.request_id === requestId);
  expect(forRequest.some((line) => line.level === "error" && line.msg === "unhandled error")).toBe(
    true,
  );
  expect(forRequest.some((line) => line.msg === "request" && line.status === status)).toBe(true);
  expect(JSON.stringify(app.logs)).not.toContain(key);
}

async function petsNamed(name: string): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM pets WHERE name = ?1")
    .bind(name)
    .first<{ n: number }>();
  return row?.n ?? -1;
}

function idempotencyRecord(idempotencyKey: string) {
  return idempotencyRecords(idempotencyKey, keyId);
}

describe("a DB binding that throws", () => {
  it.each([
    ["throws synchronously", throwingDb],
    ["rejects every query", rejectingDb],
  ])("answers every operation when the binding %s (real key check)", async (_what, makeDb) => {
    const app = instrumentedApp({ db: makeDb() });
    for (const [path, method, json] of [
      ["/v1/pets", "GET", undefined],
      ["/v1/pets", "POST", { name: "Down", categoryId: 1 }],
      ["/v1/pets/1", "GET", undefined],
      ["/v1/store/orders", "GET", undefined],
    ] as const) {
      const response = await app.fetch(path, { method, key, json });
      // The key cannot be checked: an outage must not look like a bad key (401).
      await expectServerFailure(app, response);
    }
  });

  it.each([
    ["throws synchronously", throwingDb],
    ["rejects every query", rejectingDb],
  ])("answers each operation past authentication when the binding %s", async (_what, makeDb) => {
    const app = instrumentedApp({ db: makeDb(), verifier: fixedVerifier(key, keyId) });
    for (const [path, method, json, headers] of [
      ["/v1/pets", "GET", undefined, {}],
      ["/v1/pets?status=sold&limit=5", "GET", undefined, {}],
      ["/v1/pets", "POST", { name: "Down", categoryId: 1 }, {}],
      ["/v1/pets", "POST", { name: "Down", categoryId: 1 }, { "Idempotency-Key": uniqueName() }],
      ["/v1/pets/1", "GET", undefined, {}],
    ] as const) {
      const response = await app.fetch(path, { method, key, json, headers });
      await expectServerFailure(app, response);
    }
  });

  it("still refuses invalid input with 400 before the database is needed", async () => {
    const app = instrumentedApp({ db: rejectingDb(), verifier: fixedVerifier(key, keyId) });
    await expectError(
      await app.fetch("/v1/pets", { method: "POST", key, json: { name: "", categoryId: 1 } }),
      400,
      "validation_failed",
      /"name"/,
    );
  });
});

describe("a missing table", () => {
  async function withTableRenamed<T>(table: string, work: () => Promise<T>): Promise<T> {
    await env.DB.exec(`ALTER TABLE ${table} RENAME TO ${table}_gone`);
    try {
      return await work();
    } finally {
      await env.DB.exec(`ALTER TABLE ${table}_gone RENAME TO ${table}`);
    }
  }

  it("answers 503 for every pet operation when the pets table is missing", async () => {
    const app = instrumentedApp({ db: env.DB });
    const name = uniqueName("missing-table");
    const idempotencyKey = uniqueName("idem");
    await withTableRenamed("pets", async () => {
      for (const [path, method, json, headers] of [
        ["/v1/pets", "GET", undefined, {}],
        ["/v1/pets/1", "GET", undefined, {}],
        ["/v1/pets", "POST", { name, categoryId: 1 }, {}],
        ["/v1/pets", "POST", { name, categoryId: 1 }, { "Idempotency-Key": idempotencyKey }],
      ] as const) {
        await expectServerFailure(app, await app.fetch(path, { method, key, json, headers }));
      }
      // The deployed worker answers the same way.
      const viaWorker = await call("/v1/pets", { key });
      await expectError(viaWorker, 503, "service_unavailable");
    });
    expect(await petsNamed(name)).toBe(0);
    expect(await idempotencyRecord(idempotencyKey)).toEqual([]);

    // The key was not consumed: once the table is back, the same request creates the pet.
    const retry = await call("/v1/pets", {
      method: "POST",
      key,
      headers: { "Idempotency-Key": idempotencyKey },
      json: { name, categoryId: 1 },
    });
    expect(retry.headers.get("Idempotent-Replayed")).toBeNull();
    await expectCreated(retry, { name, categoryId: 1, status: "available" });
    expect(await petsNamed(name)).toBe(1);
  });

  it("answers 503, not 201, when the idempotency table is missing, and creates no pet", async () => {
    const app = instrumentedApp({ db: env.DB });
    const name = uniqueName("no-idem-table");
    await withTableRenamed("idempotency_records", async () => {
      const response = await app.fetch("/v1/pets", {
        method: "POST",
        key,
        headers: { "Idempotency-Key": uniqueName() },
        json: { name, categoryId: 2 },
      });
      await expectServerFailure(app, response);
    });
    expect(await petsNamed(name)).toBe(0);
  });

  it("answers 503, not 401, when the api_keys table is missing", async () => {
    const { key: freshKey } = await createKey("faults-fresh");
    const app = instrumentedApp({ db: env.DB });
    await withTableRenamed("api_keys", async () => {
      const response = await app.fetch("/v1/pets", { key: freshKey });
      expect(response.headers.get("WWW-Authenticate")).toBeNull();
      await expectServerFailure(app, response);
      expect(JSON.stringify(app.logs)).not.toContain(freshKey);
    });
  });
});

describe("a transaction that fails half-way", () => {
  it("leaves neither the pet nor the idempotency record, and the key stays usable", async () => {
    const app = instrumentedApp({ db: failingBatchDb(), verifier: fixedVerifier(key, keyId) });
    const name = uniqueName("half-way");
    const idempotencyKey = uniqueName("idem");
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM pets").first<{ n: number }>();

    const response = await app.fetch("/v1/pets", {
      method: "POST",
      key,
      headers: { "Idempotency-Key": idempotencyKey },
      json: { name, categoryId: 3 },
    });
    await expectServerFailure(app, response);

    expect(await petsNamed(name)).toBe(0);
    expect(await idempotencyRecord(idempotencyKey)).toEqual([]);
    const after = await env.DB.prepare("SELECT COUNT(*) AS n FROM pets").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);

    const retry = await call("/v1/pets", {
      method: "POST",
      key,
      headers: { "Idempotency-Key": idempotencyKey },
      json: { name, categoryId: 3 },
    });
    expect(retry.headers.get("Idempotent-Replayed")).toBeNull();
    const pet = await expectCreated(retry, { name, categoryId: 3, status: "available" });
    expect(await petsNamed(name)).toBe(1);
    expect(await idempotencyRecord(idempotencyKey)).toEqual([
      expect.objectContaining({ api_key_id: keyId, pet_id: pet.id }),
    ]);
  });
});
