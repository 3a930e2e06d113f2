// A D1 binding that records D1's own accounting of every statement it runs: the SQL,
// `meta.rows_read` and `meta.rows_written`. It wraps miniflare's D1 as Node sees it
// (mf.getD1Database), for npm run bench:capacity's rows-read probe.
//
// Every statement runs as `all()`, whatever the caller asked for (`first()`, `run()`),
// because only `all()` hands back the meta; the rows D1 reads are the same. A session
// is the database itself: rows read do not depend on which replica answers.

export interface Executed {
  sql: string;
  rowsRead: number;
  rowsWritten: number;
}

type Row = Record<string, unknown>;

export function recordingD1(db: D1Database, log: Executed[]): D1Database {
  /** The real statement behind each statement this wrapper handed out, and its SQL. */
  const real = new WeakMap<object, { statement: D1PreparedStatement; sql: string }>();
  const note = (sql: string, result: D1Result) =>
    log.push({ sql, rowsRead: result.meta.rows_read, rowsWritten: result.meta.rows_written });

  const statementOf = (statement: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const all = async () => {
      const result = await statement.all<Row>();
      note(sql, result);
      return result;
    };
    const wrapped = {
      bind: (...values: unknown[]) => statementOf(statement.bind(...values), sql),
      all,
      run: all,
      async first(column?: string) {
        const row = (await all()).results[0] ?? null;
        return column === undefined || row === null ? row : (row[column] ?? null);
      },
      async raw() {
        const { results } = await all();
        return results.map((row) => Object.values(row));
      },
    };
    real.set(wrapped, { statement, sql });
    return wrapped as unknown as D1PreparedStatement;
  };

  const recording = {
    prepare: (sql: string) => statementOf(db.prepare(sql), sql),
    async batch(statements: D1PreparedStatement[]) {
      const inner = statements.map((s) => real.get(s));
      const results = await db.batch(
        inner.map((x, i) => x?.statement ?? (statements[i] as D1PreparedStatement)),
      );
      results.forEach((result, i) => {
        note(inner[i]?.sql ?? "?", result);
      });
      return results;
    },
    exec: (sql: string) => db.exec(sql),
    withSession: () => ({ ...recording, getBookmark: () => null }),
  };
  return recording as unknown as D1Database;
}
