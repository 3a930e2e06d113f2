// GET /v1/store/orders: its contract is not published, so it responds with 501 rather than invent one.
import { ApiError } from "../errors.ts";
import { defineOperation } from "./operation.ts";

export const listOrders = defineOperation(
  {
    operationId: "listOrders",
    tag: "store",
    method: "get",
    path: "/store/orders",
    scope: "orders:read",
    summary: "List store orders (experimental, not implemented)",
    description:
      "The contract of this operation has not been published. It responds with 501 `not_implemented` for authenticated callers rather than invent a shape.",
    stability: "experimental",
    errors: ["not_implemented"],
    mcp: { tool: false, reason: "it responds with 501 until its contract is published" },
  },
  () => {
    throw new ApiError(
      "not_implemented",
      "GET /v1/store/orders is not available yet: its contract has not been published.",
    );
  },
);
