// The operations of /v1: one object each. Each field says what the operation is, never
// what another field implies: src/stages.ts turns the fields into the operation's stages
// (key, scope, validators, D1 session, deprecation and sunset, conditional read, the
// handler), which the app factory (src/app.ts) chains and whose declarations the
// document builder (src/openapi/document.ts) merges with this table.
import * as z from "zod/mini";
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "./config.ts";
import type { Deprecation } from "./http/deprecation.ts";
import {
  ListPetsQuerySchema,
  NewPetSchema,
  PetIdParamSchema,
  PetSchema,
  PetsSchema,
} from "./pets/schemas.ts";
import type { Scope } from "./scopes.ts";

/** The tags of the document, in its order: each operation has one. */
export const TAGS = {
  animals: "The animals of the store.",
  store: "Store operations (experimental).",
  documentation: "This document and its reference page (public).",
};

interface OperationBase {
  operationId: string;
  method: "get" | "post";
  /** Relative to the server URL (which ends in /v1). */
  path: string;
  summary: string;
  description: string;
  tag: keyof typeof TAGS;
  /** x-stability in the document. */
  stability?: "experimental";
  query?: z.ZodMiniType;
  params?: z.ZodMiniType;
  body?: z.ZodMiniType;
  /**
   * The operation's D1 session (Sessions API): a read may be served by a replica, no
   * older than the `x-d1-bookmark` the client sends (a documented parameter of reads
   * only); a write starts on the primary. Both answer with their bookmark.
   */
  session?: "read" | "write";
  /** The success answer; its headers and the errors are the stages' (src/stages.ts). */
  success?: {
    status: 200 | 201;
    schema: z.ZodMiniType;
    description: string;
    /** Default `application/json`. */
    mediaType?: "application/json" | "text/html";
  };
  /** Deprecated: every answer after the key check says so, and from the sunset on it is 410. */
  deprecation?: Deprecation;
  /**
   * A read with ETag / If-None-Match / 304, whose immutable answers (its handler says
   * which) the edge cache may keep (src/http/conditional-read.ts). The document gains
   * the headers and the 304.
   */
  conditional?: true;
  /**
   * A folder of static files served beside the operation, with its access (the reference
   * page's scripts, `GET <files>/*` from the ASSETS binding). Not in the document.
   */
  files?: string;
}

/**
 * An operation is public (answered without an API key, `security: []`, outside the
 * rate limit) or names the one scope a key needs to call it: the scope middleware
 * enforces it and the document lists it in the operation's `security`.
 */
export type Operation = OperationBase &
  ({ public: true; scope?: undefined } | { public?: undefined; scope: Scope });

export const listPets = {
  operationId: "listPets",
  tag: "animals",
  method: "get",
  path: "/pets",
  scope: "pets:read",
  summary: "List animals",
  description:
    'Returns animals in ascending id (creation) order as a bare array. Pages use keyset pagination: when more animals follow, the `Link` header carries `rel="next"` with an opaque `cursor`; the last page has none.',
  query: ListPetsQuerySchema,
  session: "read",
  conditional: true,
  success: {
    status: 200,
    schema: PetsSchema,
    description: "A page of animals.",
  },
} as const satisfies Operation;

export const createPet = {
  operationId: "createPet",
  tag: "animals",
  method: "post",
  path: "/pets",
  scope: "pets:write",
  summary: "Add an animal",
  description:
    "Creates an animal. Send `Idempotency-Key` to make retries safe: the same key with the same body within 24 hours replays the first response with `Idempotent-Replayed: true`.",
  body: NewPetSchema,
  session: "write",
  success: {
    status: 201,
    schema: PetSchema,
    description: "The created animal.",
  },
} as const satisfies Operation;

