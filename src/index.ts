// The worker's entry point.
import { createApp } from "./app.ts";
import { USAGE_KEEP_DAYS } from "./config.ts";
import { purgeUsageBefore } from "./db/api-keys.ts";
import { purgeExpiredIdempotencyKeys } from "./db/idempotency.ts";

const app = createApp();

/** Logs how many rows a purge deleted. */
const purge = async (what: string, work: Promise<number>) =>
  console.log(JSON.stringify({ level: "info", msg: `${what} purge`, purged: await work }));

export default {
  fetch: app.fetch,
  /**
   * Cron Trigger (wrangler.toml [triggers]): idempotency records older than 24 h and usage
   * counts of hours older than USAGE_KEEP_DAYS go.
   */
  async scheduled(_controller, env, ctx) {
    const now = Math.floor(Date.now() / 1000);
    ctx.waitUntil(purge("idempotency", purgeExpiredIdempotencyKeys(env.DB, now)));
    ctx.waitUntil(purge("usage", purgeUsageBefore(env.DB, now - USAGE_KEEP_DAYS * 86_400)));
  },
} satisfies ExportedHandler<Env>;
