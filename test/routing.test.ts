// Paths, methods, CORS, request ids and logs: the answers around the operations.

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import type { LogLine } from "../src/log.ts";
import { OPERATIONS, type Operation } from "../src/operations.ts";
import {
  CONTRACT_EXPOSED_HEADERS,
  call,
  createCheckedApp,
  createKey,
  expectError,
  makeRequest,
} from "./helpers.ts";

describe("outside /v1", () => {
  it("GET / is a small public JSON object pointing at the docs", async () => {
    const response = await call("/");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    const body = (await response.json()) as Record<string, string>;
    // The version is written once, in package.json (which release checks read).
    expect(body.version).toBe(packageJson.version);
    expect(body.documentation).toMatch(/\/v1\/docs$/);
    expect(body.openapi).toMatch(/\/v1\/openapi\.json$/);
  });

  it("anything else is a 404 Error in JSON, without a key", async () => {
    for (const path of ["/pets", "/v2/pets", "/favicon.ico", "/v1pets"]) {
      await expectError(await call(path), 404, "not_found", /No such path/);
    }
  });

  it("POST / is 405 with Allow", async () => {
    const response = await call("/", { method: "POST" });
    await expectError(response, 405, "method_not_allowed", /POST/);
    expect(response.headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
  });
});

describe("under /v1 with a key", () => {
  it("an unknown path is 404 not_found naming it", async () => {
    const { key } = await createKey();
    await expectError(await call("/v1/cats", { key }), 404, "not_found", /\/v1\/cats/);
  });

  it.each([
    ["PUT", "/v1/pets", "GET, HEAD, POST, OPTIONS"],
    ["DELETE", "/v1/pets/1", "GET, HEAD, OPTIONS"],
    ["POST", "/v1/pets/1", "GET, HEAD, OPTIONS"],
    ["PATCH", "/v1/store/orders", "GET, HEAD, OPTIONS"],
  ])("%s %s is 405 with Allow: %s", async (method, path, allow) => {
    const { key } = await createKey();
    const response = await call(path, { method, key });
    await expectError(response, 405, "method_not_allowed", new RegExp(`${method} is not allowed`));
    expect(response.headers.get("Allow")).toBe(allow);
  });

  it("GET /v1/store/orders is 501 not_implemented", async () => {
    const { key } = await createKey();
    await expectError(
      await call("/v1/store/orders", { key }),
      501,
      "not_implemented",
      /store\/orders/,
    );
  });

  it("answers successes and errors with one media type, application/json", async () => {
    const { key } = await createKey();
    const answers = [
      await call("/v1/pets?limit=1", { key }),
      await call("/v1/pets"),
      await call("/v1/cats", { key }),
      await call("/v1/pets?limit=abc", { key }),
      await call("/v1/store/orders", { key }),
      await call("/"),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 401, 404, 400, 501, 200]);
    for (const response of answers) {
      expect(response.headers.get("Content-Type")).toBe("application/json");
      expect(await response.json()).toBeTypeOf("object");
    }
  });

  it("HEAD is answered like GET, without a body", async () => {
    const { key } = await createKey();
    const response = await call("/v1/pets", { method: "HEAD", key });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
  });
});

describe("the operation table drives the routes", () => {
  /** A concrete path for an operation's path template. */
  const concrete = (op: Operation) => `/v1${op.path.replaceAll(/\{\w+\}/g, "1")}`;

  it("each path allows exactly its operations' methods (HEAD with GET), in OPTIONS and in 405", async () => {
    const { key } = await createKey();
    for (const op of OPERATIONS) {
      const methods = OPERATIONS.filter((other) => other.path === op.path).flatMap((other) =>
        other.method === "get" ? ["GET", "HEAD"] : [other.method.toUpperCase()],
      );
      const allow = [...methods, "OPTIONS"].join(", ");
      const options = await call(concrete(op), { method: "OPTIONS" });
      expect(options.status, op.operationId).toBe(204);
      expect(options.headers.get("Allow"), op.operationId).toBe(allow);
      const refused = await call(concrete(op), { method: "PATCH", key });
      await expectError(refused, 405, "method_not_allowed", /PATCH/);
      expect(refused.headers.get("Allow"), op.operationId).toBe(allow);
    }
  });

  it("an operation needs a key unless the table marks it public", async () => {
    for (const op of OPERATIONS) {
      const response = await call(concrete(op), {
        method: op.method.toUpperCase(),
        ...(op.body ? { json: {} } : {}),
      });
      if (op.public) expect(response.status, op.operationId).toBe(200);
      else await expectError(response, 401, "unauthorized");
    }
  });
});

