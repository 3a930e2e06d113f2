// D1 faults: a binding that throws or rejects, a missing table, a transaction that fails
// half-way. Only what D1 documents as transient (a retry can cure it) is 503 with
// Retry-After; anything else is 500 internal_error. No internals reach the client, the
// failure is logged with the request id and its cause (a missing table with the
// migrations the database lacks), and nothing of a failed create remains.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { MIGRATIONS, MIGRATIONS_TABLE } from "../src/db/schema.ts";
import type { LogLine } from "../src/log.ts";
import { call, createKey, expectError, throwingDb } from "./helpers.ts";
import {
  fixedVerifier,
  type InstrumentedApp,
  instrumentedApp,
} from "./support/instrumented-app.ts";
import {
  allPetRows,
  expectCreated,
  idempotencyRecords,
  petCount,
  uniqueName,
} from "./support/requests.ts";

/** Appended to every failure the bindings below raise: it must never reach a client. */
const SECRET = "(env.DB secret-internal-detail)";
const TRANSIENT = `D1_ERROR: Network connection lost. ${SECRET}`;

/** Every failure D1 documents as transient (retry), as its message reads. */
const TRANSIENT_MESSAGES = [
  "D1_ERROR: D1 DB reset because its code was updated.",
  "D1_ERROR: Internal error while starting up D1 DB storage caused object to be reset.",
  "D1_ERROR: Network connection lost.",
  "D1_ERROR: Internal error in D1 DB storage caused object to be reset.",
  "D1_ERROR: Cannot resolve D1 DB due to transient issue on remote node.",
  "D1_ERROR: D1 DB storage operation exceeded timeout which caused object to be reset.",
  "D1_ERROR: D1 DB is overloaded. Requests queued for too long.",
  "D1_ERROR: D1 DB is overloaded. Too many requests queued.",
];

/** Failures a retry does not cure: the service's own faults. */
const FAULT_MESSAGES = [
  "D1_ERROR: no such table: pets: SQLITE_ERROR",
  "D1_ERROR: UNIQUE constraint failed: pets.id: SQLITE_CONSTRAINT",
  'D1_ERROR: near "SELEC": syntax error at offset 0: SQLITE_ERROR',
  "D1_TYPE_ERROR: Type 'undefined' not supported for value 'undefined'",
  "D1_ERROR: D1 DB's isolate exceeded its memory limit and was reset.",
  "D1_ERROR: D1 DB exceeded its CPU time limit and was reset.",
];

let key: string;
let keyId: number;
beforeAll(async () => {
  ({ key, id: keyId } = await createKey("faults"));
});

/** A DB binding that accepts statements but whose every query rejects with `message`. */
function rejectingDb(message: string): D1Database {
  const reject = () => Promise.reject(new Error(message));
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
  const withSession = (constraint?: D1SessionConstraint) => {
    const session = env.DB.withSession(constraint);
    const failing = session.prepare("INSERT INTO no_such_table_for_faults (x) VALUES (1)");
    return {
      prepare: (sql: string) => session.prepare(sql),
      batch: (statements: D1PreparedStatement[]) => session.batch([...statements, failing]),
      getBookmark: () => session.getBookmark(),
    };
  };
  return { prepare: (sql: string) => env.DB.prepare(sql), withSession } as never;
}

/**
 * Asserts the response to a failing database (503 with Retry-After if transient, else 500
 * without it; no internals) and its error log line (cause, request id, no API key).
 */
async function expectServerFailure(
  app: InstrumentedApp,
  response: Response,
  kind: "transient" | "fault",
): Promise<LogLine> {
  const requestId = response.headers.get("X-Request-Id");
  const status = response.status;
  const text = await response.clone().text();
  const body =
    kind === "transient"
      ? await expectError(response, 503, "service_unavailable", /database.*unavailable/i)
      : await expectError(response, 500, "internal_error", /X-Request-Id/);
  if (kind === "transient") {
    expect(Number(response.headers.get("Retry-After"))).toBeGreaterThan(0);
  } else {
    expect(response.headers.get("Retry-After")).toBeNull();
  }
  expect(Object.keys(body).sort()).toEqual(["code", "message", "status"]);
  expect(text).not.toMatch(
    /no such table|secret-internal-detail|pets_gone|no_such_table|Error:|stack/,
  );
  const forRequest = app.logs.filter((line: LogLine) => line.request_id === requestId);
  const error = forRequest.find((line) => line.level === "error" && line.msg === "unhandled error");
  expect(error, JSON.stringify(forRequest)).toBeDefined();
  expect(`${error?.error} ${error?.cause}`).toMatch(/D1_|no such table|TypeError/);
  expect(forRequest.find((line) => line.msg === "request")).toMatchObject({
    level: "error",
    status,
  });
  expect(JSON.stringify(app.logs)).not.toContain(key);
  return error as LogLine;
}

