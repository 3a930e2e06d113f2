// Conditional reads and the location's cache (docs/design.md, "The cache and changing pets"):
// ETag, If-None-Match and 304; cacheable responses served from the location's cache while
// younger than CACHE_MAX_AGE_MS and no older than the bookmark the request sends.
import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { boundedMap } from "../cache/bounded-map.ts";
import { type EdgeCache, withTimeout } from "../cache/edge-cache.ts";
import { CACHE_MATCH_TIMEOUT_MS, CACHE_MAX_AGE_MS, IF_NONE_MATCH_MAX_LENGTH } from "../config.ts";
import { ApiError } from "../errors.ts";
import { errorText, type Logger } from "../log.ts";
import { BOOKMARK_HEADER } from "./d1-session.ts";
import { entityTag, ifNoneMatchMatches, isEntityTag } from "./etag.ts";
import { originOf, waitUntil } from "./request-context.ts";
import type { AppEnv } from "./types.ts";

/**
 * What a conditional read's handler returns (RFC 9110 3.2, the selected representation): the
 * JSON value of its 200 and the headers that belong to it (`Link`, or the pet's own `ETag`).
 * The middleware makes the response from it, so none is made only to be read back for its ETag.
 */
export interface SelectedRepresentation<T = unknown> {
  json: T;
  headers?: Readonly<Record<string, string>>;
}

/** A conditional read's handler: the selected representation of the request's resource. */
export type Select = (c: Context<AppEnv>) => Promise<SelectedRepresentation>;

