// The one place that defines and builds error bodies.
// Every non-2xx response of the service is an `ApiError` rendered by `errorResponse`.
import { HTTPException } from "hono/http-exception";
import * as z from "zod/mini";

/** Machine-readable error codes and the HTTP status each one always carries. */
export const ERROR_STATUS = {
  invalid_json: 400,
  validation_failed: 400,
  invalid_parameter: 400,
  invalid_cursor: 400,
  invalid_idempotency_key: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  misdirected_request: 421,
  invalid_transition: 409,
  gone: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

/** What each code means, for the OpenAPI document. */
export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  invalid_json: "The request body is not valid JSON (or repeats a key, or nests too deeply).",
  validation_failed: "The request body is JSON but a field is missing or invalid.",
  invalid_parameter:
    "A query, path or header parameter (such as `X-Client-Name` or `x-d1-bookmark`) is missing, repeated or invalid.",
  invalid_cursor:
    "The `cursor` was not issued by the service, was altered, or belongs to another filter.",
  invalid_idempotency_key:
    "The `Idempotency-Key` header is empty, longer than 255 characters or not printable ASCII.",
  unauthorized: "The API key is missing, invalid, revoked or expired.",
  insufficient_scope:
    "The API key is valid but lacks the scope this operation needs; `WWW-Authenticate` names it.",
  not_found: "The path or the requested animal does not exist.",
  method_not_allowed: "The path exists but not with this method; see the `Allow` header.",
  misdirected_request:
    "The request names a host that is not one of this API's addresses (`/mcp` and its metadata response only under those).",
  invalid_transition:
    "The animal's status cannot change that way (`sold` is final); the message names both statuses.",
  gone: "The operation has passed its sunset date; use its successor.",
  precondition_failed:
    "`If-Match` names no current tag of the animal: it changed since the tag was read, and nothing was changed.",
  payload_too_large: "The request body is larger than 16,384 bytes.",
  unsupported_media_type:
    "A request body was sent without a media type the operation takes (`application/json`; for updatePet also `application/merge-patch+json`), with a charset other than UTF-8, or with a `Content-Encoding` other than `identity`.",
  idempotency_key_reused: "This `Idempotency-Key` was used with a different request body.",
  rate_limited:
    "The API key or its account exceeded its request rate, or the client address sent too many invalid API keys; retry after `Retry-After` seconds.",
  internal_error: "An unexpected error; the request id identifies it in the logs.",
  not_implemented: "The operation exists but its contract is not published yet.",
  service_unavailable:
    "The database is briefly unavailable (network, overload, a reset); retry after `Retry-After` seconds.",
};

/** The longest message and field an Error carries, and the most details (longer ones are cut). */
const ERROR_LIMITS = { message: 1024, field: 256, detail: 256, details: 20 } as const;

/**
 * The Error object's schema, for the document (a function: the worker never parses an Error,
 * so none of it is bundled).
 */
export function errorSchema() {
  const detail = z.object({
    field: z
      .string()
      .check(
        z.maxLength(ERROR_LIMITS.field),
        z.describe("The field or parameter, as a dotted path."),
      ),
    message: z.string().check(z.maxLength(ERROR_LIMITS.detail)),
  });
  return z
    .object({
      code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
      message: z
        .string()
        .check(
          z.maxLength(ERROR_LIMITS.message),
          z.describe("For humans; names the offending field or parameter."),
        ),
      status: z
        .int()
        .check(
          z.gte(400),
          z.lte(599),
          z.meta({ description: "Equals the HTTP status of the response.", format: "int32" }),
        ),
      details: z.optional(z.array(detail).check(z.maxLength(ERROR_LIMITS.details))),
    })
    .check(z.meta({ id: "Error", description: "Every error response of the service." }));
}

export type ErrorBody = z.infer<ReturnType<typeof errorSchema>>;
export type ErrorDetail = NonNullable<ErrorBody["details"]>[number];

/**
 * An error response: the Error object's fields and the headers it carries. One shape for
 * every worker of this repository; each has its own table of codes (ApiError is the API's).
 */
export class ServiceError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    code: Code,
    status: number,
    message: string,
    options: {
      details?: ErrorDetail[] | undefined;
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.status = status;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /** The Error object, within the limits the document states (a longer text is cut). */
  body(): { code: Code; message: string; status: number; details?: ErrorDetail[] } {
    const { code, status } = this;
    const message = cut(this.message, ERROR_LIMITS.message);
    const details = this.details?.slice(0, ERROR_LIMITS.details).map((d) => ({
      field: cut(d.field, ERROR_LIMITS.field),
      message: cut(d.message, ERROR_LIMITS.detail),
    }));
    return details && details.length > 0
      ? { code, message, status, details }
      : { code, message, status };
  }
}

/** `text` within `most` UTF-16 units, ending in an ellipsis when cut (never half a pair). */
function cut(text: string, most: number): string {
  if (text.length <= most) return text;
  const kept = text.slice(0, most - 1);
  return `${/[\uD800-\uDBFF]$/.test(kept) ? kept.slice(0, -1) : kept}…`;
}

export class ApiError extends ServiceError<ErrorCode> {
  declare readonly status: ErrorStatus;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(code, ERROR_STATUS[code], message, options);
    this.name = "ApiError";
  }
}

/** Raised by the database layer when a retry can cure it: 503, never the driver's text. */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super("database unavailable", { cause });
    this.name = "DatabaseUnavailableError";
  }
}

/** Turns anything thrown into the ApiError that is safe to show a client. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException && err.status === 400) {
    // Hono's own validator only throws this for a body it could not parse.
    return new ApiError("invalid_json", "Request body is not valid JSON.");
  }
  if (err instanceof DatabaseUnavailableError) {
    return new ApiError("service_unavailable", "The database is unavailable; retry later.", {
      headers: { "Retry-After": "5" },
    });
  }
  return new ApiError(
    "internal_error",
    "An unexpected error occurred; quote the X-Request-Id when reporting it.",
  );
}

/**
 * Whether something thrown while responding is a fault (of the service or its database),
 * logged as an error, rather than a response the service meant to give: every ApiError
 * (a 4xx, the 501 of an operation whose contract is not published) is one of those.
 */
export function isFault(err: unknown): boolean {
  return err !== undefined && toApiError(err).status >= 500 && !(err instanceof ApiError);
}

export function errorResponse(err: ServiceError, extraHeaders?: Headers): Response {
  const headers = new Headers(extraHeaders);
  // The media type of every JSON response, successes included (JSON is UTF-8 by definition).
  headers.set("Content-Type", "application/json");
  for (const [name, value] of Object.entries(err.headers)) headers.set(name, value);
  return new Response(JSON.stringify(err.body()), { status: err.status, headers });
}
