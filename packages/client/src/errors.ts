import { insufficientScope, retryAfterSeconds } from "./headers.ts";
import type { components } from "./schema.ts";

/** The API's Error object: every error answer carries one. */
export type ErrorBody = components["schemas"]["Error"];
export type ErrorCode = ErrorBody["code"];
export type ErrorDetail = NonNullable<ErrorBody["details"]>[number];

/**
 * An error answer of the API, thrown by every call: its Error object and what its headers
 * say. `code` is `unexpected_response` when the body is not an Error object (a proxy's
 * page, say): act on `status` then.
 */
export class PetStoreError extends Error {
  override readonly name = "PetStoreError";
  readonly code: ErrorCode | "unexpected_response";
  /** The HTTP status (the Error object's `status` equals it). */
  readonly status: number;
  /** Field problems of a 400, each with the field as a dotted path; empty if none. */
  readonly details: readonly ErrorDetail[];
  /** `X-Request-Id`: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** 403 `insufficient_scope`: the scope the key lacks (`WWW-Authenticate`). */
  readonly requiredScope: string | undefined;
  /** 429 and 503: seconds to wait before trying again (`Retry-After`). */
  readonly retryAfter: number | undefined;

  constructor(response: Response, body: unknown) {
    const error = isErrorBody(body) ? body : undefined;
    super(error?.message ?? `HTTP ${response.status}: the answer is not the API's Error object`);
    const header = (name: string) => response.headers.get(name);
    this.code = error?.code ?? "unexpected_response";
    this.status = response.status;
    this.details = error?.details ?? [];
    this.requestId = header("X-Request-Id") ?? undefined;
    this.requiredScope =
      response.status === 403 ? insufficientScope(header("WWW-Authenticate")) : undefined;
    this.retryAfter = [429, 503].includes(response.status)
      ? retryAfterSeconds(header("Retry-After"))
      : undefined;
  }
}

function isErrorBody(body: unknown): body is ErrorBody {
  const fields = body as Partial<ErrorBody> | null;
  return typeof fields?.code === "string" && typeof fields.message === "string";
}
