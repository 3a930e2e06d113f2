// The worker's entry point.
import { createApp } from "./app.ts";
import { purgeExpiredIdempotencyKeys } from "./db/idempotency.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  /** Cron Trigger (wrangler.toml [triggers]): purge idempotency records older than 24 h. */
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(
      purgeExpiredIdempotencyKeys(env.DB, Math.floor(Date.now() / 1000)).then((purged) =>
        console.log(JSON.stringify({ level: "info", msg: "idempotency purge", purged })),
      ),
    );
  },
} satisfies ExportedHandler<Env>;
