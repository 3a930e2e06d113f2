import { insufficientScope, retryAfterSeconds } from "./headers.ts";
import type { components } from "./schema.ts";

/** The API's Error object: every error response carries one. */
export type ErrorBody = components["schemas"]["Error"];
export type ErrorCode = ErrorBody["code"];
export type ErrorDetail = NonNullable<ErrorBody["details"]>[number];

/**
 * What went wrong: `response`, an error response (the API's Error object, or a page that is
 * not one); `network`, no response (refused, reset, lost); `timeout`, the call's or an
 * attempt's time limit ran out; `abort`, the caller's `signal` ended the call.
 */
export type FailureKind = "response" | "network" | "timeout" | "abort";

/** The Error object's codes, and one for each failure that is not an API response. */
export type FailureCode =
  | ErrorCode
  | "unexpected_response"
  | "network_error"
  | "timeout"
  | "aborted";

const CODES = { network: "network_error", timeout: "timeout", abort: "aborted" } as const;

/** Responses a retry can cure: rate limited, a gateway's failure, briefly unavailable. */
export const TRANSIENT = [429, 502, 503, 504];

/** What the client knows of a failure when it throws it. */
export interface Failure {
  kind: FailureKind;
  /** The attempts made, the failing one included. */
  attempts: number;
  /** The `Idempotency-Key` the create was sent with; undefined for reads. */
  idempotencyKey?: string | undefined;
  /** The response (kind `response`) and its parsed body. */
  response?: Response;
  body?: unknown;
  /** Why, when it is not a response: the fetch's error, the abort's reason. */
  cause?: unknown;
  message?: string;
}

/**
 * Every failure of a call, one family: `kind` says which, and each carries the attempts
 * made and the `Idempotency-Key` a create used (send it again to retry by hand safely).
 * A response adds its status, the Error object's fields and its headers.
 */
export class PetStoreError extends Error {
  override readonly name = "PetStoreError";
  readonly kind: FailureKind;
  /** The Error object's `code`; `unexpected_response` when the body is not one. */
  readonly code: FailureCode;
  /** The HTTP status of the response; undefined when there was none. */
  readonly status: number | undefined;
  /** Field problems of a 400, each with the field as a dotted path; empty if none. */
  readonly details: readonly ErrorDetail[];
  /** `X-Request-Id` of the response: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** The response's headers; empty when there was no response. */
  readonly headers: Headers;
  /** 403 `insufficient_scope`: the scope the key lacks (`WWW-Authenticate`). */
  readonly requiredScope: string | undefined;
  /** 429, 502, 503, 504: seconds to wait before trying again (`Retry-After`). */
  readonly retryAfter: number | undefined;
  /** The attempts made: 1 when nothing was retried. */
  readonly attempts: number;
  /** The `Idempotency-Key` of a create: the same key, sent again, creates nothing twice. */
  readonly idempotencyKey: string | undefined;

  constructor(failure: Failure) {
    const { kind, response } = failure;
    const error = isErrorBody(failure.body) ? failure.body : undefined;
    super(
      failure.message ??
        error?.message ??
        `HTTP ${response?.status}: the response is not what the API sends`,
      failure.cause === undefined ? undefined : { cause: failure.cause },
    );
    this.kind = kind;
    this.code = kind === "response" ? (error?.code ?? "unexpected_response") : CODES[kind];
    this.status = response?.status;
    this.details = error?.details ?? [];
    this.headers = response?.headers ?? new Headers();
    const header = (name: string) => this.headers.get(name);
    this.requestId = header("X-Request-Id") ?? undefined;
    this.requiredScope =
      this.status === 403 ? insufficientScope(header("WWW-Authenticate")) : undefined;
    this.retryAfter = TRANSIENT.includes(this.status ?? 0)
      ? retryAfterSeconds(header("Retry-After"))
      : undefined;
    this.attempts = failure.attempts;
    this.idempotencyKey = failure.idempotencyKey;
  }
}

function isErrorBody(body: unknown): body is ErrorBody {
  const fields = body as Partial<ErrorBody> | null;
  return typeof fields?.code === "string" && typeof fields.message === "string";
}
