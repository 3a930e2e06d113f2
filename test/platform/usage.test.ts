// Usage per key: rows written with the API worker's own statement and recorder
// (src/db/api-keys.ts, src/auth/key-use.ts), read back per UTC day over the last 30 days,
// per hour over the last 24 and per operation, status and Error code, as JSON and on the
// key's page. test/key-use.test.ts sends the API's responses.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { parse } from "node-html-parser";
import { describe, expect, it } from "vitest";
import { createKeyUseRecorder } from "../../src/auth/key-use.ts";
import { USAGE_WRITE_INTERVAL_MS } from "../../src/config.ts";
import { addUsageStatement } from "../../src/db/api-keys.ts";
import { expectError, movableClock, platformWith, send, signUp } from "./helpers.ts";

/** What the API worker runs after its responses: add to the hour's count. */
function addUsage(keyId: number, hourStart: string, what: string, n: number) {
  const [operation = "", status = "", code = ""] = what.split(" ");
  return addUsageStatement(env.DB, {
    keyId,
    hourStart: Date.parse(hourStart) / 1000,
    operation: operation === "-" ? "" : operation,
    status: Number(status),
    code,
    count: n,
  }).run();
}

const NOW = Date.parse("2026-11-24T15:30:00Z");
const zero = { success: 0, client_error: 0, rate_limited: 0, server_error: 0 };

async function keyWithUsage() {
  const fetch = platformWith({ clock: movableClock(NOW) });
  const { session } = await signUp({ fetch });
  const create = async (label: string) =>
    (
      await (
        await fetch("/api/keys", { json: { label, scopes: ["pets:read"] }, session })
      ).json<{
        id: number;
      }>()
    ).id;
  const id = await create("storefront");
  const other = await create("other key");
  // The days are 2026-10-26 .. 2026-11-24 (UTC), today included; the hours
  // 2026-11-23T16:00 .. 2026-11-24T15:00, this hour included.
  await addUsage(id, "2026-11-24T14:00:00Z", "listPets 200", 100);
  await addUsage(id, "2026-11-24T14:00:00Z", "listPets 200", 20); // a second isolate's count
  await addUsage(id, "2026-11-24T14:00:00Z", "getPet 404 not_found", 2);
  await addUsage(id, "2026-11-24T14:00:00Z", "listPets 400 invalid_parameter", 1);
  await addUsage(id, "2026-11-24T09:00:00Z", "listPets 304", 30);
  await addUsage(id, "2026-11-24T09:00:00Z", "listPets 429 rate_limited", 2);
  await addUsage(id, "2026-11-23T23:00:00Z", "createPet 503 service_unavailable", 1);
  await addUsage(id, "2026-11-23T14:00:00Z", "listPets 200", 7); // a day ago, not in the hours
  await addUsage(id, "2026-11-20T10:00:00Z", "createPet 201", 3);
  await addUsage(id, "2026-11-20T10:00:00Z", "createPet 200", 1); // an Idempotency-Key's replay
  await addUsage(id, "2026-11-20T10:00:00Z", "deletePet 204", 2);
  await addUsage(id, "2026-10-26T00:00:00Z", "- 404 not_found", 5); // the days' first hour
  await addUsage(id, "2026-10-25T23:00:00Z", "listPets 200", 99); // a day too old
  await addUsage(other, "2026-11-24T14:00:00Z", "listPets 200", 1000); // another key
  return { fetch, session, id };
}

/** A table's body rows as the text of their cells. */
const cells = (page: ReturnType<typeof parse>, table: string) =>
  page
    .querySelectorAll(`table.${table} tbody tr`)
    .map((tr) => tr.querySelectorAll("th, td").map((cell) => cell.text));

