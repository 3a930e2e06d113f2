// The platform worker's entry point.

import { createPlatformApp } from "./app.ts";
import { purgeExpired, purgeGrants, purgeUngrantedClients } from "./db/purge.ts";

const app = createPlatformApp();

export default {
  fetch: app.fetch,
  /**
   * Cron Trigger (wrangler.toml [triggers]): expired challenges, sessions and OAuth grants go,
   * the addresses keys were made from once their hour is past,
   * and registered OAuth clients that never got a grant.
   */
  async scheduled(_controller, env, ctx) {
    const now = Math.floor(Date.now() / 1000);
    ctx.waitUntil(
      Promise.all([
        purgeExpired(env.DB, now),
        purgeGrants(env.DB, now),
        purgeUngrantedClients(env.DB, now),
      ]),
    );
  },
} satisfies ExportedHandler<Env>;
