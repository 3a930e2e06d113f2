// Conditional reads and the edge cache (docs/design.md, "The edge cache and conditional
// reads"): ETag, If-None-Match and 304; answers that never change kept in the location's cache.
import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { type EdgeCache, withTimeout } from "../cache/edge-cache.ts";
import {
  EDGE_CACHE_MATCH_TIMEOUT_MS,
  EDGE_CACHE_TTL_SECONDS,
  EDGE_CACHE_VERSION,
  IF_NONE_MATCH_MAX_LENGTH,
} from "../config.ts";
import { ApiError } from "../errors.ts";
import { errorText, type Logger } from "../log.ts";
import { ETAG_FORMAT, entityTag, ifNoneMatchMatches } from "./etag.ts";
import { waitUntil } from "./request-context.ts";
import type { AppEnv } from "./types.ts";

/** A conditional read as the stages see it. */
export interface ConditionalRead {
  /** The operation's path template under /v1 (`/pets/{petId}`). */
  path: string;
  /** Unix seconds from which nothing kept may be served (a deprecated operation's sunset). */
  until?: number | undefined;
  /** Which 200s never change, so they may be kept. */
  keep(answer: Response): boolean;
  /** The operation's input checks, run beside the key's lookup: invalid input starts none. */
  input: Array<MiddlewareHandler<AppEnv> | ((c: Context<AppEnv>) => unknown)>;
}

/** What the validators made of the request (absent: not validated). */
export interface ValidatedRequest {
  param?: Readonly<Record<string, unknown>>;
  query?: Readonly<Record<string, unknown>>;
}

export const IF_NONE_MATCH = "If-None-Match";
export const CLIENT_CACHE_CONTROL = "private, no-cache";

/**
 * The handler's headers that belong to the representation, and so are kept with it; the
 * rest (request id, bookmark, CORS, deprecation) is added per request around this stage.
 */
const REPRESENTATION_HEADERS = ["Content-Type", "Link"] as const;

/**
 * The cache key, from the validated request only: the path with its parameters, then the
 * query (defaults filled in) sorted by name. Every spelling of a request has one entry.
 */
export function cacheKey(origin: string, path: string, validated: ValidatedRequest): string {
  const filled = path.replaceAll(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(String(validated.param?.[name])),
  );
  const key = new URL(`/_edge/v${EDGE_CACHE_VERSION}/v1${filled}`, origin);
  const query = Object.entries(validated.query ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [name, value] of query) {
    if (value !== undefined) key.searchParams.append(name, String(value));
  }
  return key.href;
}

/** An answer as this module keeps and serves it. */
interface Representation {
  headers: Headers;
  body: Uint8Array<ArrayBuffer>;
  etag: string;
}

