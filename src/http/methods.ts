// The methods of a path: OPTIONS lists them in `Allow` without a key, and any other method
// is 405 with `Allow`. The app factory (src/app.ts) registers both for every path.
import type { Handler } from "hono";
import { ApiError } from "../errors.ts";
import type { Declaration, HeaderSpec } from "./stage.ts";
import type { AppEnv } from "./types.ts";

const ALLOW: HeaderSpec = {
  name: "Allow",
  description: "Methods the path allows.",
  schema: { type: "string" },
};

/** What the answers of every path add: no operation of the path answers them. */
export const methodsDeclares = (): Declaration => ({
  answers: [{ header: ALLOW, always: true }],
  errors: [{ code: "method_not_allowed", headers: [{ header: ALLOW, always: true }] }],
});

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
