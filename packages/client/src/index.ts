// @petstore/client: the Pet Store API from TypeScript, on Node 20+, in browsers and in
// Workers (it needs nothing but fetch). Its types are generated from the API's OpenAPI
// document (schema.ts, by openapi-typescript) and requests go through openapi-fetch; this
// file adds what a document cannot say: pages by `Link`, every failure as a PetStoreError
// (a success that is not the operation's too), creates retried under one `Idempotency-Key`,
// changes retried only where a retry is safe, a 304 as a value, read-your-writes.
import createClient, { type Client } from "openapi-fetch";
import { PetStoreError } from "./errors.ts";
import { isJson, linkTarget } from "./headers.ts";
import {
  afterLostResponse,
  attemptsOf,
  type RetryEvent,
  type RetryOptions,
  send,
  type TimeLimits,
} from "./retry.ts";
import type { components, operations, paths } from "./schema.ts";

export {
  type ErrorBody,
  type ErrorCode,
  type ErrorDetail,
  type FailureCode,
  type FailureKind,
  PetStoreError,
} from "./errors.ts";
export {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  type RetryEvent,
  type RetryOptions,
  type TimeLimits,
} from "./retry.ts";
export type { components, operations, paths } from "./schema.ts";

export type Pet = components["schemas"]["Pet"];
export type NewPet = components["schemas"]["NewPet"];
/** updatePet's JSON Merge Patch: the fields to change, as createPet takes them. */
export type PetPatch = components["schemas"]["PetPatch"];
export type PetStatus = components["schemas"]["PetStatus"];
/** listPets' query: `status`, `limit` (1..100, default 20), and a page's `cursor`. */
export type ListPetsQuery = NonNullable<operations["listPets"]["parameters"]["query"]>;

/** The header that names the calling application (`appName`) and this package. */
export const CLIENT_NAME_HEADER = "X-Client-Name";
/** This package, as `X-Client-Name` names it after the application. */
export const CLIENT_NAME = "petstore-client/1.0.0";
const BOOKMARK = "x-d1-bookmark";
/** The longest `appName`: `X-Client-Name` holds at most 200 characters, this package's too. */
const APP_NAME_MAX = 199 - CLIENT_NAME.length;

export interface PetStoreClientOptions extends TimeLimits {
  /** The API's server URL with its `/v1`, e.g. `https://api.petstore.example.com/v1`. */
  baseUrl: string;
  /** An API key (`psk_...`), sent as `Authorization: Bearer <key>`, to `baseUrl` only. */
  apiKey: string;
  /** The fetch to send requests with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries (of what may be sent again): network failures, timeouts, 429, 502, 503, 504. */
  retry?: RetryOptions;
  /** Called before each retry's wait, e.g. to log it. */
  onRetry?: (event: RetryEvent) => void;
  /**
   * Your application's name, e.g. `shop-web/2.1`: sent before this package's in
   * `X-Client-Name`, so the API's logs tell callers apart. The header is 1 to 200 printable
   * ASCII characters (the API's document), so the name may have 178, no space at either end.
   */
  appName?: string;
  /**
   * Read your own writes: every read carries the newest `x-d1-bookmark` this client has
   * received (`bookmark`), so no replica responds to it with older data. Default false.
   */
  consistent?: boolean;
}

/** What every call takes: an `AbortSignal`, and time limits for this call alone. */
export interface CallOptions extends TimeLimits {
  signal?: AbortSignal;
}

export interface ReadOptions extends CallOptions {
  /** The `etag` of a response you hold: if it is still current, the read is `NotModified`. */
  ifNoneMatch?: string;
  /** A response's `bookmark` (a create's, say): the read sees data at least that fresh. */
  bookmark?: string;
}

/** The response of a read whose `ifNoneMatch` is still current (HTTP 304): keep what you hold. */
export interface NotModified {
  notModified: true;
  etag: string;
}

/** One page of animals, in ascending id order. */
export interface Page {
  notModified: false;
  pets: Pet[];
  /** Pass it back as `ifNoneMatch` to read the page again only if it changed. */
  etag: string;
  /** `x-d1-bookmark`: how fresh the data is (a page from the edge cache may have none). */
  bookmark: string | undefined;
  /** The `cursor` of the next page (from `Link: rel="next"`); undefined on the last page. */
  nextCursor: string | undefined;
}

export interface PetRead {
  notModified: false;
  pet: Pet;
  /** Pass it back as `ifNoneMatch` to read the animal again only if it changed. */
  etag: string;
  /** `x-d1-bookmark`: how fresh the data is (a response from the edge cache may have none). */
  bookmark: string | undefined;
}

