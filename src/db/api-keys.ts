// API keys and their usage in D1: the lookup by hash, the usage counts, the last use.
import type { Scope } from "../scopes.ts";
import { parseScopes } from "../scopes.ts";
import type { Queryable } from "./database.ts";
import { d1 } from "./database.ts";

export interface StoredApiKey {
  id: number;
  /**
   * What shares the key's idempotency keys and account budget: its platform account's id,
   * or `key:` and the id of the first key of its rotation chain for an operator key.
   */
  owner: string;
  scopes: Scope[];
  /** Unix seconds from which the key is refused; null when it never expires. */
  expiresAt: number | null;
  /** Whether the key has been revoked (refused for good). */
  revoked: boolean;
  /** Where it is accepted: everywhere (null), or only at the MCP server ("/mcp"). */
  audience: KeyAudience;
}

/** A key's audience (api_keys.audience): null for every key but one granted to an MCP client. */
export type KeyAudience = "/mcp" | null;

interface ApiKeyRow {
  id: number;
  owner: string;
  scopes: string;
  expires_at: number | null;
  revoked: number;
  audience: string | null;
}

/**
 * The key with this hash, revoked or not (so a caller can tell a revoked key from one
 * this database does not have yet), or null. Expiry is the caller's to compare. A key of
 * a disabled account (`npm run accounts -- disable`) is revoked while the account is.
 */
export async function findApiKeyByHash(
  db: Queryable,
  keyHash: string,
): Promise<StoredApiKey | null> {
  const row = await d1(() =>
    db
      .prepare(
        `SELECT k.id, coalesce(k.account_id, 'key:' || coalesce(k.rotation_root_id, k.id)) AS owner, k.scopes, k.expires_at, (k.revoked_at IS NOT NULL OR a.disabled_at IS NOT NULL) AS revoked, k.audience
         FROM api_keys AS k LEFT JOIN accounts AS a ON a.id = k.account_id WHERE k.key_hash = ?1`,
      )
      .bind(keyHash)
      .first<ApiKeyRow>(),
  );
  return row
    ? {
        id: row.id,
        owner: row.owner,
        scopes: parseScopes(row.scopes),
        expiresAt: row.expires_at,
        revoked: row.revoked === 1,
        audience: row.audience === "/mcp" ? "/mcp" : null,
      }
    : null;
}

/**
 * The classes the platform groups a key's responses by, in the order it shows them: 2xx and
 * 3xx, 4xx other than 429, 429, 5xx.
 */
export const OUTCOMES = ["success", "client_error", "rate_limited", "server_error"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The outcome class of a response's status. */
export function outcomeOf(status: number): Outcome {
  if (status === 429) return "rate_limited";
  if (status >= 500) return "server_error";
  if (status >= 400) return "client_error";
  return "success";
}

/** Responses of one key in one UTC hour (`hourStart`: unix seconds) with one operation, status and Error code. */
export interface UsageCount {
  keyId: number;
  hourStart: number;
  /** The operationId; "" for a path or method no operation has. */
  operation: string;
  status: number;
  /** The Error code of an error response; "" otherwise. */
  code: string;
  count: number;
}

/** Adds the count to its row of `api_key_usage` (migration 0009). */
export function addUsageStatement(db: Queryable, usage: UsageCount): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO api_key_usage (api_key_id, hour_start, operation, status, code, count) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (api_key_id, hour_start, operation, status, code) DO UPDATE SET count = count + excluded.count`,
    )
    .bind(usage.keyId, usage.hourStart, usage.operation, usage.status, usage.code, usage.count);
}

/** Deletes the counts of hours that began before `before` (unix seconds); returns how many. */
export async function purgeUsageBefore(db: Queryable, before: number): Promise<number> {
  const result = await d1(() =>
    db.prepare("DELETE FROM api_key_usage WHERE hour_start < ?1").bind(before).run(),
  );
  return result.meta.changes;
}

/**
 * Records that a key was used at `now` (unix seconds). Never moves the time back, so
 * isolates writing out of order keep the latest use.
 */
export function recordApiKeyUseStatement(
  db: Queryable,
  keyId: number,
  now: number,
): D1PreparedStatement {
  return db
    .prepare(
      "UPDATE api_keys SET last_used_at = ?2 WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2)",
    )
    .bind(keyId, now);
}
