// The methods of each path, for the API and the platform: OPTIONS lists them, another is 405.
import type { Handler } from "hono";
import type { ServiceError } from "../errors.ts";

/** A worker's own error class (ApiError, PlatformError), for its 405. */
export type MethodError = new (
  code: "method_not_allowed",
  message: string,
  options: { headers: Record<string, string> },
) => ServiceError;

/** Each path of `routes` and its methods in the order registered; GET brings HEAD. */
export function methodsByPath(routes: readonly { path: string; method: string }[]) {
  const byPath = new Map<string, string[]>();
  for (const { path, method } of routes) {
    if (method === "ALL") continue;
    const methods = byPath.get(path) ?? [];
    for (const m of method === "GET" ? ["GET", "HEAD"] : [method]) {
      if (!methods.includes(m)) methods.push(m);
    }
    byPath.set(path, methods);
  }
  return byPath;
}

/** OPTIONS: 204 with the path's methods. */
export const listMethods =
  (allow: string): Handler =>
  (c) =>
    c.body(null, 204, { Allow: allow });

/** Any method the path does not have: 405 `method_not_allowed` naming the allowed ones. */
export const refuseMethod =
  (allow: string, error: MethodError): Handler =>
  (c) => {
    throw new error(
      "method_not_allowed",
      `Method ${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow}.`,
      { headers: { Allow: allow } },
    );
  };
