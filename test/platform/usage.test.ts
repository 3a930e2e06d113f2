// Usage per key: rows written with the API worker's own statement and recorder
// (src/db/api-keys.ts, src/auth/key-use.ts), read back per UTC day over the last 30 days,
// as JSON and on the key's page. test/key-use.test.ts sends the API's answers.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { parse } from "node-html-parser";
import { describe, expect, it } from "vitest";
import { createKeyUseRecorder } from "../../src/auth/key-use.ts";
import { addUsageStatement, type Outcome } from "../../src/db/api-keys.ts";
import { expectError, movableClock, platformWith, send, signUp } from "./helpers.ts";

/** What the API worker runs after its answers: add to the hour's count. */
function addUsage(keyId: number, hourStart: string, outcome: string, n: number) {
  const hour = Date.parse(hourStart) / 1000;
  return addUsageStatement(env.DB, {
    keyId,
    hourStart: hour,
    outcome: outcome as Outcome,
    count: n,
  }).run();
}

const NOW = Date.parse("2026-11-24T15:30:00Z");

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
  // The window is 2026-10-26 .. 2026-11-24 (UTC), today included.
  await addUsage(id, "2026-11-24T14:00:00Z", "success", 100);
  await addUsage(id, "2026-11-24T14:00:00Z", "success", 20); // a second isolate's count
  await addUsage(id, "2026-11-24T14:00:00Z", "client_error", 3);
  await addUsage(id, "2026-11-24T09:00:00Z", "success", 30);
  await addUsage(id, "2026-11-24T09:00:00Z", "rate_limited", 2);
  await addUsage(id, "2026-11-23T23:00:00Z", "server_error", 1);
  await addUsage(id, "2026-10-26T00:00:00Z", "success", 5); // the window's first hour
  await addUsage(id, "2026-10-25T23:00:00Z", "success", 99); // a day too old
  await addUsage(other, "2026-11-24T14:00:00Z", "success", 1000); // another key
  return { fetch, session, id };
}

describe("a key's usage", () => {
  it("as JSON: 30 UTC days, today last, zeros included, each outcome class, and the totals", async () => {
    const { fetch, session, id } = await keyWithUsage();
    const response = await fetch(`/api/keys/${id}/usage`, { session });
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const usage = await response.json<{
      keyId: number;
      days: Array<{ date: string }>;
      totals: Record<string, number>;
    }>();
    expect(usage.keyId).toBe(id);
    expect(usage.days).toHaveLength(30);
    const zero = { success: 0, client_error: 0, rate_limited: 0, server_error: 0 };
    expect(usage.days[0]).toEqual({ ...zero, date: "2026-10-26", success: 5 });
    expect(usage.days[1]).toEqual({ ...zero, date: "2026-10-27" });
    expect(usage.days.slice(-2)).toEqual([
      { ...zero, date: "2026-11-23", server_error: 1 },
      { date: "2026-11-24", success: 150, client_error: 3, rate_limited: 2, server_error: 0 },
    ]);
    expect(usage.totals).toEqual({
      success: 155,
      client_error: 3,
      rate_limited: 2,
      server_error: 1,
    });
  });

  it("on the key's page: a chart with one bar per day that had calls, the totals, and the same numbers per day", async () => {
    const { fetch, session, id } = await keyWithUsage();
    const response = await fetch(`/keys/${id}`, { session });
    expect(response.status).toBe(200);
    const page = parse(await response.text());
    const chart = page.querySelector("svg.chart");
    expect(chart?.getAttribute("role")).toBe("img");
    expect(chart?.querySelector("title")?.text).toBe("Calls per day, last 30 days (UTC)");
    expect(chart?.querySelector("desc")?.text).toMatch(/^161 calls in all/);
    // One stacked bar per day with calls, each segment an outcome class.
    const bars = chart?.querySelectorAll("g").filter((g) => g.querySelector("rect")) ?? [];
    expect(bars.map((g) => g.querySelector("title")?.text)).toEqual([
      "26 Oct: 5 calls (5 successful, 0 client errors, 0 rate-limited, 0 server errors)",
      "23 Nov: 1 call (0 successful, 0 client errors, 0 rate-limited, 1 server errors)",
      "24 Nov: 155 calls (150 successful, 3 client errors, 2 rate-limited, 0 server errors)",
    ]);
    const today = bars[2]?.querySelectorAll("rect") ?? [];
    expect(today.map((r) => r.classList.value.join(" "))).toEqual([
      "bar success",
      "bar client_error",
      "bar rate_limited",
    ]);
    // Taller for more calls: today's success segment is 30 times the first day's.
    const height = (r: (typeof today)[number] | undefined) => Number(r?.getAttribute("height"));
    const first = bars[0]?.querySelector("rect") ?? undefined;
    expect(height(today[0]) / height(first)).toBeCloseTo(30, 1);
    expect(page.querySelectorAll(".legend li").map((li) => li.text)).toEqual([
      "Successful (2xx, 3xx): 155",
      "Client errors (4xx other than 429): 3",
      "Rate-limited (429): 2",
      "Server errors (5xx): 1",
    ]);
    const rows = page
      .querySelectorAll("table.usage tbody tr")
      .map((tr) => tr.querySelectorAll("th, td").map((cell) => cell.text));
    expect(rows).toHaveLength(30);
    expect(rows[0]).toEqual(["2026-11-24", "150", "3", "2", "0", "155"]);
    expect(rows[29]).toEqual(["2026-10-26", "5", "0", "0", "0", "5"]);
  });

  it("what the API's recorder writes after a burst of answers, the usage JSON shows", async () => {
    const clock = movableClock(NOW);
    const fetch = platformWith({ clock });
    const { session } = await signUp({ fetch });
    const { id } = await (
      await fetch("/api/keys", { json: { label: "burst", scopes: ["pets:read"] }, session })
    ).json<{ id: number }>();
    // One isolate of the API: its first answer is written at once, the rest a minute later.
    const recorder = createKeyUseRecorder(clock, () => {});
    const answer = async (status: number) => {
      const ctx = createExecutionContext();
      recorder.record(id, status, env, (work) => ctx.waitUntil(work));
      await waitOnExecutionContext(ctx);
    };
    for (const status of [200, 304, 200, 404, 403, 400, 429, 500, 503]) await answer(status);
    const totals = async () =>
      (await (await fetch(`/api/keys/${id}/usage`, { session })).json<{ totals: object }>()).totals;
    expect(await totals()).toEqual({
      success: 1,
      client_error: 0,
      rate_limited: 0,
      server_error: 0,
    });
    clock.advance(60);
    await answer(201);
    expect(await totals()).toEqual({
      success: 4,
      client_error: 3,
      rate_limited: 1,
      server_error: 2,
    });
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
    expect(page.querySelectorAll("svg.chart rect")).toHaveLength(0);
    // Calls are whole: no axis line at half a call.
    const axis = page.querySelectorAll("svg.chart.wide text.axis").map((t) => t.text);
    expect(axis.filter((label) => /^\d/.test(label) && !/[a-z]/i.test(label))).toEqual(["0", "1"]);
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
    await expect(addUsage(id, "2026-11-24T14:30:00Z", "success", 1)).rejects.toThrow(/CHECK/);
    await expect(addUsage(id, "2026-11-24T14:00:00Z", "redirect", 1)).rejects.toThrow(/CHECK/);
  });
});
