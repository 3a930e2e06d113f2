// Documented constants of the contract. Changing one changes the API.

/** Largest integer a JavaScript client can round-trip: 2^53 - 1. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

export const PAGE_SIZE = { min: 1, max: 100, default: 20 } as const;

/** Longer `cursor` values are refused: no cursor the service issues comes near it. */
export const CURSOR_MAX_LENGTH = 200;

/** Longer `If-None-Match` values are refused (400): room for dozens of entity tags. */
export const IF_NONE_MATCH_MAX_LENGTH = 1024;
/** Longer `If-Match` values are refused (400), likewise. */
export const IF_MATCH_MAX_LENGTH = 1024;
/** Longer `X-Client-Name` values are refused (400), as are ones not printable ASCII. */
export const CLIENT_NAME_MAX_LENGTH = 200;

export const NAME_MAX_CODE_POINTS = 100;

/** Request bodies above this many bytes are refused with 413. */
export const MAX_BODY_BYTES = 16_384;

/** getPet was deprecated when v1.0.0 was published: 2026-11-01T00:00:00Z. */
export const GET_PET_DEPRECATED_AT = Date.UTC(2026, 10, 1) / 1000;

/** getPet stops responding (410) from this instant on: Thu, 05 Dec 2030 00:00:00 GMT. */
export const GET_PET_SUNSET_AT = Date.UTC(2030, 11, 5) / 1000;

/** Idempotency records are kept (and replayed) this long. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/**
 * How long what D1 said about a valid API key may be used, counted from the D1 read, in
 * every cache tier together (isolate memory, then the location's Cache API): no tier
 * restarts the count. With the replica's lag, this is the revocation bound (docs/keys.md).
 */
export const AUTH_CACHE_TTL_MS = 30_000;
/** How long "no such key" (unknown, revoked or expired) may be used, counted the same way. */
export const AUTH_UNKNOWN_TTL_MS = 10_000;
/** Entries per isolate, for valid keys and for refused ones (each its own bounded map). */
export const AUTH_CACHE_MAX_ENTRIES = 1_000;

/**
 * A key's responses and last use wait in isolate memory at most this long, and are written
 * at most this often per key per isolate (docs/platform.md, "Usage"): what an isolate
 * loses when it ends is at most this much of a key's responses.
 */
export const USAGE_WRITE_INTERVAL_MS = 10_000;
/** Usage counts are kept this long; the hourly cron deletes older hours. */
export const USAGE_KEEP_DAYS = 400;

/** Seconds a rate-limited client is told to wait: the binding's window (both limiters). */
export const RATE_LIMIT_RETRY_AFTER_SECONDS = 60;

/**
 * Pets change, so a cached response is served only while the D1 read behind it is younger
 * than this (docs/design.md, "The cache and changing pets"): after a change, no location
 * serves a response it invalidated for longer, plus the replica's lag. The contract's bound
 * is 5 s; 1 s of it is left for the lag.
 */
export const CACHE_MAX_AGE_MS = 4_000;
/** A cache lookup slower than this is abandoned for D1. */
export const CACHE_MATCH_TIMEOUT_MS = 50;
