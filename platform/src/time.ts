// Time as the platform keeps it: unix seconds, from the request's clock (shown by
// src/clock.ts's isoTime).
import type { Context } from "hono";
import type { PlatformAppEnv } from "./types.ts";

/** The request's clock in unix seconds. */
export function nowOf(c: Context<PlatformAppEnv>): number {
  return Math.floor(c.var.clock() / 1000);
}
