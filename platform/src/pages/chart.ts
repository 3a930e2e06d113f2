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

/** Two drawings of one chart: CSS shows the one that fits (text stays readable at both). */
const SIZES = {
  wide: { width: 640, height: 220, left: 48, right: 12, top: 12, bottom: 28 },
  narrow: { width: 360, height: 240, left: 40, right: 10, top: 12, bottom: 28 },
} as const;

/** The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8 times a power of ten that is at least `n` (1 for nothing). */
export function niceCeiling(n: number): number {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return ([1, 1.5, 2, 3, 4, 5, 6, 8, 10].find((m) => m * power >= n) ?? 10) * power;
}

const count = (n: number) => n.toLocaleString("en-US");
const dayLabel = (date: string) =>
  new Date(`${date}T00:00:00Z`).toLocaleDateString("en-GB", {
    day: "numeric",
    month: "short",
    timeZone: "UTC",
  });
export const totalOf = (day: DailyUsage) => OUTCOMES.reduce((sum, o) => sum + day[o], 0);

/** The chart, drawn for wide and for narrow screens. */
export function usageChart(days: readonly DailyUsage[]): Html {
  return html`${draw(days, "wide")}${draw(days, "narrow")}` as Html;
}

function draw(days: readonly DailyUsage[], size: keyof typeof SIZES): Html {
  const { width, height, left, right, top: plotTop, bottom } = SIZES[size];
  const top = niceCeiling(Math.max(0, ...days.map(totalOf)));
  const plotWidth = width - left - right;
  const plotHeight = height - plotTop - bottom;
  const slot = plotWidth / days.length;
  const barWidth = Math.max(2, slot * 0.7);
  const y = (n: number) => plotTop + plotHeight - (n / top) * plotHeight;
  const fixed = (n: number) => Number(n.toFixed(2));

  // Calls are whole: a middle line only where it falls on a whole number.
  const lines = Number.isInteger(top / 2) ? [0, top / 2, top] : [0, top];
  const grid = lines.map(
    (
      n,
    ) => html`<line class="grid" x1="${left}" x2="${width - right}" y1="${fixed(y(n))}" y2="${fixed(y(n))}"></line>
<text class="axis" x="${left - 6}" y="${fixed(y(n) + 4)}" text-anchor="end">${count(n)}</text>`,
  );
  const last = days.length - 1;
  const bars = days.map((day, i) => {
    const x = fixed(left + i * slot + (slot - barWidth) / 2);
    let base = 0;
    const segments = OUTCOMES.filter((o) => day[o] > 0).map((o) => {
      const top = y(base + day[o]);
      const height = y(base) - top;
      base += day[o];
      return html`<rect class="bar ${o}" x="${x}" y="${fixed(top)}" width="${fixed(barWidth)}" height="${fixed(Math.max(height, 1))}"></rect>`;
    });
    const summary = `${dayLabel(day.date)}: ${calls(totalOf(day))} (${OUTCOMES.map((o) => `${count(day[o])} ${OUTCOME_NAMES[o].name.toLowerCase()}`).join(", ")})`;
    // A date under every 7th bar, counted back from today's, which ends flush right.
    const label =
      (last - i) % 7 === 0
        ? html`<text class="axis" x="${fixed(i === last ? width - right : left + (i + 0.5) * slot)}" y="${height - 8}" text-anchor="${i === last ? "end" : "middle"}">${dayLabel(day.date)}</text>`
        : "";
    return html`<g><title>${summary}</title>${segments}</g>${label}`;
  });
  const total = days.reduce((sum, day) => sum + totalOf(day), 0);
  return html`<svg class="chart ${size}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title-${size} chart-desc-${size}" focusable="false">
<title id="chart-title-${size}">Calls per day, last ${days.length} days (UTC)</title>
<desc id="chart-desc-${size}">${calls(total)} in all; the table below lists each day.</desc>
${grid}${bars}
</svg>` as Html;
}
