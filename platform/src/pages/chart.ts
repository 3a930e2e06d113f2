// A key's usage as a picture: one stacked bar per period (a UTC day, an hour), an SVG
// drawn on the server (no script, nothing for the CSP to allow), coloured by outcome
// class with the page's CSS.
import { html } from "hono/html";
import type { ClassCounts, Outcome } from "../db/usage.ts";
import { OUTCOMES } from "../db/usage.ts";
import type { Html } from "./layout.ts";

/** How people read each outcome class (the chart's bars, its legend, the tables). */
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

/**
 * The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8 times a power of ten that is at least `n` (1 for
 * nothing).
 */
function niceCeiling(n: number): number {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return ([1, 1.5, 2, 3, 4, 5, 6, 8, 10].find((m) => m * power >= n) ?? 10) * power;
}

const count = (n: number) => n.toLocaleString("en-US");
/** All of a period's responses, whatever their class. */
export const totalOf = (counts: ClassCounts) => OUTCOMES.reduce((sum, o) => sum + counts[o], 0);

/** One bar: its responses, its name under the axis and in its tooltip. */
export interface Bar extends ClassCounts {
  /** Under the axis: "24 Nov", "14:00". */
  label: string;
  /** In the tooltip: "24 Nov", "24 Nov 14:00". */
  name: string;
}

/**
 * What a chart is: its id (unique on the page), its title, and every how many bars a label goes.
 */
export interface ChartFrame {
  id: string;
  title: string;
  /** The description's end, after the total: where the numbers are. */
  more: string;
  labelEvery: number;
}

/** The chart, drawn for wide and for narrow screens. */
export function usageChart(bars: readonly Bar[], frame: ChartFrame): Html {
  return html`${draw(bars, frame, "wide")}${draw(bars, frame, "narrow")}` as Html;
}

function draw(bars: readonly Bar[], frame: ChartFrame, size: keyof typeof SIZES): Html {
  const { width, height, left, right, top: plotTop, bottom } = SIZES[size];
  const top = niceCeiling(Math.max(0, ...bars.map(totalOf)));
  const plotWidth = width - left - right;
  const plotHeight = height - plotTop - bottom;
  const slot = plotWidth / bars.length;
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
  const last = bars.length - 1;
  const drawn = bars.map((bar, i) => {
    const x = fixed(left + i * slot + (slot - barWidth) / 2);
    let base = 0;
    const segments = OUTCOMES.filter((o) => bar[o] > 0).map((o) => {
      const top = y(base + bar[o]);
      const height = y(base) - top;
      base += bar[o];
      return html`<rect class="bar ${o}" x="${x}" y="${fixed(top)}" width="${fixed(barWidth)}" height="${fixed(Math.max(height, 1))}"></rect>`;
    });
    const summary = `${bar.name}: ${calls(totalOf(bar))} (${OUTCOMES.map((o) => `${count(bar[o])} ${OUTCOME_NAMES[o].name.toLowerCase()}`).join(", ")})`;
    // A label under every `labelEvery`th bar, counted back from the last, which ends flush right.
    const label =
      (last - i) % frame.labelEvery === 0
        ? html`<text class="axis" x="${fixed(i === last ? width - right : left + (i + 0.5) * slot)}" y="${height - 8}" text-anchor="${i === last ? "end" : "middle"}">${bar.label}</text>`
        : "";
    return html`<g><title>${summary}</title>${segments}</g>${label}`;
  });
  const total = bars.reduce((sum, bar) => sum + totalOf(bar), 0);
  const id = `${frame.id}-${size}`;
  return html`<svg class="chart ${size}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc" focusable="false">
<title id="${id}-title">${frame.title}</title>
<desc id="${id}-desc">${calls(total)} in all; ${frame.more}</desc>
${grid}${drawn}
</svg>` as Html;
}
