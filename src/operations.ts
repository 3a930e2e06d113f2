// The operations of /v1: one object each, read by the router (validation) and by
// scripts/openapi.ts (the document). Adding a field here documents it there.
import * as z from "zod/mini";
import type { Scope } from "./auth/scopes.ts";
import { GET_PET_SUNSET_AT, PAGE_SIZE } from "./config.ts";
import type { ErrorCode } from "./errors.ts";
import type { ConditionalRead } from "./http/conditional-read.ts";
import {
  ListPetsQuerySchema,
  NewPetSchema,
  PetIdParamSchema,
  PetSchema,
  PetsSchema,
} from "./pets/schemas.ts";

/** Response headers the service sends; described once in the OpenAPI components. */
export type HeaderName =
  | "X-Request-Id"
  | "Link"
  | "Location"
  | "Deprecation"
  | "Sunset"
  | "Retry-After"
  | "Idempotent-Replayed"
  | "WWW-Authenticate"
  | "Allow"
  | "Cache-Control"
  | "ETag"
  | "x-d1-bookmark"
  | "Access-Control-Allow-Origin"
  | "Access-Control-Expose-Headers";

interface OperationBase {
  operationId: string;
  method: "get" | "post";
  /** Relative to the server URL (which ends in /v1). */
  path: string;
  summary: string;
  description: string;
  deprecated?: boolean;
  /** x-stability in the document. */
  stability?: "experimental";
  query?: z.ZodMiniType;
  params?: z.ZodMiniType;
  body?: z.ZodMiniType;
  /** Request headers beyond Authorization. */
  requestHeaders?: Array<"Idempotency-Key" | "x-d1-bookmark">;
  success?: {
    status: 200 | 201;
    schema: z.ZodMiniType;
    description: string;
    headers: HeaderName[];
    /** Default `application/json`. */
    mediaType?: "application/json" | "text/html";
  };
  /** Error codes this operation can answer with (every operation also has the common ones). */
  errors: ErrorCode[];
  /** Headers every response of the operation carries (e.g. deprecation headers). */
  alwaysHeaders?: HeaderName[];
  /**
   * A read with ETag / If-None-Match / 304, whose immutable answers the edge cache may
   * keep (src/http/conditional-read.ts). The document gains the headers and the 304.
   */
  conditional?: ConditionalRead;
}

/**
 * An operation is public (answered without an API key, `security: []`, outside the
 * rate limit) or names the one scope a key needs to call it: the scope middleware
 * enforces it and the document lists it in the operation's `security`.
 */
export type Operation = OperationBase &
  ({ public: true; scope?: undefined } | { public?: undefined; scope: Scope });

export const listPets: Operation = {
  operationId: "listPets",
  method: "get",
  path: "/pets",
  scope: "pets:read",
  summary: "List animals",
  description:
    'Returns animals in ascending id (creation) order as a bare array. Pages use keyset pagination: when more animals follow, the `Link` header carries `rel="next"` with an opaque `cursor`; the last page has none.',
  query: ListPetsQuerySchema,
  requestHeaders: ["x-d1-bookmark"],
  conditional: {
    immutable: "when-next-page",
    params: Object.keys(ListPetsQuerySchema.shape),
    defaults: { limit: String(PAGE_SIZE.default) },
  },
  success: {
    status: 200,
    schema: PetsSchema,
    description: "A page of animals.",
    headers: ["Link", "x-d1-bookmark"],
  },
  errors: ["invalid_parameter", "invalid_cursor"],
};

export const createPet: Operation = {
  operationId: "createPet",
  method: "post",
  path: "/pets",
  scope: "pets:write",
  summary: "Add an animal",
  description:
    "Creates an animal. Send `Idempotency-Key` to make retries safe: the same key with the same body within 24 hours replays the first response with `Idempotent-Replayed: true`.",
  body: NewPetSchema,
  requestHeaders: ["Idempotency-Key"],
  success: {
    status: 201,
    schema: PetSchema,
    description: "The created animal.",
    headers: ["Location", "Idempotent-Replayed", "x-d1-bookmark"],
  },
  errors: [
    "invalid_json",
    "validation_failed",
    "invalid_idempotency_key",
    "idempotency_key_in_use",
    "payload_too_large",
    "unsupported_media_type",
    "idempotency_key_reused",
  ],
};

export const getPet: Operation = {
  operationId: "getPet",
  method: "get",
  path: "/pets/{petId}",
  scope: "pets:read",
  summary: "Fetch an animal by id (deprecated)",
  description:
    'Deprecated: use `GET /pets` with the `status` filter. Every response carries `Deprecation`, `Sunset` and `Link` (rel="successor-version" and rel="deprecation"). From the sunset instant (Thu, 05 Dec 2030 00:00:00 GMT) on, the operation answers 410 `gone`.',
  deprecated: true,
  params: PetIdParamSchema,
  requestHeaders: ["x-d1-bookmark"],
  conditional: { immutable: "always", until: GET_PET_SUNSET_AT },
  success: {
    status: 200,
    schema: PetSchema,
    description: "The animal.",
    headers: ["x-d1-bookmark"],
  },
  errors: ["invalid_parameter", "not_found", "gone"],
  alwaysHeaders: ["Deprecation", "Sunset", "Link"],
};

export const listOrders: Operation = {
  operationId: "listOrders",
  method: "get",
  path: "/store/orders",
  scope: "orders:read",
  summary: "List store orders (experimental, not implemented)",
  description:
    "The contract of this operation has not been published. It answers 501 `not_implemented` for authenticated callers rather than invent a shape.",
  stability: "experimental",
  errors: ["not_implemented"],
};

/** What GET /openapi.json answers: this document (its shape is OpenAPI's, not ours). */
const OpenApiDocumentSchema = z.looseObject({
  openapi: z.string().check(z.regex(/^3\.1\.\d+$/)),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

export const getOpenApiDocument: Operation = {
  operationId: "getOpenApiDocument",
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
    headers: [],
  },
  errors: [],
};

export const getDocs: Operation = {
  operationId: "getDocs",
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
    headers: [],
    mediaType: "text/html",
  },
  errors: [],
};

export const OPERATIONS = [
  listPets,
  createPet,
  getPet,
  listOrders,
  getOpenApiDocument,
  getDocs,
] as const;

/** Errors any authenticated operation can answer with. */
export const COMMON_ERRORS: ErrorCode[] = [
  "unauthorized",
  "insufficient_scope",
  "method_not_allowed",
  "rate_limited",
  "internal_error",
  "service_unavailable",
];

/** Errors a public operation can answer with (no key, no rate limit, no database). */
export const PUBLIC_COMMON_ERRORS: ErrorCode[] = ["method_not_allowed", "internal_error"];
