// Running D1 work: what a query takes, and its failures classified by what a retry can cure.
import { DatabaseUnavailableError } from "../errors.ts";

/** A D1 database or one of its sessions: what every query function accepts. */
export type Queryable = Pick<D1Database, "prepare" | "batch">;

/**
 * The D1 errors a retry can cure, as Cloudflare's D1 documentation lists them ("Debug
 * D1", "List of D1_ERRORs": https://developers.cloudflare.com/d1/observability/debug-d1/#error-list,
 * the rows whose recommended action is to retry, and "Retry queries":
 * https://developers.cloudflare.com/d1/best-practices/retry-queries/): a lost network
 * connection, the database's Durable Object reset by an update, a storage error, a storage
 * timeout or an unreachable node, and overload (requests queued too long or too many).
 * A reset for exceeding its memory or CPU limit is not among them: that is the query's
 * doing, and repeating it fails again.
 */
const TRANSIENT_D1_ERRORS = [
  "Network connection lost",
  "reset because its code was updated",
  "storage caused object to be reset",
  "exceeded timeout which caused object to be reset",
  "Cannot resolve D1 DB due to transient issue on remote node",
  "D1 DB is overloaded",
  "Can't read from request stream because client disconnected",
];

/** A query named a table or column the database does not have: a migration is missing. */
export class DatabaseSchemaError extends Error {
  /** What is missing, as D1 says it: `table pets`, `column scopes`. */
  readonly missing: string;

  constructor(missing: string, cause: unknown) {
    super(`the database has no ${missing}`, { cause });
    this.name = "DatabaseSchemaError";
    this.missing = missing;
  }
}

/**
 * What a failure of D1 means for the response: DatabaseUnavailableError (503 with
 * Retry-After) only for the transient errors above; DatabaseSchemaError for a missing
 * table or column; anything else (a constraint, SQL, a binding that throws) as it is,
 * which the app responds with 500 `internal_error` and logs with its cause.
 */
function classifyD1Error(err: unknown): unknown {
  const message = err instanceof Error ? err.message : String(err);
  const lower = message.toLowerCase();
  if (TRANSIENT_D1_ERRORS.some((text) => lower.includes(text.toLowerCase()))) {
    return new DatabaseUnavailableError(err);
  }
  const missing = /no such (table|column): ([\w.]+)/.exec(message);
  if (missing) return new DatabaseSchemaError(`${missing[1]} ${missing[2]}`, err);
  return err;
}

/** Runs D1 work; a failure is classified (classifyD1Error), never shown to the client. */
export async function d1<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw classifyD1Error(err);
  }
}

/** A D1 session (Sessions API) from `constraint`; a binding that fails is classified too. */
export function openSession(
  db: D1Database,
  constraint: D1SessionConstraint | D1SessionBookmark,
): D1DatabaseSession {
  try {
    return db.withSession(constraint);
  } catch (err) {
    throw classifyD1Error(err);
  }
}
