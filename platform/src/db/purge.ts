// The hourly purge (platform/src/index.ts): the rows past their end, table by table.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import { SESSION_IDLE_SECONDS } from "../config.ts";

/** The hourly purge: challenges past their expiry, sessions past either of theirs. */
export async function purgeExpired(db: Queryable, now: number): Promise<void> {
  await d1(() =>
    db.batch([
      db.prepare("DELETE FROM challenges WHERE expires_at <= ?1").bind(now),
      db
        .prepare("DELETE FROM sessions WHERE expires_at <= ?1 OR last_seen_at <= ?1 - ?2")
        .bind(now, SESSION_IDLE_SECONDS),
    ]),
  );
}
