// The hourly purge (platform/src/index.ts): the rows past their end, table by table.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import { CLIENT_UNGRANTED_DAYS, SESSION_IDLE_SECONDS } from "../config.ts";

/**
 * The hourly purge: challenges past their expiry, sessions past either of theirs, and the client
 * addresses keys were made from once their hour (the cap's, db/keys.ts) is past.
 */
export async function purgeExpired(db: Queryable, now: number): Promise<void> {
  await d1(() =>
    db.batch([
      db.prepare("DELETE FROM challenges WHERE expires_at <= ?1").bind(now),
      db
        .prepare("DELETE FROM sessions WHERE expires_at <= ?1 OR last_seen_at <= ?1 - ?2")
        .bind(now, SESSION_IDLE_SECONDS),
      db
        .prepare(
          "UPDATE api_keys SET created_from = NULL WHERE created_from IS NOT NULL AND created_at <= ?1 - 3600",
        )
        .bind(now),
      db
        .prepare(
          "UPDATE oauth_grants SET allowed_from = NULL WHERE allowed_from IS NOT NULL AND created_at <= ?1 - 3600",
        )
        .bind(now),
    ]),
  );
}

/** Grants a day past their expiry go (a used code is remembered that long, for replays). */
export async function purgeGrants(db: Queryable, now: number): Promise<void> {
  await d1(() =>
    db.prepare("DELETE FROM oauth_grants WHERE expires_at < ?1 - 86400").bind(now).run(),
  );
}

/**
 * Registered clients that never got a grant go CLIENT_UNGRANTED_DAYS after registering
 * (none of their grants is still kept, pending or used); one that did stays.
 */
export async function purgeUngrantedClients(db: Queryable, now: number): Promise<void> {
  await d1(() =>
    db
      .prepare(
        `DELETE FROM oauth_clients WHERE granted_at IS NULL AND created_at < ?1
           AND NOT EXISTS (SELECT 1 FROM oauth_grants AS g WHERE g.client_id = oauth_clients.client_id)`,
      )
      .bind(now - CLIENT_UNGRANTED_DAYS * 86400)
      .run(),
  );
}
