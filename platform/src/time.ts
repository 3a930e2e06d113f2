// Time as the platform keeps it (unix seconds, from the request's clock) and shows it (ISO 8601).
import type { Context } from "hono";
import type { PlatformAppEnv } from "./types.ts";

/** The request's clock in unix seconds. */
export function nowOf(c: Context<PlatformAppEnv>): number {
  return Math.floor(c.var.clock() / 1000);
}

/** Unix seconds as ISO 8601 (null stays null), as the JSON answers and `<time>` carry it. */
export function isoTime(seconds: number): string;
export function isoTime(seconds: number | null): string | null;
export function isoTime(seconds: number | null): string | null {
  return seconds === null ? null : new Date(seconds * 1000).toISOString();
}
