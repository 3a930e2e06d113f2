// A key's usage as a picture: one stacked bar per UTC day, an SVG drawn on the server
// (no script, nothing for the CSP to allow), coloured by outcome with the page's CSS.
import { html } from "hono/html";
import type { DailyUsage, Outcome } from "../db/keys.ts";
import { OUTCOMES } from "../db/keys.ts";
import type { Html } from "./layout.ts";

/** How people read each outcome class (the chart's bars, its legend, the table). */
export const OUTCOME_NAMES: Record<Outcome, { name: string; statuses: string }> = {
  success: { name: "Successful", statuses: "2xx, 3xx" },
  client_error: { name: "Client errors", statuses: "4xx other than 429" },
  rate_limited: { name: "Rate-limited", statuses: "429" },
  server_error: { name: "Server errors", statuses: "5xx" },
};

/** "1 call", "2 calls". */
export const calls = (n: number) => `${n.toLocaleString("en-US")} call${n === 1 ? "" : "s"}`;

const WIDTH = 640;
const HEIGHT = 220;
const PLOT = { left: 48, right: 8, top: 12, bottom: 28 };

/** The smallest 1, 2 or 5 times a power of ten that is at least `n` (1 for nothing). */
export function niceCeiling(n: number): number {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return ([1, 2, 5, 10].find((m) => m * power >= n) ?? 10) * power;
}

const count = (n: number) => n.toLocaleString("en-US");
const dayLabel = (date: string) =>
  new Date(`${date}T00:00:00Z`).toLocaleDateString("en-GB", {
    day: "numeric",
    month: "short",
    timeZone: "UTC",
  });
export const totalOf = (day: DailyUsage) => OUTCOMES.reduce((sum, o) => sum + day[o], 0);

export function usageChart(days: readonly DailyUsage[]): Html {
  const top = niceCeiling(Math.max(0, ...days.map(totalOf)));
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const slot = plotWidth / days.length;
  const barWidth = Math.max(2, slot * 0.7);
  const y = (n: number) => PLOT.top + plotHeight - (n / top) * plotHeight;
  const fixed = (n: number) => Number(n.toFixed(2));

  const grid = [0, top / 2, top].map(
    (
      n,
    ) => html`<line class="grid" x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${fixed(y(n))}" y2="${fixed(y(n))}"></line>
<text class="axis" x="${PLOT.left - 6}" y="${fixed(y(n) + 4)}" text-anchor="end">${count(n)}</text>`,
  );
  const bars = days.map((day, i) => {
    const x = fixed(PLOT.left + i * slot + (slot - barWidth) / 2);
    let base = 0;
    const segments = OUTCOMES.filter((o) => day[o] > 0).map((o) => {
      const top = y(base + day[o]);
      const height = y(base) - top;
      base += day[o];
      return html`<rect class="bar ${o}" x="${x}" y="${fixed(top)}" width="${fixed(barWidth)}" height="${fixed(Math.max(height, 1))}"></rect>`;
    });
    const summary = `${dayLabel(day.date)}: ${calls(totalOf(day))} (${OUTCOMES.map((o) => `${count(day[o])} ${OUTCOME_NAMES[o].name.toLowerCase()}`).join(", ")})`;
    const label =
      i % 7 === (days.length - 1) % 7
        ? html`<text class="axis" x="${fixed(PLOT.left + (i + 0.5) * slot)}" y="${HEIGHT - 8}" text-anchor="middle">${dayLabel(day.date)}</text>`
        : "";
    return html`<g><title>${summary}</title>${segments}</g>${label}`;
  });
  const total = days.reduce((sum, day) => sum + totalOf(day), 0);
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" focusable="false">
<title id="chart-title">Calls per day, last ${days.length} days (UTC)</title>
<desc id="chart-desc">${calls(total)} in all; the table below lists each day.</desc>
${grid}${bars}
</svg>` as Html;
}