export const getPet = {
  operationId: "getPet",
  tag: "animals",
  method: "get",
  path: "/pets/{petId}",
  scope: "pets:read",
  summary: "Fetch an animal by id (deprecated)",
  description:
    'Deprecated: use `GET /pets` with the `status` filter. Every response carries `Deprecation`, `Sunset` and `Link` (rel="successor-version" and rel="deprecation"). From the sunset instant (Thu, 05 Dec 2030 00:00:00 GMT) on, the operation answers 410 `gone`.',
  deprecation: {
    since: GET_PET_DEPRECATED_AT,
    sunset: GET_PET_SUNSET_AT,
    successor: "/v1/pets",
    docs: "/v1/docs#tag/animals/GET/pets/%7BpetId%7D",
    gone: "GET /v1/pets/{petId} was removed on Thu, 05 Dec 2030; use GET /v1/pets with the status filter.",
  },
  params: PetIdParamSchema,
  session: "read",
  conditional: true,
  success: {
    status: 200,
    schema: PetSchema,
    description: "The animal.",
  },
} as const satisfies Operation;

export const listOrders = {
  operationId: "listOrders",
  tag: "store",
  method: "get",
  path: "/store/orders",
  scope: "orders:read",
  summary: "List store orders (experimental, not implemented)",
  description:
    "The contract of this operation has not been published. It answers 501 `not_implemented` for authenticated callers rather than invent a shape.",
  stability: "experimental",
} as const satisfies Operation;

/** What GET /openapi.json answers: this document (its shape is OpenAPI's, not ours). */
const OpenApiDocumentSchema = z.looseObject({
  openapi: z.string().check(z.regex(/^3\.1\.\d+$/)),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

export const getOpenApiDocument = {
  operationId: "getOpenApiDocument",
  tag: "documentation",
  method: "get",
  path: "/openapi.json",
  summary: "This OpenAPI document",
  description:
    "The OpenAPI 3.1 description of the API, generated from the schemas that validate requests. Public: no API key needed.",
  public: true,
  success: {
    status: 200,
    schema: OpenApiDocumentSchema,
    description: "The OpenAPI 3.1 document.",
  },
} as const satisfies Operation;

export const getDocs = {
  operationId: "getDocs",
  tag: "documentation",
  method: "get",
  path: "/docs",
  summary: "Interactive API reference",
  description:
    "An HTML page that renders this document as an interactive reference. Public: no API key needed.",
  public: true,
  success: {
    status: 200,
    schema: z.string(),
    description: "The reference page.",
    mediaType: "text/html",
  },
  files: "/docs/assets",
} as const satisfies Operation;

const ALL = [listPets, createPet, getPet, listOrders, getOpenApiDocument, getDocs] as const;

/** Every operation, in the order the document lists them. */
export const OPERATIONS: readonly Operation[] = ALL;

export type OperationId = (typeof ALL)[number]["operationId"];

// ------------------------------------------------------------ route types
// What the router and the handlers' types read from an operation.

/** An OpenAPI path template as Hono routes it: `/pets/{petId}` is `/pets/:petId`. */
export type RoutePath<P extends string> = P extends `${infer Head}{${infer Name}}${infer Tail}`
  ? `${Head}:${Name}${RoutePath<Tail>}`
  : P;

/** The operation's path as the app routes it: under /v1, `{petId}` as `:petId`. */
export function routePath<Op extends Operation>(op: Op): `/v1${RoutePath<Op["path"]>}` {
  return `/v1${op.path.replaceAll(/\{(\w+)\}/g, ":$1")}` as `/v1${RoutePath<Op["path"]>}`;
}

type Validated<Op, Field extends "query" | "params" | "body", Target extends string> = Op extends {
  [F in Field]: infer Schema extends z.ZodMiniType;
}
  ? { in: { [T in Target]: z.input<Schema> }; out: { [T in Target]: z.output<Schema> } }
  : { in: object; out: object };

/**
 * What the operation's validators hand its handler (`c.req.valid(...)`): the Hono input
 * type of its query, path and body schemas, as `zValidator` declares them.
 */
export type OperationInput<Op> = {
  in: Validated<Op, "query", "query">["in"] &
    Validated<Op, "params", "param">["in"] &
    Validated<Op, "body", "json">["in"];
  out: Validated<Op, "query", "query">["out"] &
    Validated<Op, "params", "param">["out"] &
    Validated<Op, "body", "json">["out"];
};
