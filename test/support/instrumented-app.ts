// The real app (createApp) over an instrumented D1 binding: it records every
// statement that reaches the database, or fails on purpose. Authentication can be
// stubbed with the id of a real key, so the database sees only the operation's work.
import { env } from "cloudflare:workers";
import { SCOPES } from "../../src/auth/scopes.ts";
import type { ApiKeyVerifier } from "../../src/auth/verifier.ts";
import type { EdgeCache } from "../../src/http/conditional-read.ts";
import type { LogLine } from "../../src/http/request-context.ts";
import { type CallOptions, createCheckedApp, makeRequest } from "../helpers.ts";

type AnyDb = D1Database | D1DatabaseSession;
export type DbHook = (method: "prepare" | "batch" | "exec", args: unknown[]) => void;
/** Sees the SQL of each prepared statement once it ran, with D1's `meta.rows_read`. */
export type ResultHook = (sql: string, rowsRead: number | undefined) => void;

/** A prepared statement that reports each run to `onResult` (rows_read for `all`/`run`). */
function reportingStatement(
  statement: D1PreparedStatement,
  sql: string,
  onResult: ResultHook,
): D1PreparedStatement {
  return new Proxy(statement, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === "bind") {
        return (...values: unknown[]) => reportingStatement(target.bind(...values), sql, onResult);
      }
      if (property === "all" || property === "run") {
        return async () => {
          const result = await (target[property] as () => Promise<D1Result>).call(target);
          onResult(sql, result.meta.rows_read);
          return result;
        };
      }
      if (property === "first" || property === "raw") {
        return async (...args: unknown[]) => {
          const result = await (value as (...a: unknown[]) => unknown).apply(target, args);
          onResult(sql, undefined);
          return result;
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Wraps a D1 database or session (and the sessions it opens): `hook` sees every
 * statement before D1 does; `onResult`, when given, sees each prepared statement's
 * SQL and rows read after it ran.
 */
export function instrument<T extends AnyDb>(target: T, hook: DbHook, onResult?: ResultHook): T {
  return new Proxy(target, {
    get(t, property) {
      const value = Reflect.get(t, property, t) as unknown;
      if (property === "withSession") {
        return (constraint?: string) =>
          instrument(
            (t as D1Database).withSession(constraint as D1SessionConstraint),
            hook,
            onResult,
          );
      }
      if (property === "prepare" || property === "batch" || property === "exec") {
        return (...args: unknown[]) => {
          hook(property, args);
          const made = (value as (...a: unknown[]) => unknown).apply(t, args);
          return property === "prepare" && onResult
            ? reportingStatement(made as D1PreparedStatement, String(args[0]), onResult)
            : made;
        };
      }
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}

/** Records the SQL of every prepared statement into `sql`. */
export function recordingDb<T extends AnyDb>(db: T, sql: string[]): T {
  return instrument(db, (method, args) => {
    if (method === "prepare") sql.push(String(args[0]));
  });
}

export function envWith(db: unknown): Env {
  return {
    DB: db as D1Database,
    RATE_LIMITER: env.RATE_LIMITER,
    ASSETS: env.ASSETS,
    ENVIRONMENT: env.ENVIRONMENT,
    CORS_ALLOWED_ORIGINS: env.CORS_ALLOWED_ORIGINS,
    TEST_MIGRATIONS: env.TEST_MIGRATIONS,
  } as Env;
}

/**
 * An edge cache that keeps nothing: for tests that measure what a read costs D1, which
 * the real cache would answer from the second request on.
 */
export const NO_EDGE_CACHE: EdgeCache = {
  match: async () => undefined,
  put: async () => {},
};

/** A verifier that accepts exactly `key` as the key with id `keyId` (all scopes), without D1. */
export function fixedVerifier(key: string, keyId: number): ApiKeyVerifier {
  return {
    verify: async (token) =>
      token === key
        ? { ok: true, key: { id: keyId, scopes: SCOPES } }
        : { ok: false, reason: "unknown" },
  };
}

export interface InstrumentedApp {
  /** Statements that reached D1: the SQL text of each prepared one, or "batch" / "exec". */
  statements: string[];
  logs: LogLine[];
  fetch(path: string, options?: CallOptions): Promise<Response>;
  fetchRequest(request: Request): Promise<Response>;
}

/** The real app over `db` (instrumented: every statement lands in `statements`). */
export function instrumentedApp(options: {
  db: D1Database;
  verifier?: ApiKeyVerifier;
}): InstrumentedApp {
  const logs: LogLine[] = [];
  const statements: string[] = [];
  const db = instrument(options.db, (method, args) => {
    statements.push(method === "prepare" ? String(args[0]) : method);
  });
  const app = createCheckedApp({
    log: (line) => logs.push(line),
    ...(options.verifier ? { verifier: options.verifier } : {}),
  });
  const appEnv = envWith(db);
  return {
    statements,
    logs,
    fetch(path, callOptions = {}) {
      return this.fetchRequest(makeRequest(path, callOptions));
    },
    async fetchRequest(request) {
      return app.fetch(request, appEnv);
    },
  };
}

/** The real D1 behind an app that accepts exactly `key` (id `keyId`) without a D1 lookup. */
export function recordingApp(key: string, keyId: number): InstrumentedApp {
  return instrumentedApp({ db: env.DB, verifier: fixedVerifier(key, keyId) });
}
