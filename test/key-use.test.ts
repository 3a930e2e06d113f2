// What each key did, written after its responses (src/auth/key-use.ts; docs/platform.md,
// "Usage"): its responses per UTC hour, operation, status and Error code, and its last use,
// written by a timer with no further traffic, every response within one interval of itself,
// at most one write per key per interval per isolate, nothing dropped for other keys, and
// never failing or delaying a request. The cron deletes counts older than 400 days.
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKeyUseRecorder } from "../src/auth/key-use.ts";
import { USAGE_KEEP_DAYS, USAGE_WRITE_INTERVAL_MS } from "../src/config.ts";
import worker from "../src/index.ts";
import type { LogLine } from "../src/log.ts";
import {
  type CallOptions,
  createCheckedApp,
  createKey,
  insertPet,
  makeRequest,
  methodNotOn,
  throwingDb,
} from "./helpers.ts";

/** 2026-11-24T14:59:55Z: five seconds before an hour ends. */
const NOW = Date.UTC(2026, 10, 24, 14, 59, 55);
const HOUR_14 = Date.UTC(2026, 10, 24, 14) / 1000;
const HOUR_15 = HOUR_14 + 3600;
const INTERVAL = USAGE_WRITE_INTERVAL_MS;

interface Row {
  hour_start: number;
  operation: string;
  status: number;
  code: string;
  count: number;
}

/** The key's usage rows, as D1 holds them. */
async function usage(keyId: number): Promise<Row[]> {
  const { results } = await env.DB.prepare(
    `SELECT hour_start, operation, status, code, count FROM api_key_usage WHERE api_key_id = ?1
     ORDER BY hour_start, operation, status, code`,
  )
    .bind(keyId)
    .all<Row>();
  return results;
}
const total = (rows: Row[]) => rows.reduce((n, r) => n + r.count, 0);
/** A usage row as the API writes it. */
const row = (operation: string, status: number, code = "", count = 1, hour_start = HOUR_14) => ({
  hour_start,
  operation,
  status,
  code,
  count,
});

const lastUsedAt = (id: number) =>
  env.DB.prepare("SELECT last_used_at FROM api_keys WHERE id = ?1").bind(id).first("last_used_at");

/**
 * One isolate of the real app on a hand-driven clock (`clock.now`, ms). The recorder's
 * timers wait until `advance` moves the clock past them; `advance` then waits for the
 * writes they start. `batches` notes when each D1 batch ran and for which key; `db`
 * replaces env.DB.
 */
function isolate(options: { db?: D1Database } = {}) {
  const clock = { now: NOW };
  const logs: LogLine[] = [];
  const timers: Array<{ at: number; fire: () => void }> = [];
  let unsettled = 0;
  /** Work whose timer was lost (`lose`): it never settles. */
  let lost = 0;
  const ctx = {
    waitUntil(work: Promise<unknown>) {
      unsettled++;
      work.finally(() => unsettled--);
    },
    passThroughOnException() {},
    props: {},
  } as unknown as ExecutionContext;
  const batches: Array<{ at: number }> = [];
  const base = options.db ?? env.DB;
  const db = new Proxy(base, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property !== "batch") return typeof value === "function" ? value.bind(target) : value;
      return (statements: D1PreparedStatement[]) => {
        batches.push({ at: clock.now });
        return (value as D1Database["batch"]).call(target, statements);
      };
    },
  });
  const log = (line: LogLine) => logs.push(line);
  const keyUse = createKeyUseRecorder(() => clock.now, log, {
    sleep: (ms) => new Promise<void>((fire) => timers.push({ at: clock.now + ms, fire })),
  });
  const app = createCheckedApp({ clock: () => clock.now, log, keyUse });
  const appEnv: Env = { ...env, DB: db };

  /** Waits until every piece of work is done or waits for a timer. */
  async function settle() {
    for (let i = 0; unsettled - lost > timers.length; i++) {
      if (i > 2000) throw new Error("the recorder's work never settled");
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  return {
    clock,
    logs,
    batches,
    keyUse,
    env: appEnv,
    ctx,
    /** The response; its work after the response runs until it waits for a timer. */
    async send(path: string, call: CallOptions, bindings: Partial<Env> = {}) {
      const response = await app.fetch(makeRequest(path, call), { ...appEnv, ...bindings }, ctx);
      await settle();
      return response;
    },
    /** Moves the clock by `ms`, firing the timers due meanwhile in order, each write done. */
    async advance(ms: number) {
      const until = clock.now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const at = timers[0]?.at;
        if (at === undefined || at > until) break;
        clock.now = Math.max(clock.now, at);
        // Every timer of that instant, then their writes.
        for (const timer of timers.splice(0, timers.filter((t) => t.at === at).length))
          timer.fire();
        await settle();
      }
      clock.now = until;
    },
    /** Timers waiting: their instants. */
    pending: () => timers.map((t) => t.at).sort((a, b) => a - b),
    /** The runtime ends the work that waits for a timer: those timers never fire. */
    lose() {
      lost += timers.splice(0).length;
    },
  };
}

