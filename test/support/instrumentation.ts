// The one instrumentation of the platform's far calls, shared by the trip-count tests
// (in workerd), npm run bench:edge (inside the benchmark's worker) and npm run
// bench:capacity (in Node, over miniflare's D1); free of Node and Workers imports. A
// Recorder wraps a D1 binding and a Cache API object: every call that would leave the
// worker is a Trip, classed by where it goes, with D1's own accounting (rows read and
// written), optionally delayed to stand for the distance to it.
//
// Where a D1 call goes (developers.cloudflare.com/d1/best-practices/read-replication/):
// the binding itself or a "first-primary" session, and any statement that writes (or a
// batch holding one) in any session: the primary; any other read in a session: a replica.
//
// What a response waited for: the trips finished when the response was handed back
// (`finished()`, read at that moment). Work given to waitUntil (last-use writes, cache
// puts) completes on a later turn of the event loop, so it is not among them. Of those,
// `inSequence()` counts the most that ran one after another: trips side by side cost
// the response one trip's time.

export type Place = "primary" | "replica" | "cache";

export interface Trip {
  place: Place;
  /** The SQL (one entry per statement, a batch's joined by "; "), or "match <url>" etc. */
  what: string;
  /** The statements of a D1 call (one, or a batch's), with D1's own accounting once done. */
  statements: Executed[];
  done: boolean;
  /** When it began and ended, in the order of every trip's beginnings and ends. */
  began: number;
  ended?: number;
}

export interface Executed {
  sql: string;
  rowsRead: number;
  rowsWritten: number;
}

/** Milliseconds each trip to a place waits before it runs (the distance to it). */
export type Delays = Partial<Record<Place, number>>;

/** The Cache API methods the service uses. */
export type CacheLike = Pick<Cache, "match" | "put">;

/** A Cache API that keeps nothing, for what a read costs D1 without the edge cache. */
export const NO_EDGE_CACHE: CacheLike = {
  match: async () => undefined,
  put: async () => {},
};

type Row = Record<string, unknown>;

const WRITES = /^\s*(?:WITH\b[\s\S]*?\b)?(?:INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER)\b/i;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Recorder {
  readonly trips: Trip[] = [];
  /** Counts every trip's beginning and end: the order in which they happened. */
  private moment = 0;

  /** Mutable: a benchmark may change the delays between request classes. */
  delays: Delays;

  constructor(delays: Delays = {}) {
    this.delays = delays;
  }

  reset(): void {
    this.trips.length = 0;
  }

  /** The trips that have finished: what a response handed back now has waited for. */
  finished(): Trip[] {
    return this.trips.filter((t) => t.done);
  }

  /** How many finished trips went to each place. */
  counts(trips: Trip[] = this.finished()): Record<Place, number> {
    const counts = { primary: 0, replica: 0, cache: 0 };
    for (const trip of trips) counts[trip.place] += 1;
    return counts;
  }

  /**
   * The most of `trips` that ran one after another, each beginning after the one
   * before it ended: what the response waited for, in trips' time (side by side is one).
   */
  inSequence(trips: Trip[] = this.finished()): number {
    const chain = new Map<Trip, number>();
    for (const trip of [...trips].sort((a, b) => a.began - b.began)) {
      const before = trips.filter((t) => t.ended !== undefined && t.ended < trip.began);
      chain.set(trip, 1 + Math.max(0, ...before.map((t) => chain.get(t) ?? 0)));
    }
    return Math.max(0, ...chain.values());
  }

  /** Every statement sent to D1 (a batch's one by one), finished or not, in order. */
  statements(): Executed[] {
    return this.trips.flatMap((t) => t.statements);
  }

  /** The SQL of every statement sent to D1, in order. */
  sql(): string[] {
    return this.statements().map((s) => s.sql);
  }

  /** Runs `work` as one trip to `place` (sending `sqls` to D1), after that place's delay. */
  private async trip<T>(
    place: Place,
    what: string,
    sqls: string[],
    work: (trip: Trip) => Promise<T>,
  ): Promise<T> {
    const statements = sqls.map((sql) => ({ sql, rowsRead: 0, rowsWritten: 0 }));
    const trip: Trip = { place, what, statements, done: false, began: this.moment++ };
    this.trips.push(trip);
    const delay = this.delays[place] ?? 0;
    if (delay > 0) await sleep(delay);
    try {
      return await work(trip);
    } finally {
      trip.done = true;
      trip.ended = this.moment++;
    }
  }

  /** `cache`, every call recorded as a trip to the location's cache. */
  cache<C extends CacheLike>(cache: C): C {
    const url = (key: RequestInfo | URL) => (key instanceof Request ? key.url : String(key));
    const wrapped: CacheLike = {
      match: (key, options) =>
        this.trip("cache", `match ${url(key)}`, [], () => cache.match(key, options)),
      put: (key, response) =>
        this.trip("cache", `put ${url(key)}`, [], () => cache.put(key, response)),
    };
    return wrapped as C;
  }

  /** `db` (a binding, or a session of one), every call recorded as a trip. */
  d1<T extends D1Database>(db: T): T {
    return this.database(db, "primary") as unknown as T;
  }

  private database(db: D1Database | D1DatabaseSession, reads: Place) {
    /** The real statement behind each statement handed out, and its SQL. */
    const real = new WeakMap<object, { statement: D1PreparedStatement; sql: string }>();
    /** Sends `sqls` as one trip (a write among them: to the primary), with D1's accounting. */
    const send = <R extends D1Result | D1Result[]>(sqls: string[], run: () => Promise<R>) =>
      this.trip(
        sqls.some((s) => WRITES.test(s)) ? "primary" : reads,
        sqls.join("; "),
        sqls,
        async (trip) => {
          const results = await run();
          [results].flat().forEach((result, i) => {
            const executed = trip.statements[i];
            if (!executed) return;
            executed.rowsRead = result.meta?.rows_read ?? 0;
            executed.rowsWritten = result.meta?.rows_written ?? 0;
          });
          return results;
        },
      );

    const statementOf = (statement: D1PreparedStatement, sql: string): D1PreparedStatement => {
      // Every run is all(), whatever was asked: only all() hands back D1's meta.
      const all = () => send([sql], () => statement.all<Row>());
      const wrapped = {
        bind: (...values: unknown[]) => statementOf(statement.bind(...values), sql),
        all,
        run: all,
        first: async () => (await all()).results[0] ?? null,
      };
      real.set(wrapped, { statement, sql });
      return wrapped as unknown as D1PreparedStatement;
    };

    const wrapped = {
      prepare: (sql: string) => statementOf(db.prepare(sql), sql),
      batch: (statements: D1PreparedStatement[]) => {
        const inner = statements.map((s) => real.get(s));
        return send(
          inner.map((x) => x?.sql ?? "?"),
          () =>
            db.batch(inner.map((x, i) => x?.statement ?? (statements[i] as D1PreparedStatement))),
        );
      },
      withSession: (constraint?: string) =>
        this.database(
          // miniflare's D1 as Node sees it has no sessions: it is its own session there.
          typeof (db as D1Database).withSession === "function"
            ? (db as D1Database).withSession(constraint as D1SessionConstraint)
            : db,
          constraint === "first-primary" ? "primary" : "replica",
        ),
      getBookmark: () => (db as D1DatabaseSession).getBookmark?.() ?? null,
    };
    return wrapped;
  }
}
