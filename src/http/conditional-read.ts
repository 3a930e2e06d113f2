// Conditional requests and edge caching for the reads that the operation table marks
// `conditional` (docs/api.md, "Conditional requests and the edge cache"). One
// middleware serves them all; it runs after authentication, the rate limit and the
// scope check (all registered before it in src/app.ts), so no 304 and no cache hit
// ever skips them.
//
// Every 200 gets a strong ETag computed from its body and `Cache-Control: private,
// no-cache`; an If-None-Match that matches is answered 304. Answers that never change
// once they exist (a pet; a page that has a next page) are kept in the Workers Cache
// API of the data center under the normalised request, never under the API key, and
// served from there without touching D1. The cache failing or hanging only costs the
// D1 read it would have saved.
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
import type { HeaderSpec, Stage } from "./stage.ts";
import type { AppEnv } from "./types.ts";

/** What the operation table says about one conditional read. */
export interface ConditionalRead {
  /**
   * Which 200s never change once they exist, and so may be kept: every one (a pet),
   * or only a page that has a next page (its `Link` carries rel="next").
   */
  immutable: "always" | "when-next-page";
}

/** A conditional read as the app registers it: the table's entry, its path and sunset. */
export interface ConditionalReadRoute extends ConditionalRead {
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

const CLIENT_CACHE_CONTROL = "private, no-cache";

/** RFC 8288 links; a 304 keeps the ones its 200 has (REPRESENTATION_HEADERS). */
export const LINK: HeaderSpec = {
  name: "Link",
  description: "RFC 8288 links.",
  schema: { type: "string" },
};

export const CACHE_CONTROL: HeaderSpec = { name: "Cache-Control", schema: { type: "string" } };

const ETAG: HeaderSpec = {
  name: "ETag",
  description:
    "A strong entity tag computed from the body: equal bodies have equal tags. Send it back in `If-None-Match` to get 304 while the answer is unchanged.",
  schema: { type: "string", pattern: ETAG_FORMAT.source },
};

const IF_NONE_MATCH = "If-None-Match";

/**
 * The handler's headers that belong to the representation, and so are kept with it.
 * Everything else (the request id, the bookmark, CORS, deprecation headers) is added
 * per request by the middleware around this one, on hits and misses alike; headers
 * the Cache API adds on a hit (`CF-Cache-Status`, `Age`, ...) are dropped.
 */
const REPRESENTATION_HEADERS = ["Content-Type", LINK.name] as const;

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
  const stored = kept ? response.headers.get(ETAG.name) : null;
  const etag = stored !== null && ETAG_FORMAT.test(stored) ? stored : await entityTag(body);
  return { headers, body, etag };
}

function isImmutable(read: ConditionalRead, rep: Representation): boolean {
  if (read.immutable === "always") return true;
  return /;\s*rel="next"/.test(rep.headers.get(LINK.name) ?? "");
}

/**
 * What the client gets, the same bytes and headers whether the answer came from D1 or
 * from the cache: 304 when If-None-Match matches, else the 200.
 */
function answer(rep: Representation, ifNoneMatch: string | undefined): Response {
  const headers = new Headers(rep.headers);
  headers.set(ETAG.name, rep.etag);
  headers.set(CACHE_CONTROL.name, CLIENT_CACHE_CONTROL);
  if (ifNoneMatchMatches(ifNoneMatch, rep.etag)) {
    // RFC 9110 15.4.5: a 304 has no content; the headers that describe the resource stay.
    headers.delete("Content-Type");
    return new Response(null, { status: 304, headers });
  }
  return new Response(rep.body, { status: 200, headers });
}

/** A conditional read, its 304 and its edge cache, as a stage of the operation. */
export function conditionalRead(
  read: ConditionalReadRoute,
): Stage<{ edgeCache: () => EdgeCache; log: Logger }> {
  return {
    declares: {
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
    },
    middleware: ({ edgeCache, log }) => conditionalReadMiddleware(read, { cache: edgeCache, log }),
  };
}

function conditionalReadMiddleware(
  read: ConditionalReadRoute,
  deps: { cache: () => EdgeCache; log: Logger },
) {
  const warn = (msg: string, requestId: string, err: unknown) =>
    deps.log({
      level: "warn",
      msg,
      request_id: requestId,
      error: errorText(err),
    });

  /** The kept answer under `key`, or undefined: a miss, a failure, or a cache too slow. */
  const lookUp = async (key: string, requestId: string) => {
    try {
      return await withTimeout(
        Promise.resolve()
          .then(() => deps.cache().match(key))
          .then((kept) => (kept?.status === 200 ? representationOf(kept, true) : undefined)),
        EDGE_CACHE_MATCH_TIMEOUT_MS,
      );
    } catch (err) {
      warn("edge cache match failed", requestId, err);
      return undefined;
    }
  };

  return createMiddleware<AppEnv>(async (c, next) => {
    const ifNoneMatch = c.req.header(IF_NONE_MATCH);
    if (ifNoneMatch !== undefined && ifNoneMatch.length > IF_NONE_MATCH_MAX_LENGTH) {
      const problem = `must be at most ${IF_NONE_MATCH_MAX_LENGTH} characters`;
      throw new ApiError("invalid_parameter", `Header "${IF_NONE_MATCH}" ${problem}.`, {
        details: [{ field: IF_NONE_MATCH, message: problem }],
      });
    }
    const now = c.var.clock();
    // Whole seconds an answer kept now may live: never past `until`. Within a second
    // of it, nothing kept is served and nothing new is kept.
    const ttl = Math.min(
      EDGE_CACHE_TTL_SECONDS,
      read.until === undefined
        ? Number.POSITIVE_INFINITY
        : Math.floor((read.until * 1000 - now) / 1000),
    );
    // Registered after the operation's validators: what they accepted is the request.
    const valid = c.req.valid.bind(c.req) as (target: "param" | "query") => Record<string, unknown>;
    const key =
      ttl > 0
        ? cacheKey(new URL(c.req.url).origin, read.path, {
            param: valid("param"),
            query: valid("query"),
          })
        : undefined;

    let rep = key === undefined ? undefined : await lookUp(key, c.var.requestId);
    if (rep === undefined) {
      await next();
      if (c.res.status !== 200) return;
      rep = await representationOf(c.res);
      if (key !== undefined && isImmutable(read, rep)) {
        const kept = new Headers(rep.headers);
        kept.set(ETAG.name, rep.etag);
        kept.set(CACHE_CONTROL.name, `public, max-age=${ttl}`);
        const response = new Response(rep.body, { status: 200, headers: kept });
        const put = Promise.resolve()
          .then(() => deps.cache().put(key, response))
          .catch((err: unknown) => warn("edge cache put failed", c.var.requestId, err));
        waitUntil(c, put);
      }
    }

    c.res = undefined;
    c.res = answer(rep, ifNoneMatch);
  });
}
