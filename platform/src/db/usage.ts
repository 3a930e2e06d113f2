// A key's usage as its page shows it: the API's counts (api_key_usage, src/auth/key-use.ts)
// by UTC day and hour, outcome class, operation, status and Error code.
import { OUTCOMES, type Outcome, outcomeOf } from "../../../src/db/api-keys.ts";
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";
import { USAGE_DAYS, USAGE_HOURS } from "../config.ts";

export type { Outcome };

/** The outcome classes the API counts (src/db/api-keys.ts), in the order pages show them. */
export { OUTCOMES };

/** Responses by outcome class. */
export type ClassCounts = Record<Outcome, number>;
/** Responses of one UTC day (`date`: YYYY-MM-DD) by outcome class. */
type DailyUsage = { date: string } & ClassCounts;
/** Responses of one UTC hour (`hour`: its first instant, ISO 8601) by outcome class. */
type HourlyUsage = { hour: string } & ClassCounts;
/** Responses with one operation (its operationId; "" for no operation), status and Error code. */
export interface OperationUsage {
  operation: string;
  status: number;
  code: string;
  count: number;
}

/** Responses with one status. */
export interface StatusCount {
  status: number;
  count: number;
}
/** Responses by status, grouped by outcome class (each class's statuses in order). */
export type ClassStatuses = Record<Outcome, StatusCount[]>;

/** A key's usage as its page and `GET /api/keys/{id}/usage` give it. */
export interface KeyUsage {
  /** When these figures were read (ISO 8601). */
  updatedAt: string;
  /** One row per UTC day of the last USAGE_DAYS days, today last, zeros included. */
  days: DailyUsage[];
  /** One row per hour of the last USAGE_HOURS hours, the current one last, zeros included. */
  hours: HourlyUsage[];
  /** The days' responses by class. */
  totals: ClassCounts;
  /** The days' responses by status, grouped by class as `totals` (201 apart from 200). */
  statuses: ClassStatuses;
  /** The days' responses by operation, status and code, the most first. */
  operations: OperationUsage[];
}

/** No responses of any class: a period's or a row's counts before any is added. */
export const zeros = (): ClassCounts => ({
  success: 0,
  client_error: 0,
  rate_limited: 0,
  server_error: 0,
});

/** The responses of `rows` by status, grouped by outcome class, each class in status order. */
export function statusesOf(rows: Iterable<StatusCount>): ClassStatuses {
  const counts = new Map<number, number>();
  for (const { status, count } of rows) counts.set(status, (counts.get(status) ?? 0) + count);
  const grouped: ClassStatuses = {
    success: [],
    client_error: [],
    rate_limited: [],
    server_error: [],
  };
  for (const [status, count] of [...counts].sort(([a], [b]) => a - b)) {
    grouped[outcomeOf(status)].push({ status, count });
  }
  return grouped;
}

/**
 * `length` periods of `seconds` from `from`, each with the responses `rows` give it (`i`: its index).
 */
function periods<T>(
  rows: Array<{ i: number; status: number; n: number }>,
  length: number,
  name: (i: number) => T,
): Array<T & ClassCounts> {
  const table = Array.from({ length }, (_, i) => ({ ...name(i), ...zeros() }));
  for (const { i, status, n } of rows) {
    const row = table[i];
    if (row) row[outcomeOf(status)] += n;
  }
  return table;
}

/**
 * The key's responses in the USAGE_DAYS UTC days that end with today, and in the USAGE_HOURS
 * hours that end with this one (`now`: unix seconds): three grouped reads in one batch.
 */
export async function keyUsage(db: Queryable, keyId: number, now: number): Promise<KeyUsage> {
  const fromDay = (Math.floor(now / 86400) - (USAGE_DAYS - 1)) * 86400;
  const fromHour = (Math.floor(now / 3600) - (USAGE_HOURS - 1)) * 3600;
  const end = (Math.floor(now / 86400) + 1) * 86400;
  const per = (seconds: number, from: number) =>
    db
      .prepare(
        `SELECT CAST((hour_start - ?2) / ${seconds} AS INTEGER) AS i, status, sum(count) AS n FROM api_key_usage
         WHERE api_key_id = ?1 AND hour_start >= ?2 AND hour_start < ?3 GROUP BY i, status`,
      )
      .bind(keyId, from, end);
  type Row = { i: number; status: number; n: number } & Pick<OperationUsage, "operation" | "code">;
  const [byDay, byHour, byOperation] = await d1(() =>
    db.batch<Row>([
      per(86400, fromDay),
      per(3600, fromHour),
      db
        .prepare(
          `SELECT operation, status, code, sum(count) AS n FROM api_key_usage
           WHERE api_key_id = ?1 AND hour_start >= ?2 AND hour_start < ?3
           GROUP BY operation, status, code ORDER BY n DESC, operation, status, code`,
        )
        .bind(keyId, fromDay, end),
    ]),
  );
  const days = periods(byDay?.results ?? [], USAGE_DAYS, (i) => ({
    date: new Date((fromDay + i * 86400) * 1000).toISOString().slice(0, 10),
  }));
  const totals = zeros();
  for (const day of days) for (const o of OUTCOMES) totals[o] += day[o];
  const operations = (byOperation?.results ?? []).map(({ operation, status, code, n }) => ({
    operation,
    status,
    code,
    count: n,
  }));
  return {
    updatedAt: new Date(now * 1000).toISOString(),
    days,
    hours: periods(byHour?.results ?? [], USAGE_HOURS, (i) => ({
      hour: new Date((fromHour + i * 3600) * 1000).toISOString(),
    })),
    totals,
    statuses: statusesOf(operations),
    operations,
  };
}