/** A conditional read as the middleware sees it. */
export interface ConditionalRead {
  /** The operation's path template under /v1 (`/pets/{petId}`). */
  path: string;
  /** Names the representation's shape (a digest of its documented response): part of the key. */
  shape: string;
  /** Unix seconds from which nothing cached may be served (a deprecated operation's sunset). */
  until?: number | undefined;
  /** Which 200s may be cached. */
  cacheable(selected: SelectedRepresentation): boolean;
  /** The operation's handler. */
  select: Select;
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
/** When the D1 read behind a cached response ran (ms since the epoch); never sent to a client. */
export const READ_AT = "X-Read-At";

/**
 * The headers that belong to the representation, and so are cached with it (with its ETag); the
 * rest (request id, CORS, deprecation) is added per request around this middleware.
 */
const REPRESENTATION_HEADERS = ["Content-Type", "Link"] as const;
const JSON_TYPE = "application/json";
const utf8 = new TextEncoder();

/**
 * The cache key, from the validated request only: the shape, the path with its parameters,
 * then the query (defaults filled in) sorted by name. Every spelling of a request has one
 * entry, and a response of another shape (a Pet with a new field) another key.
 */
export function cacheKey(
  origin: string,
  read: Pick<ConditionalRead, "path" | "shape">,
  validated: ValidatedRequest,
): string {
  const filled = read.path.replaceAll(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(String(validated.param?.[name])),
  );
  // Written out: URLSearchParams is the runtime's object, and each of its calls crosses into it.
  const named = Object.entries(validated.query ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  let search = "";
  for (const [name, value] of named) {
    if (value === undefined) continue;
    search += `${search ? "&" : "?"}${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`;
  }
  return `${origin}/_cache/${read.shape}/v1${filled}${search}`;
}

/**
 * A response as this module caches and serves it. Its headers are a plain record: each call
 * on a `Headers` crosses into the runtime, so each response gets its headers in one record
 * (a record, not pairs: the runtime converts a list of pairs several times slower).
 */
interface Representation {
  headers: Record<string, string>;
  /** As the handler selected it (its JSON text), or as the cache returned it. */
  body: string | Uint8Array<ArrayBuffer>;
  etag: string;
  /** The D1 bookmark of the data it shows, if the read had one. */
  bookmark: string | null;
}

/** The representation of a cached response, and its tag (`freshTag` read it). */
async function representationOf(response: Response, etag: string): Promise<Representation> {
  const body = new Uint8Array(await response.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const name of REPRESENTATION_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { headers, body, etag, bookmark: response.headers.get(BOOKMARK_HEADER) };
}

/**
 * The tags of the bodies this isolate tagged last, by body: a page read again is the same text,
 * and finding it costs far less than its SHA-256. At most 100 (a page of the largest `limit` is a
 * few dozen KB).
 */
const tags = boundedMap<string, Promise<string>>(100);

/**
 * The representation of what the handler selected, its tag the handler's (a pet's) or the
 * body's. The body stays text: the runtime encodes it as it makes each response (and
 * for a tag the handler did not give, it is encoded once for its SHA-256).
 */
async function representationSelected(
  { json, headers: selected = {} }: SelectedRepresentation,
  bookmark: string | null,
): Promise<Representation> {
  const body = JSON.stringify(json);
  const headers: Record<string, string> = { "Content-Type": JSON_TYPE };
  for (const name of REPRESENTATION_HEADERS) {
    const value = selected[name];
    if (value !== undefined) headers[name] = value;
  }
  let etag = selected.ETag ?? tags.get(body);
  if (etag === undefined) {
    // A new buffer (the types allow a shared one).
    etag = entityTag(utf8.encode(body) as Uint8Array<ArrayBuffer>);
    tags.set(body, etag);
  }
  etag = await etag;
  return { headers, body, etag, bookmark };
}

/** The representation's headers, its tag and bookmark, with `more`. */
function headersOf(rep: Representation, more: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = { ...rep.headers, ETag: rep.etag, ...more };
  if (rep.bookmark !== null) headers[BOOKMARK_HEADER] = rep.bookmark;
  return headers;
}

/** The same bytes and headers from D1 or from the cache: 304 when If-None-Match matches. */
function responseOf(rep: Representation, ifNoneMatch: string | undefined): Response {
  const headers = headersOf(rep, { "Cache-Control": CLIENT_CACHE_CONTROL });
  if (ifNoneMatchMatches(ifNoneMatch, rep.etag)) {
    // RFC 9110 15.4.5: a 304 has no content; the headers that describe the resource stay.
    delete headers["Content-Type"];
    return new Response(null, { status: 304, headers });
  }
  return new Response(rep.body, { status: 200, headers });
}

interface CacheDeps {
  edgeCache: () => EdgeCache;
  log: Logger;
}

interface CacheLookup {
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

/** The cache key, or none from a cache age before `until` (nothing cached outlives a sunset). */
function cacheKeyOf(c: Context<AppEnv>, read: ConditionalRead): string | undefined {
  if (read.until !== undefined && c.get("clock")() + CACHE_MAX_AGE_MS > read.until * 1000) {
    return undefined;
  }
  const valid = c.req.valid.bind(c.req) as (target: "param" | "query") => Record<string, unknown>;
  return cacheKey(originOf(c.req.url), read, { param: valid("param"), query: valid("query") });
}

const warn = ({ log }: CacheDeps, msg: string, requestId: string, err: unknown) =>
  log({ level: "warn", msg, request_id: requestId, error: errorText(err) });

/**
 * The tag of a cached response that may respond to this request, else undefined: read from D1
 * less than CACHE_MAX_AGE_MS ago, and no older than the request's bookmark (D1 bookmarks sort
 * oldest to newest), so a client that changed a pet reads its change at once.
 */
function freshTag(cached: Response, c: Context<AppEnv>): string | undefined {
  // Cached by this module: a 200 with its entity tag, else it is no entry of ours.
  const etag = cached.headers.get("ETag");
  if (cached.status !== 200 || etag === null || !isEntityTag(etag)) return undefined;
  const age = c.get("clock")() - Number(cached.headers.get(READ_AT));
  if (!(age >= 0 && age < CACHE_MAX_AGE_MS)) return undefined;
  const sent = c.req.header(BOOKMARK_HEADER);
  if (sent === undefined) return etag;
  const shown = cached.headers.get(BOOKMARK_HEADER);
  return shown !== null && shown >= sent ? etag : undefined;
}

/** The cached response under `key` if it may respond, or undefined: a miss, stale, a failure, or too slow. */
async function match(deps: CacheDeps, key: string, c: Context<AppEnv>) {
  try {
    return await withTimeout(
      Promise.resolve()
        .then(() => deps.edgeCache().match(key))
        .then((cached) => {
          const etag = cached && freshTag(cached, c);
          return cached && etag ? representationOf(cached, etag) : undefined;
        }),
      CACHE_MATCH_TIMEOUT_MS,
    );
  } catch (err) {
    warn(deps, "cache match failed", c.get("requestId"), err);
    return undefined;
  }
}

/** Puts the representation just read from D1 in the cache, after the response. */
function put(deps: CacheDeps, key: string, rep: Representation, c: Context<AppEnv>) {
  const headers = headersOf(rep, {
    [READ_AT]: String(c.get("clock")()),
    // The Cache API drops it soon after it can no longer respond; `freshTag` is the rule.
    "Cache-Control": `public, max-age=${Math.ceil(CACHE_MAX_AGE_MS / 1000)}`,
  });
  const response = new Response(rep.body, { status: 200, headers });
  const work = Promise.resolve()
    .then(() => deps.edgeCache().put(key, response))
    .catch((err: unknown) => warn(deps, "cache put failed", c.get("requestId"), err));
  waitUntil(c, work);
}

/**
 * A conditional read: `prefetch` starts the cache lookup beside the key's (the access
 * middleware calls it when the key must be looked up); `middleware`, the operation's last,
 * serves the cached response, or runs its handler (`select`) and caches what `cacheable` takes.
 */
export function conditionalRead(read: ConditionalRead, deps: CacheDeps) {
  const started = new WeakMap<Context, Promise<CacheLookup | undefined>>();
  const prefetch = (c: Context<AppEnv>) => {
    const lookup = async () => {
      // Invalid input starts no lookup; its 400 comes in its turn.
      for (const check of read.input) await check(c, async () => {});
      ifNoneMatchOf(c);
      const key = cacheKeyOf(c, read);
      return key === undefined ? undefined : { key, rep: await match(deps, key, c) };
    };
    started.set(
      c,
      lookup().catch(() => undefined),
    );
  };
  const middleware = createMiddleware<AppEnv>(async (c) => {
    const sent = ifNoneMatchOf(c);
    const key = cacheKeyOf(c, read);
    const ahead = await started.get(c);
    let rep =
      key === undefined ? undefined : ahead?.key === key ? ahead.rep : await match(deps, key, c);
    if (rep === undefined) {
      const selected = await read.select(c);
      // The session's bookmark: the D1 session middleware, around this one, would add it to
      // the response; the cached copy needs it too.
      rep = await representationSelected(selected, c.get("pets").bookmark());
      if (key !== undefined && read.cacheable(selected)) put(deps, key, rep, c);
    }
    return responseOf(rep, sent);
  });
  return { prefetch, middleware };
}
