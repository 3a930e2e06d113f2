// The Idempotency-Key header of POST /v1/pets (IETF draft-ietf-httpapi-idempotency-key-header).
import { IDEMPOTENCY_TTL_SECONDS } from "../config.ts";
import { sha256 } from "../encoding.ts";
import { ApiError } from "../errors.ts";

/** One character of a structured-field string (RFC 9651): printable ASCII, `"` and `\` escaped. */
const SF_CHARACTER = String.raw`(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])`;
const SF_STRING = new RegExp(`^"(${SF_CHARACTER}*)"$`);

/** The longest key, counted as the client means it (inside the quotes, an escape once). */
const MAX_KEY_LENGTH = 255;

/**
 * Every Idempotency-Key the service accepts: a structured-field string whose value is 1
 * to 255 printable ASCII characters, or 1 to 255 printable ASCII characters that are not
 * one. The document publishes it as the header's pattern.
 */
const IDEMPOTENCY_KEY = new RegExp(
  String.raw`^(?:"${SF_CHARACTER}{1,${MAX_KEY_LENGTH}}"|(?!"${SF_CHARACTER}*"$)[\x20-\x7E]{1,${MAX_KEY_LENGTH}})$`,
);

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

/** The header as createPet's parameter in the OpenAPI document. */
export function idempotencyKeyParameter() {
  return {
    name: IDEMPOTENCY_KEY_HEADER,
    description: `Makes the create safe to retry: 1-${MAX_KEY_LENGTH} printable ASCII characters (a structured-field string \`"abc"\` means \`abc\`), scoped to the key's account (all its keys, rotated ones included; a key without an account: it and the keys rotated from it) and kept ${IDEMPOTENCY_TTL_SECONDS / 3600} hours. Same key + same JSON body replays the first response, concurrent retries included; another body is 422.`,
    // The length as the server counts it: that of the value, inside the quotes of a
    // structured-field string, where an escape counts once. So the longest header is a
    // quoted key of escapes only.
    schema: {
      type: "string",
      maxLength: 2 + 2 * MAX_KEY_LENGTH,
      pattern: IDEMPOTENCY_KEY.source,
    },
  };
}

/**
 * The key's value, or undefined when the header is absent. A structured-field
 * string (`"abc"`) means `abc`. Throws 400 `invalid_idempotency_key`.
 */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(header)) {
    throw new ApiError(
      "invalid_idempotency_key",
      `Header "${IDEMPOTENCY_KEY_HEADER}" must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters.`,
    );
  }
  const quoted = SF_STRING.exec(header)?.[1];
  return quoted === undefined ? header : quoted.replace(/\\(["\\])/g, "$1");
}

/** JSON with object keys sorted, so equal JSON values serialise equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the body's canonical JSON: "same body" means equal JSON values. */
export async function bodyFingerprint(body: unknown): Promise<Uint8Array> {
  return sha256(canonicalJson(body));
}
