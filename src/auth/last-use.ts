// "Last used" for `npm run keys -- list`, to within an hour, without a database
// write on the answer's path: at most one write per key per hour per isolate,
// handed to waitUntil, so a slow or failing write neither delays nor fails a request.

import { boundedMap } from "../cache/bounded-map.ts";
import type { Clock } from "../clock.ts";
import { AUTH_CACHE_MAX_ENTRIES, LAST_USE_INTERVAL_MS, LAST_USE_RETRY_MS } from "../config.ts";
import { recordApiKeyUseStatement } from "../db/api-keys.ts";
import { errorText, type Logger } from "../log.ts";

export interface LastUseRecorder {
  /** Notes a use of key `keyId`; any write it starts is given to `waitUntil`. Never throws. */
  record(keyId: number, env: Env, waitUntil: (work: Promise<unknown>) => void): void;
}

export function createLastUseRecorder(
  clock: Clock,
  log: Logger,
  options: { intervalMs?: number; maxEntries?: number } = {},
): LastUseRecorder {
  const intervalMs = options.intervalMs ?? LAST_USE_INTERVAL_MS;
  const maxEntries = options.maxEntries ?? AUTH_CACHE_MAX_ENTRIES;
  /** Key id -> when this isolate last wrote (or tried to write) its last use. */
  const written = boundedMap<number, number>(maxEntries);

  return {
    record(keyId, env, waitUntil) {
      const now = clock();
      const last = written.get(keyId);
      if (last !== undefined && now - last < intervalMs) return;
      written.set(keyId, now);
      const failed = (err: unknown) => {
        // Try again after a short pause rather than an hour; never block or fail the request.
        written.set(keyId, now - intervalMs + LAST_USE_RETRY_MS);
        log({
          level: "warn",
          msg: "last-use write failed",
          key_id: keyId,
          error: errorText(err),
        });
      };
      try {
        const work = recordApiKeyUseStatement(env.DB, keyId, Math.floor(now / 1000))
          .run()
          .catch(failed);
        waitUntil(work);
      } catch (err) {
        failed(err);
      }
    },
  };
}
