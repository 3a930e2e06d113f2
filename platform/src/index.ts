// The platform worker's entry point.

import { createPlatformApp } from "./app.ts";
import { purgeExpired } from "./db/accounts.ts";

const app = createPlatformApp();

export default {
  fetch: app.fetch,
  /** Cron Trigger (wrangler.toml [triggers]): expired challenges and sessions go. */
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(purgeExpired(env.DB, Math.floor(Date.now() / 1000)));
  },
} satisfies ExportedHandler<Env>;
