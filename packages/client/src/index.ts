// @petstore/client: the Pet Store API from TypeScript, on Node 20+, in browsers and in
// Workers (it needs nothing but fetch). Its types are generated from the API's OpenAPI
// document (schema.ts, by openapi-typescript) and requests go through openapi-fetch; this
// file adds what a document cannot say: pages by `Link`, the Error object as an exception,
// creates retried under one `Idempotency-Key`, and a 304 as a value.
import createClient, { type Client } from "openapi-fetch";
import { PetStoreError } from "./errors.ts";
import { nextLink } from "./headers.ts";
import { type RetryOptions, retrying } from "./retry.ts";
import type { components, operations, paths } from "./schema.ts";

export { type ErrorBody, type ErrorCode, type ErrorDetail, PetStoreError } from "./errors.ts";
export type { RetryOptions } from "./retry.ts";
export type { components, operations, paths } from "./schema.ts";

export type Pet = components["schemas"]["Pet"];
export type NewPet = components["schemas"]["NewPet"];
export type PetStatus = components["schemas"]["PetStatus"];
/** listPets' query: `status`, `limit` (1..100, default 20), and a page's `cursor`. */
export type ListPetsQuery = NonNullable<operations["listPets"]["parameters"]["query"]>;

export interface PetStoreClientOptions {
  /** The API's server URL with its `/v1`, e.g. `https://api.petstore.example.com/v1`. */
  baseUrl: string;
  /** An API key (`psk_...`), sent as `Authorization: Bearer <key>`, to `baseUrl` only. */
  apiKey: string;
  /** The fetch to send requests with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries of network errors, 429 and 503 (reads, and creates under their key). */
  retry?: RetryOptions;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ReadOptions extends CallOptions {
  /** The `etag` of an answer you hold: if it is still current, the read is `NotModified`. */
  ifNoneMatch?: string;
}

/** The answer of a read whose `ifNoneMatch` is still current (HTTP 304): keep what you hold. */
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
  /** The `cursor` of the next page (from `Link: rel="next"`); undefined on the last page. */
  nextCursor: string | undefined;
}

export interface PetRead {
  notModified: false;
  pet: Pet;
  /** Pass it back as `ifNoneMatch` to read the animal again only if it changed. */
  etag: string;
}

export interface Created {
  /** The animal, `status` filled in (`available` when the create left it out). */
  pet: Pet;
  /** `Location`: the path of the animal, `/v1/pets/{id}`. */
  location: string;
  /** True when the API answered with the first answer to this key (`Idempotent-Replayed`). */
  replayed: boolean;
  /** The key the create was sent (and retried) with: yours, or the generated one. */
  idempotencyKey: string;
}

type NoCondition = CallOptions & { ifNoneMatch?: undefined };

/** A client of the Pet Store API. Every call throws a `PetStoreError` for an error answer. */
export class PetStoreClient {
  /**
   * The generated client (openapi-fetch) with the key and the retries: every operation of
   * the document, typed, its answers as they come (`{ data, error, response }`).
   */
  readonly raw: Client<paths>;

  constructor(options: PetStoreClientOptions) {
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl,
      headers: { Authorization: `Bearer ${options.apiKey}` },
      fetch: retrying(options.fetch ?? ((request) => fetch(request)), options.retry),
    });
  }

  /** One page of animals (listPets); with `ifNoneMatch`, `NotModified` when it is current. */
  listPets(query?: ListPetsQuery, options?: NoCondition): Promise<Page>;
  listPets(query: ListPetsQuery, options: ReadOptions): Promise<Page | NotModified>;
  async listPets(
    query: ListPetsQuery = {},
    options: ReadOptions = {},
  ): Promise<Page | NotModified> {
    const result = await this.raw.GET("/pets", {
      params: { query, header: { "If-None-Match": options.ifNoneMatch } },
      signal: options.signal,
    });
    return read(result, (pets, response) => {
      const next = nextLink(response.headers.get("Link"));
      const cursor = next && new URL(next, "https://base.invalid").searchParams.get("cursor");
      return { pets, nextCursor: cursor ?? undefined };
    });
  }

  /** Every page from `query.cursor` (or the first) to the last, following `Link: rel="next"`. */
  async *pages(query: ListPetsQuery = {}, options: CallOptions = {}): AsyncGenerator<Page> {
    let cursor = query.cursor;
    do {
      const page = await this.listPets({ ...query, cursor }, options);
      yield page;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /** Every animal of the listing, page after page (`limit` sets the page size). */
  async *pets(query: ListPetsQuery = {}, options: CallOptions = {}): AsyncGenerator<Pet> {
    for await (const page of this.pages(query, options)) yield* page.pets;
  }

  /**
   * Adds an animal (createPet) under an `Idempotency-Key`, yours or a generated one.
   * Network errors, 429 and 503 are retried with the same key, so the API creates the
   * animal once and answers a retry with its first answer (`replayed`).
   */
  async createPet(
    pet: NewPet,
    options: CallOptions & { idempotencyKey?: string } = {},
  ): Promise<Created> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    const result = await this.raw.POST("/pets", {
      body: pet,
      params: { header: { "Idempotency-Key": idempotencyKey } },
      signal: options.signal,
    });
    const header = (name: string) => result.response.headers.get(name);
    return {
      pet: body(result),
      location: header("Location") ?? "",
      replayed: header("Idempotent-Replayed") === "true",
      idempotencyKey,
    };
  }

  /**
   * One animal by id (getPet); with `ifNoneMatch`, `NotModified` when it is current.
   * @deprecated getPet is deprecated since Sun, 01 Nov 2026 and answers 410 `gone` from its
   * sunset, Thu, 05 Dec 2030 00:00:00 GMT. Use `pets()` or `listPets()` instead.
   */
  getPet(petId: number, options?: NoCondition): Promise<PetRead>;
  /** @deprecated Sunset Thu, 05 Dec 2030 00:00:00 GMT (410 `gone` from then): use `pets()`. */
  getPet(petId: number, options: ReadOptions): Promise<PetRead | NotModified>;
  async getPet(petId: number, options: ReadOptions = {}): Promise<PetRead | NotModified> {
    const result = await this.raw.GET("/pets/{petId}", {
      params: { path: { petId }, header: { "If-None-Match": options.ifNoneMatch } },
      signal: options.signal,
    });
    return read(result, (pet) => ({ pet }));
  }

  /**
   * Store orders: not available yet. Their contract is not published, so the API answers
   * 501 `not_implemented`, thrown as a `PetStoreError`; this never returns.
   * @experimental
   */
  async listOrders(options: CallOptions = {}): Promise<never> {
    const { error, response } = await this.raw.GET("/store/orders", { signal: options.signal });
    throw new PetStoreError(response, error);
  }
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/** The body of a 2xx answer; a `PetStoreError` for any other. */
function body<T>({ data, error, response }: Result<T>): T {
  if (!response.ok) throw new PetStoreError(response, error);
  return data as T;
}

/** A read's answer with its `etag`: a 304 as `NotModified`, a 2xx through `fields`. */
function read<T, R>(result: Result<T>, fields: (data: T, response: Response) => R) {
  const etag = result.response.headers.get("ETag") ?? "";
  if (result.response.status === 304) return { notModified: true, etag } satisfies NotModified;
  return { notModified: false as const, etag, ...fields(body(result), result.response) };
}

/** 128 random bits in hex (crypto.getRandomValues runs where randomUUID may not: http pages). */
function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
