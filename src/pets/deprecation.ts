// getPet is deprecated (RFC 9745) and sunsets (RFC 8594) on Thu, 05 Dec 2030.
import { createMiddleware } from "hono/factory";
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "../http/types.ts";

export const DEPRECATION_HEADERS = {
  Deprecation: `@${GET_PET_DEPRECATED_AT}`,
  Sunset: new Date(GET_PET_SUNSET_AT * 1000).toUTCString(),
  Link: [
    '</v1/pets>; rel="successor-version"',
    '</v1/docs#tag/animals/GET/pets/%7BpetId%7D>; rel="deprecation"; type="text/html"',
  ].join(", "),
} as const;

/**
 * Runs right after authentication, around the rate limit, the scope check and the
 * operation, so every getPet answer past the key check (200, 400, 403, 404, 410,
 * 429) carries the headers.
 */
export const getPetDeprecationHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(DEPRECATION_HEADERS)) c.res.headers.set(name, value);
});

/**
 * From the sunset instant on, the operation answers 410 `gone` (after 401, 429 and
 * 403, like every other answer), not cacheable.
 */
export const getPetSunset = createMiddleware<AppEnv>(async (c, next) => {
  if (c.var.clock() >= GET_PET_SUNSET_AT * 1000) {
    throw new ApiError(
      "gone",
      "GET /v1/pets/{petId} was removed on Thu, 05 Dec 2030; use GET /v1/pets with the status filter.",
      { headers: { "Cache-Control": "no-store" } },
    );
  }
  await next();
});
