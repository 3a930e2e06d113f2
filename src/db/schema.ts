// Which migrations a database lacks: what the log says when a query finds no table, so
// the operator knows what to apply (a worker started on a database nobody migrated,
// such as plain `npx wrangler dev` before `npx wrangler d1 migrations apply DB --local`).
import type { DatabaseSchemaError } from "./database.ts";

/** The files of migrations/, in order; test/faults.test.ts holds this list to the folder. */
export const MIGRATIONS = [
  "0001_create_pets.sql",
  "0002_create_api_keys.sql",
  "0003_create_idempotency_keys.sql",
  "0004_api_key_scopes_expiry_last_use.sql",
  "0005_idempotency_records.sql",
  "0006_drop_idempotency_keys.sql",
  "0007_developer_platform.sql",
  "0008_key_owner_and_limits.sql",
  "0009_usage_by_operation.sql",
  "0010_platform_recovery_and_names.sql",
  "0014_oauth_grants.sql",
  "0015_key_pages_and_client_purge.sql",
  "0016_changing_pets.sql",
  "0017_key_changes_per_address.sql",
] as const;

/** Where wrangler's `d1 migrations apply` records each migration it applied. */
export const MIGRATIONS_TABLE = "d1_migrations";

/**
 * The log fields of a query that found no table or column: what is missing and which
 * migrations the database has not recorded (all of them when it has no record at all).
 */
export async function schemaDiagnosis(
  err: DatabaseSchemaError,
  db: D1Database,
): Promise<Record<string, string>> {
  const fields = {
    missing: err.missing,
    hint: "apply migrations/: npx wrangler d1 migrations apply DB --local (or --remote --env <name>)",
  };
  let applied: string[];
  try {
    const { results } = await db
      .prepare(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY id`)
      .all<{ name: string }>();
    applied = results.map((row) => row.name);
  } catch (cause) {
    if (!String(cause).includes("no such table")) {
      return { ...fields, missing_migrations: `unknown (${MIGRATIONS_TABLE} unreadable)` };
    }
    applied = [];
  }
  const missing = MIGRATIONS.filter((name) => !applied.includes(name));
  return {
    ...fields,
    missing_migrations:
      missing.length > 0
        ? missing.join(", ")
        : "none recorded missing: the database was changed outside migrations/",
  };
}