describe("OPTIONS and CORS", () => {
  /** decisions.md: every request header of the contract, sendable from another origin. */
  const ALLOWED_REQUEST = [
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "If-None-Match",
    "x-d1-bookmark",
  ];
  const ORIGIN = "https://app.example";
  const list = (value: string | null) => (value ?? "").split(",").map((s) => s.trim());

  function preflight(path: string, method: string, requestHeaders?: string) {
    return call(path, {
      method: "OPTIONS",
      headers: {
        Origin: ORIGIN,
        "Access-Control-Request-Method": method,
        ...(requestHeaders ? { "Access-Control-Request-Headers": requestHeaders } : {}),
      },
    });
  }

  it("answers a preflight without a key: 204, Allow, every request header of the contract", async () => {
    const response = await preflight(
      "/v1/pets",
      "POST",
      "authorization, content-type, idempotency-key, if-none-match, x-d1-bookmark",
    );
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(response.headers.get("Allow")).toBe("GET, HEAD, POST, OPTIONS");
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Access-Control-Allow-Methods")).toBe("GET, HEAD, POST, OPTIONS");
    expect(list(response.headers.get("Access-Control-Allow-Headers"))).toEqual(ALLOWED_REQUEST);
    expect(response.headers.get("Access-Control-Max-Age")).toBe("86400");
    expect(response.headers.get("X-Request-Id")).toBeTruthy();
  });

  it("grants a preflight for a method the path lacks, so the page reads the 405 Error and Allow", async () => {
    const granted = await preflight("/v1/pets/1", "DELETE", "authorization");
    expect(granted.status).toBe(204);
    expect(granted.headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
    expect(list(granted.headers.get("Access-Control-Allow-Methods"))).toEqual([
      "GET",
      "HEAD",
      "OPTIONS",
      "DELETE",
    ]);
    expect(granted.headers.get("Access-Control-Allow-Origin")).toBe("*");

    // The request the browser then sends: a 405 whose Allow the page can read.
    const { key } = await createKey();
    const refused = await call("/v1/pets/1", {
      method: "DELETE",
      key,
      headers: { Origin: ORIGIN },
    });
    await expectError(refused, 405, "method_not_allowed", /DELETE/);
    expect(refused.headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
    expect(refused.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(list(refused.headers.get("Access-Control-Expose-Headers"))).toContain("Allow");
  });

  it("grants no method that is not an HTTP token", async () => {
    const response = await preflight("/v1/pets", "DE LETE");
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Methods")).toBe("GET, HEAD, POST, OPTIONS");
  });

  it("answers a plain OPTIONS with 204 and Allow, and no preflight grant", async () => {
    const response = await call("/v1/pets/12", { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect(response.headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
    expect(response.headers.get("Access-Control-Allow-Methods")).toBeNull();
    expect(response.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("exposes every header of the contract, on errors too (401 with WWW-Authenticate)", async () => {
    const response = await call("/v1/pets", { headers: { Origin: ORIGIN } });
    await expectError(response, 401, "unauthorized");
    expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="petstore"');
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(list(response.headers.get("Access-Control-Expose-Headers"))).toEqual(
      CONTRACT_EXPOSED_HEADERS,
    );
  });

  it("exposes them on successes too, and sends no CORS headers without an Origin", async () => {
    const { key } = await createKey();
    const withOrigin = await call("/v1/pets?limit=1", { key, headers: { Origin: ORIGIN } });
    expect(withOrigin.status).toBe(200);
    expect(Array.isArray(await withOrigin.json())).toBe(true);
    expect(withOrigin.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(list(withOrigin.headers.get("Access-Control-Expose-Headers"))).toEqual(
      CONTRACT_EXPOSED_HEADERS,
    );
    const without = await call("/v1/pets?limit=1", { key });
    expect(without.status).toBe(200);
    expect(await without.json()).toEqual(expect.any(Array));
    expect(without.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(without.headers.get("Access-Control-Expose-Headers")).toBeNull();
  });

  it("honours CORS_ALLOWED_ORIGINS: listed origins are echoed with Vary, others get no grant", async () => {
    const app = createCheckedApp({ log: () => {} });
    const scoped = { ...env, CORS_ALLOWED_ORIGINS: "https://a.example, https://b.example" };
    const ok = await app.fetch(
      makeRequest("/", { headers: { Origin: "https://b.example" } }),
      scoped,
    );
    expect(ok.headers.get("Access-Control-Allow-Origin")).toBe("https://b.example");
    expect(ok.headers.get("Vary")).toContain("Origin");
    const other = await app.fetch(
      makeRequest("/", { headers: { Origin: "https://evil.example" } }),
      scoped,
    );
    expect(other.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(other.headers.get("Vary")).toContain("Origin");
  });
});

describe("request ids and logs", () => {
  it("uses cf-ray as X-Request-Id when present, a random id otherwise", async () => {
    const ray = await call("/", { headers: { "cf-ray": "8f1c2d3e4a5b6c7d-AMS" } });
    expect(ray.headers.get("X-Request-Id")).toBe("8f1c2d3e4a5b6c7d-AMS");
    const a = (await call("/")).headers.get("X-Request-Id");
    const b = (await call("/")).headers.get("X-Request-Id");
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(a).not.toBe(b);
  });

  it("does not trust a cf-ray that is not an id", async () => {
    const response = await call("/", { headers: { "cf-ray": "<script>alert(1)</script>" } });
    expect(response.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("writes one structured line per request with method, path, status, duration and request id", async () => {
    const lines: LogLine[] = [];
    const app = createCheckedApp({ log: (line) => lines.push(line) });
    const { key } = await createKey();
    const response = await app.fetch(makeRequest("/v1/pets?limit=2", { key }), env);
    expect(response.status).toBe(200);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      level: "info",
      msg: "request",
      method: "GET",
      path: "/v1/pets",
      status: 200,
      request_id: response.headers.get("X-Request-Id"),
    });
    expect(typeof line?.duration_ms).toBe("number");
    expect(JSON.stringify(lines)).not.toContain(key);
  });

  it("logs answers the service means to give (a 4xx, the 501 of listOrders) at info, never as errors", async () => {
    const lines: LogLine[] = [];
    const app = createCheckedApp({ log: (line) => lines.push(line) });
    const { key } = await createKey();
    const orders = await app.fetch(makeRequest("/v1/store/orders", { key }), env);
    await expectError(orders, 501, "not_implemented");
    const invalid = await app.fetch(makeRequest("/v1/pets?limit=0", { key }), env);
    await expectError(invalid, 400, "invalid_parameter");
    expect(lines.map((l) => [l.level, l.msg, l.status])).toEqual([
      ["info", "request", 501],
      ["info", "request", 400],
    ]);
  });

  it("answers an unexpected failure with 500 internal_error, no internals, logged with the request id", async () => {
    const lines: LogLine[] = [];
    const app = createCheckedApp({
      log: (line) => lines.push(line),
      verifier: {
        verify() {
          throw new TypeError("boom at secretFunction (src/auth/verifier.ts:42:7)");
        },
      },
    });
    const response = await app.fetch(makeRequest("/v1/pets", { key: "psk_whatever" }), env);
    const body = await expectError(response, 500, "internal_error", /X-Request-Id/);
    expect(JSON.stringify(body)).not.toContain("boom");
    const requestId = response.headers.get("X-Request-Id");
    const error = lines.find((l) => l.msg === "unhandled error");
    expect(error?.request_id).toBe(requestId);
    expect(error?.error).toContain("boom");
    expect(lines.find((l) => l.msg === "request")).toMatchObject({ level: "error", status: 500 });
  });
});
