// The Idempotency-Key header of POST /v1/pets (IETF draft-ietf-httpapi-idempotency-key-header).
import { sha256Hex } from "../encoding.ts";
import { ApiError } from "../errors.ts";

const PRINTABLE_ASCII = /^[\x20-\x7E]{1,255}$/;

/**
 * The key's value, or undefined when the header is absent. A structured-field
 * string (`"abc"`) means `abc`. Throws 400 `invalid_idempotency_key`.
 */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  let value = header;
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    const inner = value.slice(1, -1);
    // sf-string: printable ASCII; `"` and `\` only escaped.
    if (/^(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*$/.test(inner)) {
      value = inner.replace(/\\(["\\])/g, "$1");
    }
  }
  if (!PRINTABLE_ASCII.test(value)) {
    throw new ApiError(
      "invalid_idempotency_key",
      'Header "Idempotency-Key" must be 1 to 255 printable ASCII characters.',
    );
  }
  return value;
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

/** Hex SHA-256 of the body's canonical JSON: "same body" means equal JSON values. */
export async function bodyFingerprint(body: unknown): Promise<string> {
  return sha256Hex(canonicalJson(body));
}
