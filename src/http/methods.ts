// The methods of a path: OPTIONS lists them in `Allow` without a key; any other is 405.
import type { Handler } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./types.ts";

/** OPTIONS: 204 with the path's methods. */
export const listMethods =
  (allow: string): Handler<AppEnv> =>
  (c) =>
    c.body(null, 204, { Allow: allow });

/** Any method the path does not have: 405 `method_not_allowed` naming the allowed ones. */
export const refuseMethod =
  (allow: string): Handler<AppEnv> =>
  (c) => {
    throw new ApiError(
      "method_not_allowed",
      `Method ${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow}.`,
      { headers: { Allow: allow } },
    );
  };
