// What each key did, written after the answers (src/auth/key-use.ts): its answers per UTC
// hour and outcome class (docs/platform.md, "Usage") at most once a minute per key per
// isolate, and its last use at most once an hour; never failing or delaying a request.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKeyUseRecorder } from "../src/auth/key-use.ts";
import { LAST_USE_INTERVAL_MS } from "../src/config.ts";
import type { LogLine } from "../src/log.ts";
import {
  type CallOptions,
  createCheckedApp,
  createKey,
  makeRequest,
  throwingDb,
} from "./helpers.ts";

/** 2026-11-24T14:59:00Z: a minute before an hour ends. */
const NOW = Date.UTC(2026, 10, 24, 14, 59);
const HOUR_14 = Date.UTC(2026, 10, 24, 14) / 1000;
const HOUR_15 = HOUR_14 + 3600;

/** The key's usage rows, as D1 holds them. */
async function usage(keyId: number) {
  const { results } = await env.DB.prepare(
    "SELECT hour_start, outcome, count FROM api_key_usage WHERE api_key_id = ?1 ORDER BY hour_start, outcome",
  )
    .bind(keyId)
    .all<{ hour_start: number; outcome: string; count: number }>();
  return results;
}

const lastUsedAt = (id: number) =>
  env.DB.prepare("SELECT last_used_at FROM api_keys WHERE id = ?1").bind(id).first("last_used_at");

/**
 * One isolate of the real app with a hand-driven clock (`clock.now`, ms). A timer of the
 * recorder lets that much time pass (the clock moves) and notes its length in `waits`.
 * `send` answers once the request's waitUntil work is done; `db` replaces env.DB.
 */