/** A rate limiter that refuses everything: the 429 of a key over its limit. */
const refusing = { limit: async () => ({ success: false }) } as RateLimit;

describe("responses per key, per UTC hour, operation, status and Error code", () => {
  it("counts changes and removals under their operations, by status and code", async () => {
    const { key, id } = await createKey("usage-changes");
    const h = isolate();
    const { id: petId } = await insertPet({ status: "sold" });
    const path = `/v1/pets/${petId}`;
    const responses = [
      await h.send(path, { key, method: "PATCH", json: { name: "Counted" } }),
      await h.send(path, { key, method: "PATCH", json: { status: "available" } }),
      await h.send(path, { key, method: "PATCH", json: {}, headers: { "If-Match": '"old"' } }),
      await h.send(path, { key, method: "DELETE" }),
      await h.send(path, { key, method: "DELETE" }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 409, 412, 204, 404]);
    await h.advance(INTERVAL);
    expect(await usage(id)).toEqual([
      row("deletePet", 204),
      row("deletePet", 404, "not_found"),
      row("updatePet", 200),
      row("updatePet", 409, "invalid_transition"),
      row("updatePet", 412, "precondition_failed"),
    ]);
  });

  it("the first response is written at once after it; the next ones by a timer one interval after that write, with no further traffic", async () => {
    const { key, id } = await createKey("usage-burst", { scopes: ["pets:read"] });
    const h = isolate();
    const list = await h.send("/v1/pets?limit=1", { key });
    expect(list.status).toBe(200);
    await h.advance(0);
    expect(await usage(id)).toEqual([row("listPets", 200)]);
    expect(await lastUsedAt(id)).toBe(NOW / 1000);

    await h.advance(2_000);
    const etag = list.headers.get("ETag") as string;
    const responses = [
      await h.send("/v1/pets?limit=1", { key, headers: { "If-None-Match": etag } }),
      await h.send("/v1/pets/999999999", { key }),
      await h.send("/v1/pets?limit=0", { key }),
      await h.send("/v1/pets", { key, method: "POST", json: { name: "Rex", categoryId: 1 } }),
      await h.send("/v1/pets?limit=1", { key }, { RATE_LIMITER: refusing }),
      // The key is known to this isolate; the listing's own query meets a broken database.
      await h.send("/v1/pets?limit=1", { key }, { DB: throwingDb("D1_ERROR: no such thing") }),
      await h.send("/v1/cats", { key }),
      await h.send("/v1/pets", { key, method: methodNotOn("/pets") }),
    ];
    expect(responses.map((r) => r.status)).toEqual([304, 404, 400, 403, 429, 500, 404, 405]);
    // Held by the isolate, one timer at the end of the interval, nothing more in D1 yet.
    expect(h.pending()).toEqual([NOW + INTERVAL]);
    await h.advance(INTERVAL - 2_001);
    expect(total(await usage(id))).toBe(1);

    // The interval ends in the next hour: the responses keep the hour they came in.
    await h.advance(1);
    expect(await usage(id)).toEqual([
      row("", 404, "not_found"),
      row("", 405, "method_not_allowed"),
      row("createPet", 403, "insufficient_scope"),
      row("getPet", 404, "not_found"),
      row("listPets", 200),
      row("listPets", 304),
      row("listPets", 400, "invalid_parameter"),
      row("listPets", 429, "rate_limited"),
      row("listPets", 500, "internal_error"),
    ]);
    // Last use is the latest response's second, written with its counts.
    expect(await lastUsedAt(id)).toBe((NOW + 2_000) / 1000);
    expect(h.batches.map((b) => b.at)).toEqual([NOW, NOW + INTERVAL]);
    expect(h.pending()).toEqual([]);

    await h.advance(60_000);
    await h.send("/v1/pets?limit=1", { key });
    await h.advance(0);
    expect((await usage(id)).filter((r) => r.hour_start === HOUR_15)).toEqual([
      row("listPets", 200, "", 1, HOUR_15),
    ]);
  });

  it("at most one write per key per interval per isolate, and every response within one interval of itself", async () => {
    const { key, id } = await createKey("usage-steady");
    const h = isolate();
    // 120 responses, one every 250 ms: 30 s of steady traffic, then silence.
    const sent: number[] = [];
    for (let i = 0; i < 120; i++) {
      sent.push(h.clock.now);
      expect((await h.send("/v1/pets?limit=1", { key })).status).toBe(200);
      await h.advance(250);
    }
    await h.advance(INTERVAL);
    expect(total(await usage(id))).toBe(120);
    const writes = h.batches.map((b) => b.at);
    for (let i = 1; i < writes.length; i++) {
      expect((writes[i] ?? 0) - (writes[i - 1] ?? 0)).toBeGreaterThanOrEqual(INTERVAL);
    }
    expect(writes).toHaveLength(4); // at 0 s, 10 s, 20 s and 30 s
    // Each response was in the first write at or after it, at most one interval later.
    for (const at of sent) {
      const write = writes.find((w) => w >= at) ?? Number.POSITIVE_INFINITY;
      expect(write - at).toBeLessThanOrEqual(INTERVAL);
    }
  }, 30_000);

  it("responses of 1,000 other keys in the isolate drop nothing a key holds", async () => {
    const { key, id } = await createKey("usage-crowded");
    const h = isolate();
    await h.send("/v1/pets?limit=1", { key });
    await h.advance(1_000);
    await h.send("/v1/pets?limit=1", { key }); // held for 9 s
    // Keys no database has: their counts go to rows of their own ids.
    const others = Array.from({ length: 1_000 }, (_, i) => 2_000_000_000 + i);
    for (const other of others) {
      h.keyUse.record(
        other,
        { operation: "listPets", status: 200, code: "" },
        h.env,
        h.ctx.waitUntil,
      );
    }
    await h.advance(INTERVAL);
    expect(total(await usage(id))).toBe(2);
    const { n } = (await env.DB.prepare(
      "SELECT sum(count) AS n FROM api_key_usage WHERE api_key_id >= ?1",
    )
      .bind(others[0])
      .first<{ n: number }>()) ?? { n: 0 };
    expect(n).toBe(1_000);
  }, 30_000);

  it("a timer lost with its request is replaced by the next response's", async () => {
    const { key, id } = await createKey("usage-lost-timer");
    const h = isolate();
    await h.send("/v1/pets?limit=1", { key });
    await h.advance(1_000);
    await h.send("/v1/pets?limit=1", { key });
    expect(h.pending()).toEqual([NOW + INTERVAL]);
    h.lose(); // the runtime ended that request's waitUntil
    h.clock.now += 3 * INTERVAL;
    await h.send("/v1/pets?limit=1", { key });
    expect(h.pending()).toEqual([h.clock.now]);
    await h.advance(0);
    expect(total(await usage(id))).toBe(3);
  });

  it("refused requests are not any key's responses", async () => {
    const { key, id } = await createKey("usage-refused", { expiresAt: NOW / 1000 - 1 });
    const h = isolate();
    expect((await h.send("/v1/pets", { key })).status).toBe(401);
    expect((await h.send("/v1/pets", { key: `${key}x` })).status).toBe(401);
    await h.advance(INTERVAL);
    expect(await usage(id)).toEqual([]);
    expect(h.batches).toEqual([]);
  });

  it("two isolates add to the same rows", async () => {
    const { key, id } = await createKey("usage-isolates");
    const [a, b] = [isolate(), isolate()];
    await a.send("/v1/pets?limit=1", { key });
    await b.send("/v1/pets?limit=1", { key });
    await Promise.all([a.advance(0), b.advance(0)]);
    expect(await usage(id)).toEqual([row("listPets", 200, "", 2)]);
  });

  it("last use never moves back when an isolate writes an older time", async () => {
    const { key, id } = await createKey("last-used-order");
    await env.DB.prepare("UPDATE api_keys SET last_used_at = ?2 WHERE id = ?1")
      .bind(id, NOW / 1000 + 100)
      .run();
    const h = isolate();
    await h.send("/v1/pets?limit=1", { key });
    await h.advance(0);
    expect(await lastUsedAt(id)).toBe(NOW / 1000 + 100);
  });
});

