// The platform's errors: the API's Error object ({code, message, status, details?}), with
// the platform's own table of codes (the API's table is the API's contract).
import type { ErrorDetail } from "../../src/errors.ts";
import { ApiError, ServiceError, toApiError } from "../../src/errors.ts";

/** Machine-readable codes of the platform's JSON responses and the status each one carries. */
const PLATFORM_ERROR_STATUS = {
  invalid_json: 400,
  validation_failed: 400,
  invalid_challenge: 400,
  passkey_rejected: 400,
  unauthorized: 401,
  sign_in_failed: 401,
  unknown_passkey: 401,
  cross_origin_request: 403,
  json_required: 403,
  account_disabled: 403,
  not_found: 404,
  method_not_allowed: 405,
  passkey_exists: 409,
  last_passkey: 409,
  passkey_required: 409,
  passkey_limit_reached: 409,
  key_limit_reached: 409,
  key_not_active: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

/** A code of the platform's Error object (its `code`), which fixes its status. */
export type PlatformErrorCode = keyof typeof PLATFORM_ERROR_STATUS;

/**
 * The platform's failure a client may see: the app's error handler sends it as the Error object.
 */
export class PlatformError extends ServiceError<PlatformErrorCode> {
  constructor(
    code: PlatformErrorCode,
    message: string,
    options: { details?: ErrorDetail[] | undefined; headers?: Record<string, string> } = {},
  ) {
    super(code, PLATFORM_ERROR_STATUS[code], message, options);
    this.name = "PlatformError";
  }
}

function isPlatformCode(code: string): code is PlatformErrorCode {
  return Object.hasOwn(PLATFORM_ERROR_STATUS, code);
}

/**
 * Anything thrown, as the error a client may see. The API's low layers that the platform
 * reuses (JSON body reading, validation, the database) throw the API's ApiError; those
 * whose code the platform also has keep it (same status by construction), the rest is 500.
 */
export function toPlatformError(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  const api = err instanceof ApiError ? err : toApiError(err);
  if (!isPlatformCode(api.code) || PLATFORM_ERROR_STATUS[api.code] !== api.status) {
    return new PlatformError(
      "internal_error",
      "An unexpected error occurred; quote the X-Request-Id.",
    );
  }
  return new PlatformError(api.code, api.message, { details: api.details, headers: api.headers });
}

/** A fault of the service (logged as an error), not a response it meant to give. */
export function isPlatformFault(err: unknown): boolean {
  return err !== undefined && toPlatformError(err).status >= 500;
}
