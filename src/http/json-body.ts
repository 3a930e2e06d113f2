// Reads a JSON request body in this order: size (413) -> media type and content coding
// (415) -> JSON syntax (400) -> validation (400, elsewhere).
import { createMiddleware } from "hono/factory";
import { MAX_BODY_BYTES } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./types.ts";

/** Deeper JSON than this is refused: no valid NewPet nests at all. */
const MAX_JSON_DEPTH = 32;

const tooLarge = () =>
  new ApiError("payload_too_large", `Request body must be at most ${MAX_BODY_BYTES} bytes.`);

/**
 * Reads at most `limit` bytes of a stream; larger bodies are refused without
 * buffering them, whether or not Content-Length was sent (chunked uploads too).
 * Past the limit, up to `limit` more bytes are read and dropped before the rest is
 * cancelled: a client still sending a slightly large body then reads the 413 instead
 * of a reset connection, and an endless body still costs no more than that.
 */
export async function readBodyCapped(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await drain(reader, limit);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Whether a body arrives as sent: no `Content-Encoding`, or only `identity`. The service
 * decodes no content coding, so a gzip (or any other) body is refused, never read as
 * JSON, whether or not it really is compressed.
 */
export function isIdentityEncoding(contentEncoding: string | undefined): boolean {
  if (contentEncoding === undefined) return true;
  return contentEncoding
    .split(",")
    .every((coding) => ["", "identity"].includes(coding.trim().toLowerCase()));
}

/** Reads and drops up to `most` more bytes; cancels the stream if it has more. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, most: number) {
  let dropped = 0;
  while (dropped <= most) {
    const { done, value } = await reader.read();
    if (done) return;
    dropped += value.byteLength;
  }
  await reader.cancel().catch(() => {});
}

/**
 * Whether a Content-Type is one of `accepted` (case-insensitive, parameters allowed): JSON
 * is UTF-8 (RFC 8259), so a `charset` parameter other than `utf-8` is not.
 */
export function isJsonMediaType(
  contentType: string | null | undefined,
  accepted: readonly string[] = [JSON_MEDIA_TYPE],
): boolean {
  if (!contentType) return false;
  const [type, ...parameters] = contentType.split(";").map((p) => p.trim().toLowerCase());
  const charset = parameters.find((p) => p.startsWith("charset="))?.slice("charset=".length);
  return (
    accepted.includes(type ?? "") &&
    (charset === undefined || ["utf-8", '"utf-8"'].includes(charset))
  );
}

export const JSON_MEDIA_TYPE = "application/json";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * One pass over valid JSON text for what JSON.parse hides: a repeated key (it keeps the
 * last one) and excessive nesting. The problem, or undefined.
 */
export function inspectJson(text: string): string | undefined {
  const frames: Array<Set<string> | null> = []; // a Set per object, null per array
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== 0x22)
        j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      if (expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        const frame = frames.at(-1);
        if (frame?.has(key)) return `repeats the key "${key.slice(0, 64)}"`;
        frame?.add(key);
        expectKey = false;
      }
      i = j;
    } else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      frames.push(ch === 0x7b ? new Set() : null);
      if (frames.length > MAX_JSON_DEPTH) {
        return `nests deeper than ${MAX_JSON_DEPTH} levels`;
      }
      expectKey = ch === 0x7b;
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) {
      frames.pop();
      expectKey = false;
    } else if (ch === 0x2c /* , */) {
      expectKey = frames.at(-1) instanceof Set;
    }
  }
  return undefined;
}

/** Parses a request body as strict JSON; throws the matching ApiError. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ApiError("invalid_json", "Request body is not valid UTF-8.");
  }
  if (text.trim() === "")
    throw new ApiError("invalid_json", "Request body is empty; send a JSON object.");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", "Request body is not valid JSON.");
  }
  const problem = inspectJson(text);
  if (problem) throw new ApiError("invalid_json", `Request body ${problem}.`);
  return value;
}

/**
 * Middleware for operations that take a JSON body sent as one of `mediaTypes`. The parsed
 * value is handed to Hono's body cache, so `zValidator("json", ...)` validates it without
 * reading the stream a second time.
 */
export function jsonBody(mediaTypes: readonly string[] = [JSON_MEDIA_TYPE]) {
  const named = mediaTypes.map((t) => `"Content-Type: ${t}"`).join(" or ");
  return createMiddleware<AppEnv>(async (c, next) => {
    const declared = c.req.header("Content-Length");
    if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
    const bytes = await readBodyCapped(c.req.raw.body, MAX_BODY_BYTES);
    if (!isJsonMediaType(c.req.header("Content-Type"), mediaTypes)) {
      throw new ApiError(
        "unsupported_media_type",
        `Request body must be sent with ${named} (UTF-8, the only charset of JSON).`,
      );
    }
    const encoding = c.req.header("Content-Encoding");
    if (!isIdentityEncoding(encoding)) {
      throw new ApiError(
        "unsupported_media_type",
        `Request body must not be encoded: send it without "Content-Encoding" (or with "identity"), not "${encoding?.slice(0, 32)}".`,
      );
    }
    const value = parseJsonBody(bytes);
    c.req.bodyCache.json = Promise.resolve(value);
    c.set("jsonBody", value);
    await next();
  });
}