const petsNamed = async (name: string) =>
  (await allPetRows()).filter((r) => r.name === name).length;

/** The failed create sent again through the worker: not a replay, the pet created once. */
async function expectRetryCreates(name: string, idempotencyKey: string, categoryId: number) {
  const retry = await call("/v1/pets", {
    method: "POST",
    key,
    headers: { "Idempotency-Key": idempotencyKey },
    json: { name, categoryId },
  });
  expect(retry.headers.get("Idempotent-Replayed")).toBeNull();
  const pet = await expectCreated(retry, { name, categoryId, status: "available" });
  expect(await petsNamed(name)).toBe(1);
  return pet;
}

describe("a DB binding that throws", () => {
  it.each([
    ["throws synchronously", throwingDb],
    ["rejects every query", rejectingDb],
  ])(
    "responds to each operation past authentication when the binding %s; invalid input is still a 400",
    async (_what, makeDb) => {
      const app = instrumentedApp({ db: makeDb(TRANSIENT), verifier: fixedVerifier(key, keyId) });
      for (const [path, method, json, headers] of [
        ["/v1/pets", "GET", undefined, {}],
        ["/v1/pets?status=sold&limit=5", "GET", undefined, {}],
        ["/v1/pets", "POST", { name: "Down", categoryId: 1 }, {}],
        ["/v1/pets", "POST", { name: "Down", categoryId: 1 }, { "Idempotency-Key": uniqueName() }],
        ["/v1/pets/1", "GET", undefined, {}],
      ] as const) {
        const response = await app.fetch(path, { method, key, json, headers });
        await expectServerFailure(app, response, "transient");
      }
      // Invalid input is still refused with 400: the database is not needed for that.
      const invalid = { method: "POST", key, json: { name: "", categoryId: 1 } };
      await expectError(await app.fetch("/v1/pets", invalid), 400, "validation_failed", /"name"/);
    },
  );
});

describe("the class of a D1 failure decides the response", () => {
  // With the real key check: an outage must not look like a bad key (401).
  const requests = [
    ["/v1/pets", "GET", undefined],
    ["/v1/pets", "POST", { name: "Down", categoryId: 1 }],
    ["/v1/pets/1", "GET", undefined],
    ["/v1/store/orders", "GET", undefined],
  ] as const;

  it.each([
    ...TRANSIENT_MESSAGES.map((message) => ["transient", message] as const),
    ...FAULT_MESSAGES.map((message) => ["fault", message] as const),
  ])(
    "%s (503 with Retry-After if transient, else 500), logged with the cause: %s",
    async (kind, message) => {
      for (const makeDb of [throwingDb, rejectingDb]) {
        const app = instrumentedApp({ db: makeDb(`${message} ${SECRET}`) });
        for (const [path, method, json] of requests) {
          const response = await app.fetch(path, { method, key, json });
          const line = await expectServerFailure(app, response, kind);
          expect(`${line.error} ${line.cause}`).toContain(message);
        }
      }
    },
  );

  it("a binding that throws something else than a D1 error is 500 too", async () => {
    const db = { withSession: () => ({ prepare: undefined, getBookmark: () => null }) };
    const app = instrumentedApp({ db: db as never, verifier: fixedVerifier(key, keyId) });
    const response = await app.fetch("/v1/pets/1", { key });
    const line = await expectServerFailure(app, response, "fault");
    expect(line.error).toMatch(/^TypeError/);
  });
});

