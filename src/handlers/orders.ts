// listOrders: its contract is not published, so it answers 501 rather than invent one.
import type { Handler } from "hono";
import { ApiError } from "../errors.ts";
import type { Declaration } from "../http/stage.ts";
import type { AppEnv } from "../http/types.ts";

export const listOrders: Handler<AppEnv> = () => {
  throw new ApiError(
    "not_implemented",
    "GET /v1/store/orders is not available yet: its contract has not been published.",
  );
};

export const listOrdersDeclares = (): Declaration => ({ errors: [{ code: "not_implemented" }] });