export interface Created {
  /** The animal, `status` filled in (`available` when the create left it out). */
  pet: Pet;
  /** `Location`: the path of the animal, `/v1/pets/{id}`. */
  location: string;
  /** True when the API responded with the first response to this key (`Idempotent-Replayed`). */
  replayed: boolean;
  /** The key the create was sent (and retried) with: yours, or the generated one. */
  idempotencyKey: string;
  /** `x-d1-bookmark` of the write: pass it to a read (`bookmark`) to read it back. */
  bookmark: string | undefined;
  /** The animal's `ETag` (as created, on a replay too): for `ifMatch`. */
  etag: string;
}

/** What updatePet and deletePet take. */
export interface ChangeOptions extends CallOptions {
  /**
   * The animal's `etag` as you saw it (getPet's, createPet's, updatePet's): the change
   * happens only if it is still so, else 412 `precondition_failed` and nothing changes.
   */
  ifMatch?: string;
}

export interface Updated {
  /** The whole animal as changed. */
  pet: Pet;
  /** Its new `ETag`: the `ifMatch` of its next change. */
  etag: string;
  /** `x-d1-bookmark` of the change: pass it to a read (`bookmark`) to read it back. */
  bookmark: string | undefined;
}

export interface Removed {
  removed: true;
  /**
   * True when a retry found no such animal (404) after an attempt whose response was lost:
   * that attempt removed it, or another caller did meanwhile. Either way it is gone.
   */
  alreadyGone: boolean;
  /** `x-d1-bookmark` of the removal: a read given it no longer sees the animal. */
  bookmark: string | undefined;
}

type NoCondition = Omit<ReadOptions, "ifNoneMatch"> & { ifNoneMatch?: undefined };

/** A client of the Pet Store API. Every failure of a call is thrown as a `PetStoreError`. */
export class PetStoreClient {
  /**
   * The generated client (openapi-fetch) with the key, the time limits and the retries:
   * every operation of the document, typed, its responses as they come
   * (`{ data, error, response }`); a failure without a response is thrown.
   */
  readonly raw: Client<paths>;
  readonly #options: PetStoreClientOptions;
  #bookmark: string | undefined;

