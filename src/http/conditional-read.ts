// Conditional requests and edge caching for the reads that the operation table marks
// `conditional` (docs/api.md, "Conditional requests and the edge cache"). The stage runs
// after authentication, the rate limit, the scope check and the input checks (all before
// it in src/stages.ts), so no 304 and no kept answer ever skips them.
//
// Every 200 gets a strong ETag computed from its body and `Cache-Control: private,
// no-cache`; an If-None-Match that matches is answered 304. Answers that never change
// once they exist (the handler says so: a pet; a page that has a next page) are kept in
// the Workers Cache API of the data center under the normalised request, never under the
// API key, and served from there without touching D1. An isolate that must look the key
// up starts the kept answer's lookup side by side with the key's (`lookAhead`); the
// answer is still released only here. The cache failing or hanging only costs the D1
// read it would have saved.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { H } from "hono/types";
import { type EdgeCache, withTimeout } from "../cache/edge-cache.ts";
import {
  EDGE_CACHE_MATCH_TIMEOUT_MS,
  EDGE_CACHE_TTL_SECONDS,
  EDGE_CACHE_VERSION,
  IF_NONE_MATCH_MAX_LENGTH,
} from "../config.ts";
import { ApiError } from "../errors.ts";
import { errorText, type Logger } from "../log.ts";
import { ETAG, ETAG_FORMAT, entityTag, ifNoneMatchMatches } from "./etag.ts";
import { waitUntil } from "./request-context.ts";
import type { Declaration, HeaderSpec } from "./stage.ts";
import type { AppEnv } from "./types.ts";

/** A conditional read as the app registers it: its path and sunset. */
export interface ConditionalReadRoute {
  /** The operation's path template under /v1 (`/pets/{petId}`). */
  path: string;
  /** Unix seconds from which no kept answer may be served (a deprecated operation's sunset). */
  until?: number;
}

/** What the operation's validators made of the request (absent: not validated). */
export interface ValidatedRequest {
  param?: Readonly<Record<string, unknown>>;
  query?: Readonly<Record<string, unknown>>;
}

/** RFC 8288 links; a 304 keeps the ones its 200 has (REPRESENTATION_HEADERS). */
export const LINK: HeaderSpec = {
  name: "Link",
  description: "RFC 8288 links.",
  schema: { type: "string" },
};

export const CACHE_CONTROL: HeaderSpec = { name: "Cache-Control", schema: { type: "string" } };

const IF_NONE_MATCH = "If-None-Match";
const CLIENT_CACHE_CONTROL = "private, no-cache";

/**
 * The handler's headers that belong to the representation, and so are kept with it.
 * Everything else (the request id, the bookmark, CORS, deprecation headers) is added
 * per request by the middleware around this one, on hits and misses alike; headers
 * the Cache API adds on a hit (`CF-Cache-Status`, `Age`, ...) are dropped.
 */
const REPRESENTATION_HEADERS = ["Content-Type", "Link"] as const;

/**
 * The cache key, built from the validated request only: the operation's path with its
 * validated parameters, then the validated query (defaults filled in) sorted by name.
 * So every spelling of one request (percent-encoded or not, parameters in any
 * order, unknown ones added) has one entry, and nothing unvalidated reaches the key.
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

/** An answer as this module keeps and serves it: representation headers, body, tag. */
interface Representation {
  headers: Headers;
  body: Uint8Array<ArrayBuffer>;
  etag: string;
}

/**
 * The representation of a handler's answer, or of a kept entry (`kept`): an entry
 * carries the tag computed when it was kept, so a hit does not hash the body again.
 */
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

/**
 * What the client gets, the same bytes and headers whether the answer came from D1 or
 * from the cache: 304 when If-None-Match matches, else the 200.
 */
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

/** If-None-Match, as the read's input: longer than the contract allows is 400. */
export const ifNoneMatch = createMiddleware<AppEnv>(async (c, next) => {
  const sent = c.req.header(IF_NONE_MATCH);
  if (sent !== undefined && sent.length > IF_NONE_MATCH_MAX_LENGTH) {
    const problem = `must be at most ${IF_NONE_MATCH_MAX_LENGTH} characters`;
    throw new ApiError("invalid_parameter", `Header "${IF_NONE_MATCH}" ${problem}.`, {
      details: [{ field: IF_NONE_MATCH, message: problem }],
    });
  }
  await next();
});

export const ifNoneMatchDeclares = (): Declaration => ({
  parameters: [
    {
      name: IF_NONE_MATCH,
      in: "header",
      required: false,
      description:
        "ETags of answers the client holds (RFC 9110: a comma-separated list, weak comparison, `*` for any). When one matches the current answer, the answer is 304 with no body.",
      schema: { type: "string", maxLength: IF_NONE_MATCH_MAX_LENGTH },
    },
  ],
  errors: [{ code: "invalid_parameter" }],
});

/** What the conditional read and its look-ahead are made of. */
interface EdgeDeps {
  edgeCache: () => EdgeCache;
  log: Logger;
}

/** What a look-ahead found: the cache key it used, and the kept answer (none: a miss). */
export interface KeptAnswer {
  key: string;
  rep: Representation | undefined;
}

/**
 * The cache key of the request and how long an answer kept now may live, in whole
 * seconds (never past `until`); undefined within a second of `until` or past it, when
 * nothing kept is served and nothing new is kept. Needs the validated input.
 */
function keeping(c: Context<AppEnv>, read: ConditionalReadRoute) {
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
async function lookUp(deps: EdgeDeps, key: string, requestId: string) {
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
 * The first stage of a conditional read: it lets the key check start the kept answer's
 * lookup side by side with the key's own (`c.var.lookAhead`), once the request's input
 * has passed `input`, the read's own checks run here on the side (invalid input starts
 * no lookup; its 400 comes in its turn). Nothing is released here.
 */
export function lookAhead(read: ConditionalReadRoute, input: H<AppEnv>[], deps: EdgeDeps) {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("lookAhead", () => {
      const ahead = async (): Promise<KeptAnswer | undefined> => {
        for (const check of input) await check(c, async () => {});
        const kept = keeping(c, read);
        return kept && { key: kept.key, rep: await lookUp(deps, kept.key, c.var.requestId) };
      };
      c.set(
        "keptAnswer",
        ahead().catch(() => undefined),
      );
    });
    await next();
  });
}

/** A conditional read, its 304 and its edge cache: the last stage before the handler. */
export function conditionalRead(read: ConditionalReadRoute, deps: EdgeDeps) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const kept = keeping(c, read);
    const ahead = await c.var.keptAnswer;
    let rep =
      kept === undefined
        ? undefined
        : ahead?.key === kept.key
          ? ahead.rep
          : await lookUp(deps, kept.key, c.var.requestId);
    if (rep === undefined) {
      await next();
      if (c.res.status !== 200) return;
      rep = await representationOf(c.res);
      if (kept !== undefined && c.var.immutable) {
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
    c.res = answer(rep, c.req.header(IF_NONE_MATCH));
  });
}

export const conditionalReadDeclares = (): Declaration => ({
  answers: [
    { header: ETAG, always: true },
    {
      header: CACHE_CONTROL,
      always: true,
      value: CLIENT_CACHE_CONTROL,
      note: "`private, no-cache` on the 200 and 304 answers of {operations}: a client may keep the answer and must revalidate it (`If-None-Match`); a shared cache must not keep it.",
    },
  ],
  notModified: {
    description:
      "Not modified: the `If-None-Match` of the request matches the current `ETag`. No body; the headers that describe the answer (`ETag`, `Cache-Control`, `Link`) are kept.",
    headers: [{ header: LINK }],
  },
});
