// What an operation is: one object per file of this folder, its route, schemas, responses and
// handler together; src/middleware.ts makes its middleware, src/openapi/document.ts its document.
import type { Context, Handler, Next, TypedResponse } from "hono";
import type { JSONParsed } from "hono/utils/types";
import type * as z from "zod/mini";
import type { ErrorCode } from "../errors.ts";
import type { Select, SelectedRepresentation } from "../http/conditional-read.ts";
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
  /** On every success response (else on some). */
  required?: boolean;
}

/** A request header an operation's handler reads (an OpenAPI header parameter). */
export interface HeaderParameter {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

/** A success with a JSON body of `schema`. */
interface JsonSuccess {
  status: 200 | 201;
  schema: z.ZodMiniType;
  description: string;
  /** Headers the handler sets on it. */
  headers?: Record<string, HeaderDoc>;
  /** The 304 the handler itself responds to a matching `If-None-Match`, described. */
  notModified?: string;
}

/** A success without a body (204). */
interface EmptySuccess {
  status: 204;
  description: string;
  headers?: Record<string, HeaderDoc>;
}

/** A success that is a static file of the worker's assets (its media type theirs). */
interface AssetSuccess extends Omit<JsonSuccess, "status"> {
  status: 200;
  asset: { mediaType: "application/json" | "text/html" };
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
  /** The media types the body may be sent as; `application/json` unless given. */
  bodyMediaTypes?: readonly [string, ...string[]];
  /**
   * What it does with pets: `read` (its D1 session starts at a replica, or no older than
   * `x-d1-bookmark`) or `change` (on the primary; its response's bookmark is newer than
   * every cached response the change invalidated, so its client reads the change at once).
   */
  pets?: "read" | "change";
  /** Its success; none for an operation that cannot succeed yet. */
  success?: JsonSuccess | EmptySuccess | AssetSuccess;
  /** Whether agents get it as an MCP tool (mcp/src/tools.ts), and if not, why. */
  mcp: { tool: true } | { tool: false; reason: string };
  /** Errors the handler itself responds; the middleware's errors follow from the fields. */
  errors?: ErrorCode[];
  /** Request headers the handler reads. */
  headers?: HeaderParameter[];
  /**
   * It changes a pet only if `If-Match` names the pet's current tag (RFC 9110 13.1.1): its
   * middleware parses the header into `c.get("ifMatch")`, a malformed one 400; the store's 412.
   */
  ifMatch?: true;
  /** Every response after the key check says so; from the sunset on it is 410. */
  deprecation?: Deprecation;
  /**
   * A conditional read (ETag, If-None-Match, 304) whose 200s `cacheable` takes are served
   * from the location's cache for a few seconds (src/http/conditional-read.ts). Its handler
   * returns the selected representation, not a response: the middleware makes the response.
   */
  conditional?: { cacheable(selected: SelectedRepresentation): boolean };
  /** A folder of static files served beside it with its access (the reference page's scripts). */
  files?: { path: string; handler: Handler<AppEnv> };
}

/** Responded without a key (`security: []`) or only to a key with `scope`. */
export type Access = { public: true; scope?: undefined } | { public?: undefined; scope: Scope };

/**
 * An operation: its route and its handler, last in its chain: the one that responds, or for a
 * conditional read the one that selects what the conditional-read middleware responds with.
 */
export type Operation = Route & Access & { handler: Handler<AppEnv> | Select };

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

/**
 * What the handler must return: its declared success, typed (a 204 without a body, JSON of
 * the success schema with its status, a conditional read's selected representation; another
 * status or body is a type error). It throws an ApiError for anything else; an operation
 * without a success only throws.
 */
export type SuccessResponse<R extends Route> = R["success"] extends { asset: object }
  ? Response
  : R extends { conditional: object; success: { schema: infer Schema } }
    ? SelectedRepresentation<z.output<Schema & z.ZodMiniType>>
    : R["success"] extends EmptySuccess
      ? Response & TypedResponse<null, 204, "body">
      : R["success"] extends { status: infer S extends 200 | 201; schema: infer Schema }
        ? Response & TypedResponse<JSONParsed<z.output<Schema & z.ZodMiniType>>, S, "json">
        : never;

/** An operation from its route and its handler, typed by the route's path, schemas and success. */
export function defineOperation<const R extends Route & Access>(
  route: R,
  handler: (
    c: Context<AppEnv, `/v1${RoutePath<R["path"]>}`, RouteInput<R>>,
    next: Next,
  ) => SuccessResponse<R> | Promise<SuccessResponse<R>>,
): R & { handler: Handler<AppEnv> | Select } {
  return { ...route, handler: handler as Handler<AppEnv> | Select };
}