describe("a key's usage", () => {
  it("as JSON: 30 UTC days and 24 hours, zeros included, each outcome class, the totals, each operation, status and code", async () => {
    const { fetch, session, id } = await keyWithUsage();
    const response = await fetch(`/api/keys/${id}/usage`, { session });
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const usage = await response.json<{
      keyId: number;
      updatedAt: string;
      days: Array<{ date: string }>;
      hours: Array<{ hour: string }>;
      totals: Record<string, number>;
      statuses: Record<string, unknown[]>;
      operations: unknown[];
    }>();
    expect(usage.keyId).toBe(id);
    expect(usage.updatedAt).toBe("2026-11-24T15:30:00.000Z");
    expect(usage.days).toHaveLength(30);
    expect(usage.days[0]).toEqual({ ...zero, date: "2026-10-26", client_error: 5 });
    expect(usage.days[1]).toEqual({ ...zero, date: "2026-10-27" });
    expect(usage.days.slice(-2)).toEqual([
      { ...zero, date: "2026-11-23", success: 7, server_error: 1 },
      { date: "2026-11-24", success: 150, client_error: 3, rate_limited: 2, server_error: 0 },
    ]);
    expect(usage.hours).toHaveLength(24);
    expect(usage.hours[0]).toEqual({ ...zero, hour: "2026-11-23T16:00:00.000Z" });
    expect(
      usage.hours.filter((h) => Object.values(h).some((v) => typeof v === "number" && v > 0)),
    ).toEqual([
      { ...zero, hour: "2026-11-23T23:00:00.000Z", server_error: 1 },
      { ...zero, hour: "2026-11-24T09:00:00.000Z", success: 30, rate_limited: 2 },
      { ...zero, hour: "2026-11-24T14:00:00.000Z", success: 120, client_error: 3 },
    ]);
    expect(usage.hours.at(-1)).toEqual({ ...zero, hour: "2026-11-24T15:00:00.000Z" });
    expect(usage.totals).toEqual({
      success: 163,
      client_error: 8,
      rate_limited: 2,
      server_error: 1,
    });
    // Each class's statuses, in order: a 201 apart from a 200, a 304 apart from both.
    expect(usage.statuses).toEqual({
      success: [
        { status: 200, count: 128 },
        { status: 201, count: 3 },
        { status: 204, count: 2 },
        { status: 304, count: 30 },
      ],
      client_error: [
        { status: 400, count: 1 },
        { status: 404, count: 7 },
      ],
      rate_limited: [{ status: 429, count: 2 }],
      server_error: [{ status: 503, count: 1 }],
    });
    expect(usage.operations).toEqual([
      { operation: "listPets", status: 200, code: "", count: 127 },
      { operation: "listPets", status: 304, code: "", count: 30 },
      { operation: "", status: 404, code: "not_found", count: 5 },
      { operation: "createPet", status: 201, code: "", count: 3 },
      { operation: "deletePet", status: 204, code: "", count: 2 },
      { operation: "getPet", status: 404, code: "not_found", count: 2 },
      { operation: "listPets", status: 429, code: "rate_limited", count: 2 },
      { operation: "createPet", status: 200, code: "", count: 1 },
      { operation: "createPet", status: 503, code: "service_unavailable", count: 1 },
      { operation: "listPets", status: 400, code: "invalid_parameter", count: 1 },
    ]);
  });

  it("on the key's page: charts of the days and the hours, the totals, each operation, the 4xx by code, and when it was read", async () => {
    const { fetch, session, id } = await keyWithUsage();
    const response = await fetch(`/keys/${id}`, { session });
    expect(response.status).toBe(200);
    const page = parse(await response.text());
    const chart = page.querySelector("svg.chart");
    expect(chart?.getAttribute("role")).toBe("img");
    expect(chart?.querySelector("title")?.text).toBe("Calls per day, last 30 days (UTC)");
    expect(chart?.querySelector("desc")?.text).toMatch(/^174 calls in all/);
    // One stacked bar per day with calls, each segment an outcome class.
    const bars = chart?.querySelectorAll("g").filter((g) => g.querySelector("rect")) ?? [];
    expect(bars.map((g) => g.querySelector("title")?.text)).toEqual([
      "26 Oct: 5 calls (0 successful, 5 client errors, 0 rate-limited, 0 server errors)",
      "20 Nov: 6 calls (6 successful, 0 client errors, 0 rate-limited, 0 server errors)",
      "23 Nov: 8 calls (7 successful, 0 client errors, 0 rate-limited, 1 server errors)",
      "24 Nov: 155 calls (150 successful, 3 client errors, 2 rate-limited, 0 server errors)",
    ]);
    const today = bars[3]?.querySelectorAll("rect") ?? [];
    expect(today.map((r) => r.classList.value.join(" "))).toEqual([
      "bar success",
      "bar client_error",
      "bar rate_limited",
    ]);
    // Taller for more calls: today's success segment is 30 times the first day's bar.
    const height = (r: (typeof today)[number] | undefined) => Number(r?.getAttribute("height"));
    const first = bars[0]?.querySelector("rect") ?? undefined;
    expect(height(today[0]) / height(first)).toBeCloseTo(30, 1);
    // Each class with its statuses: a 201 (created) apart from a 200 (replayed), a 204 apart from both.
    expect(page.querySelectorAll(".legend li").map((li) => li.text)).toEqual([
      "Successful (2xx, 3xx): 163 (200: 128, 201: 3, 204: 2, 304: 30)",
      "Client errors (4xx other than 429): 8 (400: 1, 404: 7)",
      "Rate-limited (429): 2",
      "Server errors (5xx): 1 (503: 1)",
    ]);
    const hourly = page.querySelectorAll("svg.chart.wide")[1];
    expect(hourly?.querySelector("title")?.text).toBe("Calls per hour, last 24 hours (UTC)");
    expect(
      hourly
        ?.querySelectorAll("g")
        .filter((g) => g.querySelector("rect"))
        .map((g) => g.querySelector("title")?.text),
    ).toEqual([
      "23 Nov 23:00: 1 call (0 successful, 0 client errors, 0 rate-limited, 1 server errors)",
      "24 Nov 09:00: 32 calls (30 successful, 0 client errors, 2 rate-limited, 0 server errors)",
      "24 Nov 14:00: 123 calls (120 successful, 3 client errors, 0 rate-limited, 0 server errors)",
    ]);
    expect(cells(page, "operations")).toEqual([
      ["listPets", "157 (200: 127, 304: 30)", "1 (400: 1)", "2", "0", "160"],
      ["Other paths and methods", "0", "5 (404: 5)", "0", "0", "5"],
      ["createPet", "4 (200: 1, 201: 3)", "0", "0", "1 (503: 1)", "5"],
      ["deletePet", "2 (204: 2)", "0", "0", "0", "2"],
      ["getPet", "0", "2 (404: 2)", "0", "0", "2"],
    ]);
    expect(cells(page, "codes")).toEqual([
      ["not_found", "404", "7"],
      ["rate_limited", "429", "2"],
      ["invalid_parameter", "400", "1"],
    ]);
    const days = cells(page, "days");
    expect(days).toHaveLength(30);
    expect(days[0]).toEqual(["2026-11-24", "150", "3", "2", "0", "155"]);
    expect(days[29]).toEqual(["2026-10-26", "0", "5", "0", "0", "5"]);
    const hours = cells(page, "hours");
    expect(hours).toHaveLength(24);
    expect(hours[1]).toEqual(["24 Nov 14:00", "120", "3", "0", "0", "123"]);
    const updated = page.querySelector("#usage-updated");
    expect(updated?.getAttribute("datetime")).toBe("2026-11-24T15:30:00.000Z");
    expect(updated?.text).toBe("15:30:00 UTC");
    // How soon a call shows is the API's write interval (src/config.ts), not a figure of its own.
    expect(page.querySelector("#usage p")?.text).toMatch(
      new RegExp(`a call shows here within ${USAGE_WRITE_INTERVAL_MS / 1000} seconds of it\\.$`),
    );
  });

  it("what the API's recorder writes after a burst of responses, the usage JSON and the page show: last use to the minute", async () => {
    const clock = movableClock(NOW);
    const fetch = platformWith({ clock });
    const { session } = await signUp({ fetch });
    const { id } = await (
      await fetch("/api/keys", { json: { label: "burst", scopes: ["pets:read"] }, session })
    ).json<{ id: number }>();
    // One isolate of the API: each response's write waits for its timer, which moves the clock.
    const recorder = createKeyUseRecorder(clock, () => {}, {
      sleep: async (ms) => clock.advance(ms / 1000),
    });
    const response = async (status: number, code = "") => {
      const ctx = createExecutionContext();
      recorder.record(id, { operation: "listPets", status, code }, env, (work) =>
        ctx.waitUntil(work),
      );
      await waitOnExecutionContext(ctx);
    };
    const statuses = [200, 304, 404, 403, 400, 429, 500, 503] as const;
    const codes: Record<number, string> = {
      404: "not_found",
      403: "insufficient_scope",
      400: "invalid_parameter",
      429: "rate_limited",
      500: "internal_error",
      503: "service_unavailable",
    };
    for (const status of statuses) await response(status, codes[status]);
    clock.advance(29);
    await response(201);
    const usage = await (await fetch(`/api/keys/${id}/usage`, { session })).json<{
      totals: object;
      operations: Array<{ count: number }>;
    }>();
    expect(usage.totals).toEqual({ success: 3, client_error: 3, rate_limited: 1, server_error: 2 });
    expect(usage.operations.reduce((n, o) => n + o.count, 0)).toBe(9);
    // The last response came at 15:31:39 (NOW, seven timers of 10 s, then 29 s): shown to the minute.
    const key = await (await fetch(`/api/keys/${id}`, { session })).json<{ lastUsedAt: string }>();
    expect(key.lastUsedAt).toBe("2026-11-24T15:31:39.000Z");
    const page = parse(await (await fetch(`/keys/${id}`, { session })).text());
    const lastUsed = page
      .querySelectorAll(".facts div")
      .find((d) => d.querySelector("dt")?.text === "Last used");
    expect(lastUsed?.querySelector("time")?.text).toBe("24 Nov 2026, 15:31 UTC");
  });

  it("of a key with no calls: zeros, and a chart that says so", async () => {
    const fetch = platformWith({ clock: movableClock(NOW) });
    const { session } = await signUp({ fetch });
    const { id } = await (
      await fetch("/api/keys", { json: { label: "quiet", scopes: ["pets:read"] }, session })
    ).json<{ id: number }>();
    const usage = await (await fetch(`/api/keys/${id}/usage`, { session })).json<{
      totals: Record<string, number>;
    }>();
    expect(usage.totals).toEqual({ success: 0, client_error: 0, rate_limited: 0, server_error: 0 });
    const page = parse(await (await fetch(`/keys/${id}`, { session })).text());
    expect(page.querySelector("svg.chart desc")?.text).toMatch(/^0 calls in all/);
    expect(page.querySelector("#usage")?.text).toContain("No calls in these 30 days.");
    expect(page.querySelectorAll("table.operations, table.codes")).toHaveLength(0);
    expect(page.querySelectorAll("svg.chart rect")).toHaveLength(0);
    // Calls are whole: no axis line at half a call.
    for (const chart of page.querySelectorAll("svg.chart.wide")) {
      const axis = chart.querySelectorAll("text.axis").map((t) => t.text);
      expect(axis.filter((label) => /^\d+$/.test(label))).toEqual(["0", "1"]);
    }
  });

  it("is the key owner's only: a missing key and another account's key are 404, and the table refuses a time that is not an hour", async () => {
    const { id } = await keyWithUsage();
    const stranger = await signUp();
    await expectError(
      await send(`/api/keys/${id}/usage`, { session: stranger.session }),
      404,
      "not_found",
    );
    await expectError(
      await send("/api/keys/999999/usage", { session: stranger.session }),
      404,
      "not_found",
    );
    await expect(addUsage(id, "2026-11-24T14:30:00Z", "listPets 200", 1)).rejects.toThrow(/CHECK/);
    await expect(addUsage(id, "2026-11-24T14:00:00Z", "listPets 99", 1)).rejects.toThrow(/CHECK/);
  });
});