  constructor(options: PetStoreClientOptions) {
    const { appName } = options;
    const fits =
      /^[!-~](?:[ -~]*[!-~])?$/.test(appName ?? "x") && (appName?.length ?? 0) <= APP_NAME_MAX;
    if (!fits) {
      throw new TypeError(
        `appName: 1 to ${APP_NAME_MAX} printable ASCII characters, no space at either end, e.g. shop-web/2.1 (${CLIENT_NAME_HEADER} carries it before "${CLIENT_NAME}", at most 200 characters in all)`,
      );
    }
    const clientName = appName === undefined ? CLIENT_NAME : `${appName} ${CLIENT_NAME}`;
    this.#options = options;
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl,
      headers: { Authorization: `Bearer ${options.apiKey}`, [CLIENT_NAME_HEADER]: clientName },
      fetch: this.#sender(),
    });
  }

  /** The newest `x-d1-bookmark` received (what a `consistent` client sends with reads). */
  get bookmark(): string | undefined {
    return this.#bookmark;
  }

  /**
   * Sends a request with the client's settings and `limits`, and notes what it returned.
   * With `success`, a 2xx that is not it (another status, not JSON, not its shape: a
   * captive portal's page, a proxy's) is a failure.
   */
  #sender(limits: TimeLimits = {}, success?: Success) {
    const options = { ...this.#options, ...defined(limits) };
    const fetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    return async (request: Request) => {
      const response = await send(fetch, request, options);
      const bookmark = response.headers.get(BOOKMARK) ?? "";
      // Bookmarks compare as strings: a later one sorts after an earlier one.
      if (bookmark > (this.#bookmark ?? "")) this.#bookmark = bookmark;
      noticeDeprecation(request, response);
      const unlike = success && response.ok && (await notTheSuccess(response, success));
      if (unlike) {
        const idempotencyKey = request.headers.get("Idempotency-Key") ?? undefined;
        const attempts = attemptsOf(response);
        throw new PetStoreError({
          kind: "response",
          response,
          attempts,
          idempotencyKey,
          ...unlike,
        });
      }
      return response;
    };
  }

  /**
   * What a call passes to openapi-fetch: its signal, its limits and its operation's
   * `success`, its conditions, the bookmark for a read.
   */
  #call(options: ReadOptions & ChangeOptions, success: Success, read = false) {
    const { signal, timeoutMs, attemptTimeoutMs, ifNoneMatch, ifMatch } = options;
    const bookmark =
      options.bookmark ?? (read && this.#options.consistent ? this.#bookmark : undefined);
    return {
      signal,
      fetch: this.#sender({ timeoutMs, attemptTimeoutMs }, success),
      header: { "If-None-Match": ifNoneMatch, "If-Match": ifMatch, [BOOKMARK]: bookmark },
    };
  }

  /** One page of animals (listPets); with `ifNoneMatch`, `NotModified` when it is current. */
  listPets(query?: ListPetsQuery, options?: NoCondition): Promise<Page>;
  listPets(query: ListPetsQuery, options: ReadOptions): Promise<Page | NotModified>;
  async listPets(
    query: ListPetsQuery = {},
    options: ReadOptions = {},
  ): Promise<Page | NotModified> {
    const { header, ...call } = this.#call(options, { status: 200, body: isPage }, true);
    const result = await this.raw.GET("/pets", { params: { query, header }, ...call });
    return read(result, (pets, response) => {
      const next = linkTarget(response.headers.get("Link"));
      const cursor = next && new URL(next, "https://base.invalid").searchParams.get("cursor");
      return { pets, nextCursor: cursor ?? undefined };
    });
  }

  /** Every page from `query.cursor` (or the first) to the last, following `Link: rel="next"`. */
  async *pages(query: ListPetsQuery = {}, options: NoCondition = {}): AsyncGenerator<Page> {
    let cursor = query.cursor;
    do {
      const page = await this.listPets({ ...query, cursor }, options);
      yield page;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /** Every animal of the listing, page after page (`limit` sets the page size). */
  async *pets(query: ListPetsQuery = {}, options: NoCondition = {}): AsyncGenerator<Pet> {
    for await (const page of this.pages(query, options)) yield* page.pets;
  }

  /**
   * Adds an animal (createPet) under an `Idempotency-Key`, yours or a generated one.
   * Retries send the same key, so the API creates the animal once and returns a retry
   * with its first response (`replayed`). Every failure carries the key, to retry by hand.
   */
  async createPet(
    pet: NewPet,
    options: CallOptions & { idempotencyKey?: string } = {},
  ): Promise<Created> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    const { signal, fetch } = this.#call(options, { status: 201, body: isPet });
    const result = await this.raw.POST("/pets", {
      body: pet,
      params: { header: { "Idempotency-Key": idempotencyKey } },
      signal,
      fetch,
    });
    const header = (name: string) => result.response.headers.get(name) ?? undefined;
    return {
      pet: body(result, idempotencyKey),
      location: header("Location") ?? "",
      replayed: header("Idempotent-Replayed") === "true",
      idempotencyKey,
      ...etagAndBookmark(result.response),
    };
  }

  /**
   * Changes the fields `patch` names (updatePet, a JSON Merge Patch); with `ifMatch`, only
   * if the animal is still as that `etag` says, else 412 `precondition_failed`. A patch
   * sent twice ends as once: it is retried like a read, but under `ifMatch` only after a
   * 429 (a retry would meet its own first attempt as 412), so a failure without a response
   * may have applied it: read the animal again.
   */
  async updatePet(petId: number, patch: PetPatch, options: ChangeOptions = {}): Promise<Updated> {
    const { header, ...call } = this.#call(options, { status: 200, body: isPet });
    const result = await this.raw.PATCH("/pets/{petId}", {
      params: { path: { petId }, header },
      body: patch,
      headers: { "Content-Type": "application/merge-patch+json" },
      ...call,
    });
    return { pet: body(result), ...etagAndBookmark(result.response) };
  }

  /**
   * Removes an animal (deletePet); with `ifMatch`, only if it is still as that `etag` says,
   * else 412 `precondition_failed`. Retried like a read: a 404 after an attempt whose response
   * was lost resolves as removed (`alreadyGone`), while a first attempt's 404 is
   * `not_found`.
   */
  async deletePet(petId: number, options: ChangeOptions = {}): Promise<Removed> {
    const { header, ...call } = this.#call(options, { status: 204 });
    const result = await this.raw.DELETE("/pets/{petId}", {
      params: { path: { petId }, header },
      ...call,
    });
    const alreadyGone = result.response.status === 404 && afterLostResponse(result.response);
    if (!alreadyGone) body(result);
    return { removed: true, alreadyGone, bookmark: etagAndBookmark(result.response).bookmark };
  }

  /**
   * One animal by id (getPet); with `ifNoneMatch`, `NotModified` when it is current.
   * @deprecated getPet is deprecated since Sun, 01 Nov 2026 and responds with 410 `gone` from its
   * sunset, Thu, 05 Dec 2030 00:00:00 GMT. Use `pets()` or `listPets()` instead. The first
   * call logs a notice naming the sunset (`console.warn`, once).
   */
  getPet(petId: number, options?: NoCondition): Promise<PetRead>;
  /** @deprecated Sunset Thu, 05 Dec 2030 00:00:00 GMT (410 `gone` from then): use `pets()`. */
  getPet(petId: number, options: ReadOptions): Promise<PetRead | NotModified>;
  async getPet(petId: number, options: ReadOptions = {}): Promise<PetRead | NotModified> {
    const { header, ...call } = this.#call(options, { status: 200, body: isPet }, true);
    const result = await this.raw.GET("/pets/{petId}", {
      params: { path: { petId }, header },
      ...call,
    });
    return read(result, (pet) => ({ pet }));
  }

  /**
   * Store orders: not available yet. Their contract is not published, so the API responses
   * 501 `not_implemented`, thrown as a `PetStoreError`; this never returns.
   * @experimental
   */
  async listOrders(options: CallOptions = {}): Promise<never> {
    const { signal, fetch } = this.#call(options, { status: 501 });
    const { error, response } = await this.raw.GET("/store/orders", { signal, fetch });
    throw new PetStoreError({
      kind: "response",
      response,
      body: error,
      attempts: attemptsOf(response),
    });
  }
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/** An operation's success: its status and, when it has a body, the shape of its JSON. */
interface Success {
  status: number;
  body?: (data: unknown) => boolean;
}

/** Why a 2xx response is not the operation's `success`; undefined when it is. */
async function notTheSuccess(response: Response, success: Success) {
  const { status, headers } = response;
  const problem = (what: string) => ({ message: `HTTP ${status}: ${what}` });
  if (status !== success.status) return problem(`the operation responds with ${success.status}`);
  if (!success.body) return undefined;
  const type = headers.get("Content-Type") ?? "no media type";
  if (!isJson(headers)) return problem(`${type}, not the operation's JSON`);
  // It parses: send() took a JSON body that does not for one cut short.
  const body = await response.clone().json();
  return success.body(body) ? undefined : problem("JSON that is not the operation's");
}

const isPet = (data: unknown): data is Pet => {
  const pet = data as Partial<Pet> | null;
  return (
    Number.isSafeInteger(pet?.id) &&
    typeof pet?.name === "string" &&
    Number.isSafeInteger(pet.categoryId) &&
    typeof pet.status === "string"
  );
};
const isPage = (data: unknown) => Array.isArray(data) && data.every(isPet);

/** The body of a 2xx response; a `PetStoreError` for any other. */
function body<T>({ data, error, response }: Result<T>, idempotencyKey?: string): T {
  if (response.ok) return data as T;
  const attempts = attemptsOf(response);
  throw new PetStoreError({ kind: "response", response, body: error, attempts, idempotencyKey });
}

/** A response's `ETag` and `x-d1-bookmark`. */
const etagAndBookmark = ({ headers }: Response) => ({
  etag: headers.get("ETag") ?? "",
  bookmark: headers.get(BOOKMARK) ?? undefined,
});

/** A read's response with its `etag`: a 304 as `NotModified`, a 2xx through `fields`. */
function read<T, R>(result: Result<T>, fields: (data: T, response: Response) => R) {
  const { etag, bookmark } = etagAndBookmark(result.response);
  if (result.response.status === 304) return { notModified: true, etag } satisfies NotModified;
  return { notModified: false as const, etag, bookmark, ...fields(body(result), result.response) };
}

/** The options in `limits` that are set. */
const defined = (limits: TimeLimits) =>
  Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));

const noticed = new Set<string>();

/**
 * A notice, once per deprecated operation and process, when a response says its operation
 * is deprecated (`Deprecation`, RFC 9745): its sunset (RFC 8594) and its successor.
 */
function noticeDeprecation(request: Request, response: Response) {
  const header = (name: string) => response.headers.get(name) ?? undefined;
  const [deprecation, sunset] = [header("Deprecation"), header("Sunset")];
  if (!deprecation || noticed.has(`${deprecation} ${sunset}`)) return;
  noticed.add(`${deprecation} ${sunset}`);
  const successor = linkTarget(header("Link") ?? null, "successor-version");
  const docs = linkTarget(header("Link") ?? null, "deprecation");
  console.warn(
    `@petstore/client: ${request.method} ${new URL(request.url).pathname} is deprecated.` +
      (sunset ? ` From its sunset, ${sunset}, the API responses it 410 gone.` : "") +
      (successor ? ` Its successor: ${successor}.` : "") +
      (docs ? ` See ${docs}.` : ""),
  );
}

/** 128 random bits in hex (crypto.getRandomValues runs where randomUUID may not: http pages). */
function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