/** The representation of a handler's answer, or of a kept one (whose tag was computed then). */
async function representationOf(response: Response, kept = false): Promise<Representation> {
  const body = new Uint8Array(await response.arrayBuffer());
  const headers = new Headers();
  for (const name of REPRESENTATION_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  const stored = kept ? response.headers.get("ETag") : null;
  const etag = stored !== null && ETAG_FORMAT.test(stored) ? stored : await entityTag(body);
  return { headers, body, etag };
}

/** The same bytes and headers from D1 or from the cache: 304 when If-None-Match matches. */
function answer(rep: Representation, ifNoneMatch: string | undefined): Response {
  const headers = new Headers(rep.headers);
  headers.set("ETag", rep.etag);
  headers.set("Cache-Control", CLIENT_CACHE_CONTROL);
  if (ifNoneMatchMatches(ifNoneMatch, rep.etag)) {
    // RFC 9110 15.4.5: a 304 has no content; the headers that describe the resource stay.
    headers.delete("Content-Type");
    return new Response(null, { status: 304, headers });
  }
  return new Response(rep.body, { status: 200, headers });
}

interface EdgeDeps {
  edgeCache: () => EdgeCache;
  log: Logger;
}

interface CachedAnswer {
  key: string;
  rep: Representation | undefined;
}

/** The If-None-Match a read was sent; longer than the contract allows is 400. */
export function ifNoneMatchOf(c: Context<AppEnv>): string | undefined {
  const sent = c.req.header(IF_NONE_MATCH);
  if (sent !== undefined && sent.length > IF_NONE_MATCH_MAX_LENGTH) {
    const problem = `must be at most ${IF_NONE_MATCH_MAX_LENGTH} characters`;
    throw new ApiError("invalid_parameter", `Header "${IF_NONE_MATCH}" ${problem}.`, {
      details: [{ field: IF_NONE_MATCH, message: problem }],
    });
  }
  return sent;
}

/** The cache key and how long an answer kept now may live; none from a second before `until`. */
function cacheEntry(c: Context<AppEnv>, read: ConditionalRead) {
  const now = c.var.clock();
  const ttl = Math.min(
    EDGE_CACHE_TTL_SECONDS,
    read.until === undefined
      ? Number.POSITIVE_INFINITY
      : Math.floor((read.until * 1000 - now) / 1000),
  );
  if (ttl <= 0) return undefined;
  const valid = c.req.valid.bind(c.req) as (target: "param" | "query") => Record<string, unknown>;
  const key = cacheKey(new URL(c.req.url).origin, read.path, {
    param: valid("param"),
    query: valid("query"),
  });
  return { key, ttl };
}

const warn = ({ log }: EdgeDeps, msg: string, requestId: string, err: unknown) =>
  log({ level: "warn", msg, request_id: requestId, error: errorText(err) });

/** The kept answer under `key`, or undefined: a miss, a failure, or a cache too slow. */
async function match(deps: EdgeDeps, key: string, requestId: string) {
  try {
    return await withTimeout(
      Promise.resolve()
        .then(() => deps.edgeCache().match(key))
        .then((kept) => (kept?.status === 200 ? representationOf(kept, true) : undefined)),
      EDGE_CACHE_MATCH_TIMEOUT_MS,
    );
  } catch (err) {
    warn(deps, "edge cache match failed", requestId, err);
    return undefined;
  }
}

/**
 * A conditional read: `alongside` starts the cached answer's lookup beside the key's (the
 * access stage calls it when the key must be looked up); `stage`, the last before the
 * handler, releases it, or runs the handler and keeps what never changes.
 */
export function conditionalRead(read: ConditionalRead, deps: EdgeDeps) {
  const started = new WeakMap<Context, Promise<CachedAnswer | undefined>>();
  const alongside = (c: Context<AppEnv>) => {
    const lookup = async () => {
      // Invalid input starts no lookup; its 400 comes in its turn.
      for (const check of read.input) await check(c, async () => {});
      ifNoneMatchOf(c);
      const kept = cacheEntry(c, read);
      return kept && { key: kept.key, rep: await match(deps, kept.key, c.var.requestId) };
    };
    started.set(
      c,
      lookup().catch(() => undefined),
    );
  };
  const stage = createMiddleware<AppEnv>(async (c, next) => {
    const sent = ifNoneMatchOf(c);
    const kept = cacheEntry(c, read);
    const ahead = await started.get(c);
    let rep =
      kept === undefined
        ? undefined
        : ahead?.key === kept.key
          ? ahead.rep
          : await match(deps, kept.key, c.var.requestId);
    if (rep === undefined) {
      await next();
      if (c.res.status !== 200) return;
      const keep = kept !== undefined && read.keep(c.res);
      rep = await representationOf(c.res);
      if (kept !== undefined && keep) {
        const headers = new Headers(rep.headers);
        headers.set("ETag", rep.etag);
        headers.set("Cache-Control", `public, max-age=${kept.ttl}`);
        const response = new Response(rep.body, { status: 200, headers });
        const put = Promise.resolve()
          .then(() => deps.edgeCache().put(kept.key, response))
          .catch((err: unknown) => warn(deps, "edge cache put failed", c.var.requestId, err));
        waitUntil(c, put);
      }
    }
    c.res = undefined;
    c.res = answer(rep, sent);
  });
  return { alongside, stage };
}
