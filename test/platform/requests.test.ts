// What every response of the platform shares with the API's (src/http/): the request id, one log
// line per request, the 405 naming the path's methods, a fault logged with its cause.
import { expect, it } from "vitest";
import type { LogLine } from "../../src/log.ts";
import { expectError, platformWith } from "./helpers.ts";

it("responds to a wrong method with 405 with Allow, an unknown path 404, and logs one line for each", async () => {
  const lines: LogLine[] = [];
  const send = platformWith({ log: (line) => lines.push(line) });
  const refused = await send("/api/keys/k_1/usage", {
    method: "DELETE",
    headers: { "X-Client-Name": "shop-web/2.1" },
  });
  expect(refused.headers.get("Allow")).toBe("GET, HEAD");
  const body = await expectError(refused, 405, "method_not_allowed");
  expect(body).toEqual({
    code: "method_not_allowed",
    message: "Method DELETE is not allowed on /api/keys/k_1/usage; allowed: GET, HEAD.",
    status: 405,
  });
  const unknown = await send("/api/nothing-here");
  expect(await expectError(unknown, 404, "not_found")).toEqual({
    code: "not_found",
    message: "No such path: /api/nothing-here.",
    status: 404,
  });
  expect(lines).toEqual([
    {
      level: "info",
      msg: "request",
      request_id: refused.headers.get("X-Request-Id"),
      method: "DELETE",
      path: "/api/keys/k_1/usage",
      status: 405,
      client: "shop-web/2.1",
      duration_ms: expect.any(Number),
    },
    {
      level: "info",
      msg: "request",
      request_id: unknown.headers.get("X-Request-Id"),
      method: "GET",
      path: "/api/nothing-here",
      status: 404,
      client: undefined,
      duration_ms: expect.any(Number),
    },
  ]);
});

it("responds to a fault with 500 without its text and logs it, with its cause, at error level", async () => {
  const lines: LogLine[] = [];
  const broken = {
    prepare() {
      throw new Error("disk on fire", { cause: new TypeError("no disk") });
    },
  } as unknown as D1Database;
  const send = platformWith({ log: (line) => lines.push(line) }, { DB: broken });
  const response = await send("/api/account", { session: "a-session-token" });
  const body = await expectError(response, 500, "internal_error");
  expect(JSON.stringify(body)).not.toContain("disk");
  const requestId = response.headers.get("X-Request-Id");
  expect(lines).toEqual([
    {
      level: "error",
      msg: "unhandled error",
      request_id: requestId,
      error: "Error: disk on fire",
      cause: "TypeError: no disk",
    },
    expect.objectContaining({ level: "error", msg: "request", request_id: requestId, status: 500 }),
  ]);
});
