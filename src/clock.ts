// Time in both workers: the clock tests can inject, and unix seconds as ISO 8601.
/** Milliseconds since the epoch. Injected so tests can stand on either side of a date. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** Unix seconds as ISO 8601 (null stays null), as JSON responses and `<time>` carry them. */
export function isoTime(seconds: number): string;
export function isoTime(seconds: number | null): string | null;
export function isoTime(seconds: number | null): string | null {
  return seconds === null ? null : new Date(seconds * 1000).toISOString();
}
