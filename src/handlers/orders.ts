// listOrders: its contract is not published, so it answers 501 rather than invent one.
import { ApiError } from "../errors.ts";
import type { Stage } from "../http/stage.ts";

export const listOrders: Stage = {
  declares: { errors: [{ code: "not_implemented" }] },
  middleware: () => () => {
    throw new ApiError(
      "not_implemented",
      "GET /v1/store/orders is not available yet: its contract has not been published.",
    );
  },
};