describe("a missing table", () => {
  async function withTablesRenamed<T>(tables: string[], work: () => Promise<T>): Promise<T> {
    for (const t of tables) await env.DB.exec(`ALTER TABLE ${t} RENAME TO ${t}_gone`);
    try {
      return await work();
    } finally {
      for (const t of tables) await env.DB.exec(`ALTER TABLE ${t}_gone RENAME TO ${t}`);
    }
  }

  /** Runs `work` with `migration` unrecorded in d1_migrations, as if never applied. */
  async function withMigrationUnrecorded<T>(migration: string, work: () => Promise<T>) {
    const row = await env.DB.prepare(`SELECT * FROM ${MIGRATIONS_TABLE} WHERE name = ?1`)
      .bind(migration)
      .first<{ id: number; name: string; applied_at: string }>();
    expect(row).not.toBeNull();
    await env.DB.prepare(`DELETE FROM ${MIGRATIONS_TABLE} WHERE name = ?1`).bind(migration).run();
    try {
      return await work();
    } finally {
      await env.DB.prepare(
        `INSERT INTO ${MIGRATIONS_TABLE} (id, name, applied_at) VALUES (?1, ?2, ?3)`,
      )
        .bind(row?.id, row?.name, row?.applied_at)
        .run();
    }
  }

  it("responds with 500 for every pet operation when the pets table is missing, naming its migration in the log", async () => {
    const app = instrumentedApp({ db: env.DB });
    const name = uniqueName("missing-table");
    const idempotencyKey = uniqueName("idem");
    await withMigrationUnrecorded("0001_create_pets.sql", () =>
      withTablesRenamed(["pets"], async () => {
        for (const [path, method, json, headers] of [
          ["/v1/pets", "GET", undefined, {}],
          ["/v1/pets/1", "GET", undefined, {}],
          ["/v1/pets", "POST", { name, categoryId: 1 }, {}],
          ["/v1/pets", "POST", { name, categoryId: 1 }, { "Idempotency-Key": idempotencyKey }],
        ] as const) {
          const response = await app.fetch(path, { method, key, json, headers });
          const line = await expectServerFailure(app, response, "fault");
          expect(line).toMatchObject({
            missing: "table pets",
            missing_migrations: "0001_create_pets.sql",
          });
          expect(line.hint).toContain("wrangler d1 migrations apply DB");
        }
        // The deployed worker responds the same way.
        const viaWorker = await call("/v1/pets", { key });
        await expectError(viaWorker, 500, "internal_error");
      }),
    );
    expect(await petsNamed(name)).toBe(0);
    expect(await idempotencyRecords(idempotencyKey, `key:${keyId}`)).toEqual([]);

    // The key was not consumed: once the table is back, the same request creates the pet.
    await expectRetryCreates(name, idempotencyKey, 1);
  });

  it("responds with 500, not 201, when the idempotency table is missing, and creates no pet", async () => {
    const app = instrumentedApp({ db: env.DB });
    const name = uniqueName("no-idem-table");
    await withMigrationUnrecorded("0005_idempotency_records.sql", () =>
      withTablesRenamed(["idempotency_records"], async () => {
        const response = await app.fetch("/v1/pets", {
          method: "POST",
          key,
          headers: { "Idempotency-Key": uniqueName() },
          json: { name, categoryId: 2 },
        });
        const line = await expectServerFailure(app, response, "fault");
        expect(line.missing_migrations).toBe("0005_idempotency_records.sql");
      }),
    );
    expect(await petsNamed(name)).toBe(0);
  });

  it("responds with 500, not 401, without api_keys or without any table, naming the migrations missing", async () => {
    const { key: freshKey } = await createKey("faults-fresh");
    const app = instrumentedApp({ db: env.DB });
    for (const [tables, missing] of [
      // Every migration recorded: the table went missing outside migrations/.
      [["api_keys"], expect.stringMatching(/^none recorded missing/)],
      // A database nobody migrated: every migration named.
      [["pets", "api_keys", "idempotency_records", MIGRATIONS_TABLE], MIGRATIONS.join(", ")],
    ] as const) {
      await withTablesRenamed([...tables], async () => {
        const response = await app.fetch("/v1/pets", { key: freshKey });
        expect(response.headers.get("WWW-Authenticate")).toBeNull();
        const line = await expectServerFailure(app, response, "fault");
        expect(line).toMatchObject({ missing: "table api_keys", missing_migrations: missing });
      });
    }
    expect(JSON.stringify(app.logs)).not.toContain(freshKey);
  });
});

describe("a transaction that fails half-way", () => {
  it("leaves neither the pet nor the idempotency record, and the key stays usable", async () => {
    const app = instrumentedApp({ db: failingBatchDb(), verifier: fixedVerifier(key, keyId) });
    const name = uniqueName("half-way");
    const idempotencyKey = uniqueName("idem");
    const before = await petCount();

    const response = await app.fetch("/v1/pets", {
      method: "POST",
      key,
      headers: { "Idempotency-Key": idempotencyKey },
      json: { name, categoryId: 3 },
    });
    await expectServerFailure(app, response, "fault");

    expect(await petsNamed(name)).toBe(0);
    expect(await idempotencyRecords(idempotencyKey, `key:${keyId}`)).toEqual([]);
    expect(await petCount()).toBe(before);

    const pet = await expectRetryCreates(name, idempotencyKey, 3);
    expect(await idempotencyRecords(idempotencyKey, `key:${keyId}`)).toEqual([
      expect.objectContaining({ scope: `key:${keyId}`, pet_id: pet.id }),
    ]);
  });
});

describe("the migrations the worker knows of", () => {
  it("are the files of migrations/, in order (the log names them from this list)", () => {
    expect([...MIGRATIONS]).toEqual(env.TEST_MIGRATIONS.map((m) => m.name));
  });
});
