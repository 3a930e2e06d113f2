// Deprecated operations (RFC 9745) and their sunset (RFC 8594).
import { ApiError } from "../errors.ts";

/** A deprecated operation (RFC 9745) and its sunset (RFC 8594). */
export interface Deprecation {
  /** Unix seconds: when the operation was deprecated (the `Deprecation` header). */
  since: number;
  /** Unix seconds: from this instant on the operation responds with 410 `gone`. */
  sunset: number;
  /** Path of the operation that replaces it (`Link: <...>; rel="successor-version"`). */
  successor: string;
  /** Where the docs describe the deprecation (`Link: <...>; rel="deprecation"`). */
  docs: string;
  /** The 410's message: what to use instead. */
  gone: string;
}

/** When the operation was deprecated, as a person reads it (the header says `@<seconds>`). */
export function deprecatedSince(deprecation: Deprecation): string {
  return new Date(deprecation.since * 1000).toUTCString();
}

/** The headers every response of a deprecated operation carries after the key check. */
export function deprecationHeaders(deprecation: Deprecation) {
  return {
    Deprecation: `@${deprecation.since}`,
    Sunset: new Date(deprecation.sunset * 1000).toUTCString(),
    Link: [
      `<${deprecation.successor}>; rel="successor-version"`,
      `<${deprecation.docs}>; rel="deprecation"; type="text/html"`,
    ].join(", "),
  } as const;
}

/** A 410's `Cache-Control`: a 410 is cacheable by default. */
export const NO_STORE = "no-store";

/** From the sunset instant on, the operation responds with 410 `gone` naming its replacement. */
export function enforceSunset(deprecation: Deprecation, now: number): void {
  if (now >= deprecation.sunset * 1000) {
    throw new ApiError("gone", deprecation.gone, { headers: { "Cache-Control": NO_STORE } });
  }
}