describe("a write that fails", () => {
  /** env.DB, whose batches (the recorder's writes) fail as `fault` says the first `times` times. */
  function faulty(fault: "throws" | "rejects" | "hangs", times = 1) {
    let failures = 0;
    return new Proxy(env.DB, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property !== "batch") return typeof value === "function" ? value.bind(target) : value;
        return (statements: D1PreparedStatement[]) => {
          if (failures++ >= times) return target.batch(statements);
          if (fault === "throws") throw new Error("D1_ERROR: database is locked");
          return fault === "rejects"
            ? Promise.reject(new Error("D1_ERROR: reset"))
            : new Promise(() => {});
        };
      },
    });
  }

  it.each(["throws", "rejects"] as const)(
    "that %s neither fails the response nor logs the key; what it carried is written one interval later, with no further traffic",
    async (fault) => {
      const { key, id } = await createKey(`usage-${fault}`);
      const h = isolate({ db: faulty(fault) });
      expect((await h.send("/v1/pets?limit=1", { key })).status).toBe(200);
      await h.advance(0);
      const failed = h.logs.filter((l) => l.msg === "key use write failed");
      expect(failed).toMatchObject([{ level: "warn", key_id: id }]);
      expect(String(failed[0]?.error)).toMatch(/^Error: D1_ERROR/);
      expect(JSON.stringify(h.logs)).not.toContain(key);
      expect(await usage(id)).toEqual([]);

      await h.advance(INTERVAL);
      expect(h.batches.map((b) => b.at)).toEqual([NOW, NOW + INTERVAL]);
      expect(total(await usage(id))).toBe(1);
      expect(await lastUsedAt(id)).toBe(NOW / 1000);
    },
  );

  it("twice waits for the key's next response, which writes both", async () => {
    const { key, id } = await createKey("usage-fails-twice");
    const h = isolate({ db: faulty("rejects", 2) });
    await h.send("/v1/pets?limit=1", { key });
    await h.advance(5 * INTERVAL);
    expect(h.batches).toHaveLength(2);
    expect(h.pending()).toEqual([]);
    await h.send("/v1/pets?limit=1", { key });
    await h.advance(0);
    expect(total(await usage(id))).toBe(2);
  });

  it("that never finishes does not hold the response back", async () => {
    const { key } = await createKey("usage-hangs");
    const logs: LogLine[] = [];
    const app = createCheckedApp({ clock: () => NOW, log: (line) => logs.push(line) });
    // The response arrives, complete, while the write is still pending (never awaited here).
    const response = await app.fetch(makeRequest("/v1/pets?limit=1", { key }), {
      ...env,
      DB: faulty("hangs"),
    });
    expect(response.status).toBe(200);
    expect(Array.isArray(await response.json())).toBe(true);
    expect(logs.filter((l) => l.level === "warn")).toEqual([]); // still pending
  });
});

it(`the hourly cron deletes counts of hours older than ${USAGE_KEEP_DAYS} days; younger ones stay`, async () => {
  const { id } = await createKey("usage-purge");
  const hour = Math.floor(Date.now() / 3_600_000) * 3600;
  const keep = USAGE_KEEP_DAYS * 86_400;
  for (const start of [hour - keep - 3600, hour - keep + 3600, hour]) {
    await env.DB.prepare(
      "INSERT INTO api_key_usage (api_key_id, hour_start, operation, status, code, count) VALUES (?1, ?2, 'listPets', 200, '', 1)",
    )
      .bind(id, start)
      .run();
  }
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect((await usage(id)).map((r) => r.hour_start)).toEqual([hour - keep + 3600, hour]);
  // The purge reads the hour_start index, not the whole table.
  const plan = await env.DB.prepare(
    "EXPLAIN QUERY PLAN DELETE FROM api_key_usage WHERE hour_start < ?1",
  )
    .bind(hour)
    .all<{ detail: string }>();
  expect(plan.results.map((r) => r.detail).join(" ")).toContain("api_key_usage_hour_start");
});
