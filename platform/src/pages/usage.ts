// A key's usage on its page: the last 30 days and the last 24 hours as charts and tables
// by outcome class, each class's statuses, the responses by operation, the 4xx by Error code,
// and when the figures were read (docs/platform.md, "Usage").
import { html } from "hono/html";
import { USAGE_WRITE_INTERVAL_MS } from "../../../src/config.ts";
import { outcomeOf } from "../../../src/db/api-keys.ts";
import { USAGE_DAYS, USAGE_HOURS } from "../config.ts";
import type {
  ClassCounts,
  ClassStatuses,
  KeyUsage,
  OperationUsage,
  Outcome,
  StatusCount,
} from "../db/usage.ts";
import { OUTCOMES, statusesOf, zeros } from "../db/usage.ts";
import { type Bar, calls, OUTCOME_NAMES, totalOf, usageChart } from "./chart.ts";
import type { Html } from "./layout.ts";

const n = (value: number) => value.toLocaleString("en-US");
const utc = (iso: string, options: Intl.DateTimeFormatOptions) =>
  new Date(iso).toLocaleString("en-GB", { ...options, timeZone: "UTC" });
const dayName = (iso: string) => utc(iso, { day: "numeric", month: "short" });
const hourLabel = (iso: string) => utc(iso, { hour: "2-digit", minute: "2-digit" });

/**
 * A class's statuses, " (200: 127, 201: 5)"; nothing for a class without responses, nor for 429's
 * (its one status).
 */
const statusList = (outcome: Outcome, statuses: readonly StatusCount[]) =>
  statuses.length === 0 || outcome === "rate_limited"
    ? ""
    : html` <span class="statuses">(${statuses.map((s, i) => html`${i > 0 ? ", " : ""}${s.status}: ${n(s.count)}`)})</span>`;

/** The cells of one period's row: each class, then all. */
const classCells = (counts: ClassCounts) =>
  html`${OUTCOMES.map((o) => html`<td>${n(counts[o])}</td>`)}<td>${n(totalOf(counts))}</td>`;
const classHeads = html`${OUTCOMES.map((o) => html`<th scope="col">${OUTCOME_NAMES[o].name}</th>`)}<th scope="col">All</th>`;

/** Responses by operation (each class a column, with its statuses), the most first. */
function byOperation(
  operations: readonly OperationUsage[],
): Array<{ operation: string; counts: ClassCounts; statuses: ClassStatuses }> {
  const rows = new Map<string, { counts: ClassCounts; responses: OperationUsage[] }>();
  for (const response of operations) {
    const row = rows.get(response.operation) ?? { counts: zeros(), responses: [] };
    row.counts[outcomeOf(response.status)] += response.count;
    row.responses.push(response);
    rows.set(response.operation, row);
  }
  return [...rows]
    .map(([operation, { counts, responses }]) => ({
      operation,
      counts,
      statuses: statusesOf(responses),
    }))
    .sort((a, b) => totalOf(b.counts) - totalOf(a.counts));
}

/** The 4xx responses by Error code and status, the most first. */
function byCode(
  operations: readonly OperationUsage[],
): Array<{ code: string; status: number; count: number }> {
  const rows = new Map<string, { code: string; status: number; count: number }>();
  for (const { status, code, count } of operations) {
    if (status < 400 || status >= 500) continue;
    const id = `${status} ${code}`;
    const row = rows.get(id) ?? { code, status, count: 0 };
    row.count += count;
    rows.set(id, row);
  }
  return [...rows.values()].sort((a, b) => b.count - a.count || a.status - b.status);
}

/**
 * A key's usage section: charts, each with a table of the same numbers for those who cannot see it.
 */
export function usageSection(usage: KeyUsage): Html {
  const days: Bar[] = usage.days.map((d) => {
    const iso = `${d.date}T00:00:00Z`;
    return { ...d, label: dayName(iso), name: dayName(iso) };
  });
  const hours: Bar[] = usage.hours.map((h) => ({
    ...h,
    label: hourLabel(h.hour),
    name: `${dayName(h.hour)} ${hourLabel(h.hour)}`,
  }));
  const operations = byOperation(usage.operations);
  const codes = byCode(usage.operations);
  const updated = utc(usage.updatedAt, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return html`<section id="usage" aria-labelledby="usage-title">
  <h2 id="usage-title">Calls in the last ${USAGE_DAYS} days</h2>
  <p class="muted">${calls(totalOf(usage.totals))}, counted by the API per UTC day. Updated at <time id="usage-updated" datetime="${usage.updatedAt}">${updated} UTC</time>; a call shows here within ${USAGE_WRITE_INTERVAL_MS / 1000} seconds of it.</p>
  ${usageChart(days, { id: "days", title: `Calls per day, last ${USAGE_DAYS} days (UTC)`, more: "the table below lists each day.", labelEvery: 7 })}
  <ul class="legend">${OUTCOMES.map((o) => html`<li><span class="swatch ${o}" aria-hidden="true"></span>${OUTCOME_NAMES[o].name} (${OUTCOME_NAMES[o].statuses}): <strong>${n(usage.totals[o])}</strong>${statusList(o, usage.statuses[o])}</li>`)}</ul>
  <h3 id="hours-title">The last ${USAGE_HOURS} hours</h3>
  ${usageChart(hours, { id: "hours", title: `Calls per hour, last ${USAGE_HOURS} hours (UTC)`, more: "the table below lists each hour.", labelEvery: 6 })}
  <h3 id="operations-title">By operation and status</h3>
  ${
    operations.length === 0
      ? html`<p class="muted">No calls in these ${USAGE_DAYS} days.</p>`
      : html`<div class="scroll" tabindex="0" role="region" aria-labelledby="operations-title"><table class="usage operations" aria-labelledby="operations-title">
    <thead><tr><th scope="col">Operation</th>${classHeads}</tr></thead>
    <tbody>${operations.map((row) => html`<tr><th scope="row">${row.operation === "" ? "Other paths and methods" : html`<code>${row.operation}</code>`}</th>${OUTCOMES.map((o) => html`<td>${n(row.counts[o])}${statusList(o, row.statuses[o])}</td>`)}<td>${n(totalOf(row.counts))}</td></tr>`)}</tbody>
  </table></div>`
  }
  <h3 id="codes-title">4xx responses by Error code</h3>
  ${
    codes.length === 0
      ? html`<p class="muted">None in these ${USAGE_DAYS} days.</p>`
      : html`<div class="scroll" tabindex="0" role="region" aria-labelledby="codes-title"><table class="usage codes" aria-labelledby="codes-title">
    <thead><tr><th scope="col">Code</th><th scope="col">Status</th><th scope="col">Calls</th></tr></thead>
    <tbody>${codes.map((c) => html`<tr><th scope="row"><code>${c.code || "(none)"}</code></th><td>${c.status}</td><td>${n(c.count)}</td></tr>`)}</tbody>
  </table></div>`
  }
  <details>
    <summary>Day by day</summary>
    <table class="usage days">
      <thead><tr><th scope="col">Day (UTC)</th>${classHeads}</tr></thead>
      <tbody>${[...usage.days].reverse().map((d) => html`<tr><th scope="row">${d.date}</th>${classCells(d)}</tr>`)}</tbody>
    </table>
  </details>
  <details>
    <summary>Hour by hour</summary>
    <table class="usage hours">
      <thead><tr><th scope="col">Hour (UTC)</th>${classHeads}</tr></thead>
      <tbody>${[...hours].reverse().map((h) => html`<tr><th scope="row">${h.name}</th>${classCells(h)}</tr>`)}</tbody>
    </table>
  </details>
</section>` as Html;
}
