// Deprecated operations (RFC 9745) and their sunset (RFC 8594), as the operation table
// declares them (`deprecation` in src/operations.ts).
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import { CACHE_CONTROL, LINK } from "./conditional-read.ts";
import type { Declaration } from "./stage.ts";
import type { AppEnv } from "./types.ts";

/** A deprecated operation (RFC 9745) and its sunset (RFC 8594). */
export interface Deprecation {
  /** Unix seconds: when the operation was deprecated (the `Deprecation` header). */
  since: number;
  /** Unix seconds: from this instant on the operation answers 410 `gone`. */
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

/** The headers every answer of a deprecated operation carries after the key check. */
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

/**
 * Wraps what follows it (the rate limit, the scope check, the operation), so every
 * answer past the key check (200, 400, 403, 404, 410, 429) carries the headers.
 */
export function announceDeprecation(deprecation: Deprecation) {
  const headers = deprecationHeaders(deprecation);
  return createMiddleware<AppEnv>(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  });
}

export function announceDeprecationDeclares(deprecation: Deprecation): Declaration {
  const headers = deprecationHeaders(deprecation);
  return {
    operation: { deprecated: true },
    wraps: [
      {
        header: {
          name: "Deprecation",
          description: "RFC 9745: when the operation was deprecated, as `@<unix seconds>`",
          schema: { type: "string" },
        },
        always: true,
        value: headers.Deprecation,
        note: `(${headers.Deprecation}: ${deprecatedSince(deprecation)}).`,
      },
      {
        header: {
          name: "Sunset",
          description: "RFC 8594: when the operation stops answering.",
          schema: { type: "string" },
        },
        always: true,
        value: headers.Sunset,
      },
      {
        header: LINK,
        always: true,
        note: '{operations}: `rel="successor-version"` and `rel="deprecation"`.',
      },
    ],
  };
}

const NO_STORE = "no-store";

/**
 * From the sunset instant on, the operation answers 410 `gone` naming its replacement,
 * not cacheable (a 410 is cacheable by default).
 */
export function enforceSunset(deprecation: Deprecation) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (c.var.clock() >= deprecation.sunset * 1000) {
      throw new ApiError("gone", deprecation.gone, { headers: { "Cache-Control": NO_STORE } });
    }
    await next();
  });
}

export const enforceSunsetDeclares = (): Declaration => ({
  errors: [
    {
      code: "gone",
      headers: [
        {
          header: CACHE_CONTROL,
          always: true,
          value: NO_STORE,
          note: "`no-store` on 410 answers.",
        },
      ],
    },
  ],
});