function isolate(options: { db?: D1Database } = {}) {
  const clock = { now: NOW };
  const logs: LogLine[] = [];
  const waits: number[] = [];
  const log = (line: LogLine) => logs.push(line);
  const keyUse = createKeyUseRecorder(() => clock.now, log, {
    sleep: async (ms) => {
      waits.push(ms);
      clock.now += ms;
    },
  });
  const app = createCheckedApp({ clock: () => clock.now, log, keyUse });
  const appEnv: Env = options.db ? { ...env, DB: options.db } : env;
  const send = async (path: string, call: CallOptions, bindings: Partial<Env> = {}) => {
    const ctx = createExecutionContext();
    const response = await app.fetch(makeRequest(path, call), { ...appEnv, ...bindings }, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  };
  return { clock, logs, waits, send };
}

/** A rate limiter that refuses everything: the 429 of a key over its limit. */
const refusing = { limit: async () => ({ success: false }) } as RateLimit;

describe("answers per key, per UTC hour and outcome class", () => {
  it("a burst of every outcome: the first answer at once, the rest with the first answer after the minute, in their hours", async () => {
    const { key, id } = await createKey("usage-burst", { scopes: ["pets:read"] });
    const h = isolate();
    const list = await h.send("/v1/pets?limit=1", { key });
    expect(list.status).toBe(200);
    expect(await usage(id)).toEqual([{ hour_start: HOUR_14, outcome: "success", count: 1 }]);

    const etag = list.headers.get("ETag") as string;
    const answers = [
      await h.send("/v1/pets?limit=1", { key, headers: { "If-None-Match": etag } }),
      await h.send("/v1/pets/999999999", { key }),
      await h.send("/v1/pets?limit=0", { key }),
      await h.send("/v1/pets", { key, method: "POST", json: { name: "Rex", categoryId: 1 } }),
      await h.send("/v1/pets?limit=1", { key }, { RATE_LIMITER: refusing }),
      // The key is known to this isolate; the listing's own query meets a broken database.
      await h.send("/v1/pets?limit=1", { key }, { DB: throwingDb("D1_ERROR: no such thing") }),
    ];
    expect(answers.map((r) => r.status)).toEqual([304, 404, 400, 403, 429, 500]);
    // Within the key's minute: held by the isolate, nothing more in D1.
    expect(await usage(id)).toEqual([{ hour_start: HOUR_14, outcome: "success", count: 1 }]);
    expect(h.waits).toEqual([]); // the minute ends more than 25 s from now: no timer

    h.clock.now += 61_000; // 15:00:01, the next hour
    expect((await h.send("/v1/pets?limit=1", { key })).status).toBe(200);
    expect(await usage(id)).toEqual([
      { hour_start: HOUR_14, outcome: "client_error", count: 3 },
      { hour_start: HOUR_14, outcome: "rate_limited", count: 1 },
      { hour_start: HOUR_14, outcome: "server_error", count: 1 },
      { hour_start: HOUR_14, outcome: "success", count: 2 },
      { hour_start: HOUR_15, outcome: "success", count: 1 },
    ]);
  });

  it("refused requests are not any key's answers", async () => {
    const { key, id } = await createKey("usage-refused", { expiresAt: NOW / 1000 - 1 });
    const h = isolate();
    expect((await h.send("/v1/pets", { key })).status).toBe(401);
    expect((await h.send("/v1/pets", { key: `${key}x` })).status).toBe(401);
    expect(await usage(id)).toEqual([]);
  });

  it("answers held back are written by a timer when the key's minute ends within 25 s", async () => {
    const { key, id } = await createKey("usage-timer");
    const h = isolate();
    await h.send("/v1/pets?limit=1", { key }); // written at once
    h.clock.now += 40_000; // 20 s of the minute left
    await h.send("/v1/pets/999999999", { key });
    expect(h.waits).toEqual([20_000]);
    expect(await usage(id)).toEqual([
      { hour_start: HOUR_14, outcome: "client_error", count: 1 },
      { hour_start: HOUR_14, outcome: "success", count: 1 },
    ]);
  });

  it("another key's answer after the minute writes what a key held; each key at most once a minute", async () => {
    const held = await createKey("usage-held");
    const other = await createKey("usage-other");
    const h = isolate();
    await h.send("/v1/pets?limit=1", { key: held.key });
    await h.send("/v1/pets?limit=1", { key: held.key });
    await h.send("/v1/pets?limit=1", { key: held.key });
    h.clock.now += 30_000;
    await h.send("/v1/pets?limit=1", { key: other.key }); // other's first: at once
    expect(await usage(held.id)).toEqual([{ hour_start: HOUR_14, outcome: "success", count: 1 }]);

    h.clock.now += 30_000; // held's minute has ended; other's has not
    await h.send("/v1/pets?limit=1", { key: other.key });
    expect(await usage(held.id)).toEqual([{ hour_start: HOUR_14, outcome: "success", count: 3 }]);
    expect(await usage(other.id)).toEqual([{ hour_start: HOUR_14, outcome: "success", count: 1 }]);
  });

  it("two isolates add to the same rows", async () => {
    const { key, id } = await createKey("usage-isolates");
    const [a, b] = [isolate(), isolate()];
    await a.send("/v1/pets?limit=1", { key });
    await b.send("/v1/pets?limit=1", { key });
    expect(await usage(id)).toEqual([{ hour_start: HOUR_14, outcome: "success", count: 2 }]);
  });
});

describe("last used", () => {
  it("is written with the first accepted answer, then at most once an hour per key per isolate", async () => {
    const { key, id } = await createKey("last-used");
    const refused = await createKey("last-used-refused", { expiresAt: 1 });
    const h = isolate();
    expect((await h.send("/v1/pets", { key: refused.key })).status).toBe(401);
    expect(await lastUsedAt(refused.id)).toBeNull();

    await h.send("/v1/pets?limit=1", { key });
    const first = NOW / 1000;
    expect(await lastUsedAt(id)).toBe(first);

    h.clock.now += LAST_USE_INTERVAL_MS - 1;
    await h.send("/v1/pets?limit=1", { key }); // its answers are written, not its last use
    expect(await lastUsedAt(id)).toBe(first);
    expect((await usage(id)).reduce((n, row) => n + row.count, 0)).toBe(2);

    h.clock.now += 60_000;
    await h.send("/v1/pets?limit=1", { key });
    expect(await lastUsedAt(id)).toBe(Math.floor(h.clock.now / 1000));
  });

  it("never moves back when an isolate writes an older time", async () => {
    const { key, id } = await createKey("last-used-order");
    await env.DB.prepare("UPDATE api_keys SET last_used_at = ?2 WHERE id = ?1")
      .bind(id, NOW / 1000 + 100)
      .run();
    await isolate().send("/v1/pets?limit=1", { key });
    expect(await lastUsedAt(id)).toBe(NOW / 1000 + 100);
  });
});

describe("a write that fails", () => {
  /** env.DB, whose batches (the recorder's writes) fail as `fault` says, counted in `batches`. */
  function faultyBatches(fault: "throws" | "rejects" | "hangs") {
    const batches: number[] = [];
    const db = new Proxy(env.DB, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property !== "batch") return typeof value === "function" ? value.bind(target) : value;
        return (statements: D1PreparedStatement[]) => {
          batches.push(statements.length);
          if (fault === "throws") throw new Error("D1_ERROR: database is locked");
          return fault === "rejects"
            ? Promise.reject(new Error("D1_ERROR: reset"))
            : new Promise(() => {});
        };
      },
    });
    return { db, batches };
  }

  it.each(["throws", "rejects"] as const)(
    "that %s neither fails the answer nor logs the key; what it carried is written a minute later, once",
    async (fault) => {
      const { key, id } = await createKey(`usage-${fault}`);
      const faulty = faultyBatches(fault);
      const h = isolate({ db: faulty.db });
      expect((await h.send("/v1/pets?limit=1", { key })).status).toBe(200);
      expect(faulty.batches).toEqual([2]); // its last use and its one answer
      const failed = h.logs.filter((l) => l.msg === "key use write failed");
      expect(failed).toMatchObject([{ level: "warn", key_id: id }]);
      expect(String(failed[0]?.error)).toMatch(/^Error: D1_ERROR/);
      expect(JSON.stringify(h.logs)).not.toContain(key);

      h.clock.now += 60_000;
      expect((await h.send("/v1/pets?limit=1", { key }, { DB: env.DB })).status).toBe(200);
      expect(await usage(id)).toEqual([
        { hour_start: HOUR_14, outcome: "success", count: 1 },
        { hour_start: HOUR_15, outcome: "success", count: 1 },
      ]);
      expect(await lastUsedAt(id)).toBe(h.clock.now / 1000);
    },
  );

  it("that never finishes does not hold the answer back", async () => {
    const { key } = await createKey("usage-hangs");
    const faulty = faultyBatches("hangs");
    const logs: LogLine[] = [];
    const app = createCheckedApp({ clock: () => NOW, log: (line) => logs.push(line) });
    // The answer arrives, complete, while the write is still pending (never awaited here).
    const response = await app.fetch(makeRequest("/v1/pets?limit=1", { key }), {
      ...env,
      DB: faulty.db,
    });
    expect(response.status).toBe(200);
    expect(Array.isArray(await response.json())).toBe(true);
    expect(faulty.batches).toEqual([2]);
    expect(logs.filter((l) => l.level === "warn")).toEqual([]); // still pending
  });
});
