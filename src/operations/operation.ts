// What an operation is: one object per file of this folder, its route, schemas, answers and
// handler together; src/stages.ts makes its middleware, src/openapi/document.ts its document.
import type { Handler } from "hono";
import type * as z from "zod/mini";
import type { ErrorCode } from "../errors.ts";
import type { Deprecation } from "../http/deprecation.ts";
import type { AppEnv } from "../http/types.ts";
import type { Scope } from "../scopes.ts";

/** The tags of the document, in its order: each operation has one. */
export const TAGS = {
  animals: "The animals of the store.",
  store: "Store operations (experimental).",
  documentation: "This document and its reference page (public).",
};

/** A response header an operation's handler sets, as the document describes it. */
export interface HeaderDoc {
  description: string;
  schema: Record<string, unknown>;
  /** On every success answer (else on some). */
  required?: boolean;
}

/** A request header an operation's handler reads (an OpenAPI header parameter). */
export interface HeaderParameter {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

export interface Route {
  operationId: string;
  method: "get" | "post" | "put" | "patch" | "delete";
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
  /** Its D1 session: a read starts at a replica (or no older than `x-d1-bookmark`), a write on the primary. */
  session?: "read" | "write";
  /** Its success; none for an operation that cannot succeed yet (it is no MCP tool either). */
  success?: {
    status: 200 | 201;
    schema: z.ZodMiniType;
    description: string;
    /** Default `application/json`. */
    mediaType?: "application/json" | "text/html";
    /** Headers the handler sets on it. */
    headers?: Record<string, HeaderDoc>;
    /** The 304 the handler itself answers to a matching `If-None-Match`, described. */
    notModified?: string;
  };
  /** Errors the handler itself answers; the stages' errors follow from the fields. */
  errors?: ErrorCode[];
  /** Request headers the handler reads. */
  headers?: HeaderParameter[];
  /** Every answer after the key check says so; from the sunset on it is 410. */
  deprecation?: Deprecation;
  /**
   * A conditional read (ETag, If-None-Match, 304). The 200s `keep` says never change are
   * kept in the location's cache and served from there (src/http/conditional-read.ts).
   */
  conditional?: { keep(answer: Response): boolean };
  /** A folder of static files served beside it with its access (the reference page's scripts). */
  files?: { path: string; handler: Handler<AppEnv> };
}

/** Answered without a key (`security: []`) or only to a key with `scope`. */
export type Access = { public: true; scope?: undefined } | { public?: undefined; scope: Scope };

/** An operation: its route and the handler that answers it (the last stage). */
export type Operation = Route & Access & { handler: Handler<AppEnv> };

/** An OpenAPI path template as Hono routes it: `/pets/{petId}` is `/pets/:petId`. */
export type RoutePath<P extends string> = P extends `${infer Head}{${infer Name}}${infer Tail}`
  ? `${Head}:${Name}${RoutePath<Tail>}`
  : P;

/** The operation's path as the app routes it: under /v1, `{petId}` as `:petId`. */
export function routePath(op: Pick<Route, "path">): string {
  return `/v1${op.path.replaceAll(/\{(\w+)\}/g, ":$1")}`;
}

type Validated<R, Field extends "query" | "params" | "body", Target extends string> = R extends {
  [F in Field]: infer Schema extends z.ZodMiniType;
}
  ? { in: { [T in Target]: z.input<Schema> }; out: { [T in Target]: z.output<Schema> } }
  : { in: object; out: object };

/** What the validators hand the handler (`c.req.valid(...)`), typed from the route's schemas. */
export type RouteInput<R> = {
  in: Validated<R, "query", "query">["in"] &
    Validated<R, "params", "param">["in"] &
    Validated<R, "body", "json">["in"];
  out: Validated<R, "query", "query">["out"] &
    Validated<R, "params", "param">["out"] &
    Validated<R, "body", "json">["out"];
};

/** An operation from its route and its handler, typed by the route's path and schemas. */
export function defineOperation<const R extends Route & Access>(
  route: R,
  handler: Handler<AppEnv, `/v1${RoutePath<R["path"]>}`, RouteInput<R>>,
): R & { handler: Handler<AppEnv> } {
  return { ...route, handler: handler as Handler<AppEnv> };
}
