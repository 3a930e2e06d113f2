import type { Scope } from "../scopes.ts";
import { parseScopes } from "../scopes.ts";
import type { Queryable } from "./database.ts";
import { d1 } from "./database.ts";

export interface StoredApiKey {
  id: number;
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
        `SELECT k.id, k.scopes, k.expires_at, (k.revoked_at IS NOT NULL OR a.disabled_at IS NOT NULL) AS revoked, k.audience
         FROM api_keys AS k LEFT JOIN accounts AS a ON a.id = k.account_id WHERE k.key_hash = ?1`,
      )
      .bind(keyHash)
      .first<ApiKeyRow>(),
  );
  return row
    ? {
        id: row.id,
        scopes: parseScopes(row.scopes),
        expiresAt: row.expires_at,
        revoked: row.revoked === 1,
        audience: row.audience === "/mcp" ? "/mcp" : null,
      }
    : null;
}

/**
 * The classes of answers counted per key (`api_key_usage.outcome`, migration 0007), in
 * the order the platform shows them: 2xx and 3xx, 4xx other than 429, 429, 5xx.
 */
export const OUTCOMES = ["success", "client_error", "rate_limited", "server_error"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The outcome class of an answer's status. */
export function outcomeOf(status: number): Outcome {
  if (status === 429) return "rate_limited";
  if (status >= 500) return "server_error";
  if (status >= 400) return "client_error";
  return "success";
}

/** Adds `count` answers of `outcome` to the key's hour (`hourStart`: unix seconds, a whole hour). */
export function addUsageStatement(
  db: Queryable,
  usage: { keyId: number; hourStart: number; outcome: Outcome; count: number },
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO api_key_usage (api_key_id, hour_start, outcome, count) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (api_key_id, hour_start, outcome) DO UPDATE SET count = count + excluded.count`,
    )
    .bind(usage.keyId, usage.hourStart, usage.outcome, usage.count);
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
