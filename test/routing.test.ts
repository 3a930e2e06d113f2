// Paths, methods, CORS, request ids and logs: the responses around the operations. Every
// documented path with every method (405 with Allow, OPTIONS, HEAD) is walked in walk.test.ts.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import type { LogLine } from "../src/log.ts";
import {
  allowOf,
  CONTRACT_EXPOSED_HEADERS,
  call,
  createCheckedApp,
  createKey,
  expectError,
  makeRequest,
  methodNotOn,
} from "./helpers.ts";

describe("paths and methods", () => {
  it("GET / is a small public JSON object pointing at the docs", async () => {
    const response = await call("/");
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, string>;
    // The version is written once, in package.json (which release checks read).
    expect(body.version).toBe(packageJson.version);
    expect(body.documentation).toMatch(/\/v1\/docs$/);
    expect(body.openapi).toMatch(/\/v1\/openapi\.json$/);
  });

  it("any other path is a 404 Error naming it: outside /v1 without a key", async () => {
    const { key } = await createKey();
    const paths = ["/pets", "/v2/pets", "/favicon.ico", "/v1pets", "/v1/cats", "/pets/"];
    // Paths are exact: a trailing slash is another path, after the key check under /v1.
    const slashed = ["/v1/pets/", "/v1/pets/1/", "/v1/store/orders/", "/v1/docs/"];
    for (const path of [...paths, ...slashed]) {
      const response = await call(path, { key: path.startsWith("/v1/") ? key : null });
      await expectError(response, 404, "not_found", `No such path: ${path}.`);
    }
    for (const path of slashed) await expectError(await call(path), 401, "unauthorized");
  });

  it.each([
    ["POST", "/", "GET, HEAD, OPTIONS"],
    ["PUT", "/v1/pets", allowOf("/pets")],
  ])("%s %s is 405 naming the method, with Allow: %s", async (method, path, allow) => {
    const { key } = await createKey();
    const response = await call(path, { method, key });
    await expectError(response, 405, "method_not_allowed", `Method ${method} is not allowed`);
    expect(response.headers.get("Allow")).toBe(allow);
  });

  it("a 404 for a path of 5,000 characters names it, cut to the Error's 1,024 characters", async () => {
    const { key } = await createKey();
    const path = `/v1/${"a".repeat(5_000)}`;
    const response = await call(path, { key });
    const body = await expectError(response, 404, "not_found", /^No such path: \/v1\/a+…$/);
    expect(body.message).toHaveLength(1024);
  });

  it("sends successes and errors with one media type, application/json", async () => {
    const { key } = await createKey();
    const responses = [
      await call("/v1/pets?limit=1", { key }),
      await call("/v1/pets"),
      await call("/v1/cats", { key }),
      await call("/v1/pets?limit=abc", { key }),
      await call("/v1/store/orders", { key }),
      await call("/"),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 401, 404, 400, 501, 200]);
    for (const response of responses) {
      expect(response.headers.get("Content-Type")).toBe("application/json");
      expect(await response.json()).toBeTypeOf("object");
    }
  });
});

describe("OPTIONS and CORS", () => {
  /** Every request header of the contract, sendable from another origin. */
  const ALLOWED_REQUEST =
    "Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, X-Client-Name, x-d1-bookmark";
  const ORIGIN = "https://app.example";

  function preflight(path: string, method: string, requestHeaders = "authorization") {
    return call(path, {
      method: "OPTIONS",
      headers: {
        Origin: ORIGIN,
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": requestHeaders,
      },
    });
  }

  it("responds to a preflight without a key: 204, Allow, every request header of the contract", async () => {
    const response = await preflight("/v1/pets", "POST", ALLOWED_REQUEST.toLowerCase());
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(Object.fromEntries(response.headers)).toMatchObject({
      allow: allowOf("/pets"),
      "access-control-allow-origin": "*",
      "access-control-allow-methods": allowOf("/pets"),
      "access-control-allow-headers": ALLOWED_REQUEST,
      "access-control-max-age": "86400",
    });
    // No method that is not an HTTP token is granted.
    const odd = await preflight("/v1/pets", "DE LETE");
    expect(odd.status).toBe(204);
    expect(odd.headers.get("Access-Control-Allow-Methods")).toBe(allowOf("/pets"));
  });

  it("grants a preflight for a method the path lacks, so the page reads the 405 Error and Allow", async () => {
    const lacking = methodNotOn("/pets/{petId}");
    const granted = await preflight("/v1/pets/1", lacking);
    expect(granted.status).toBe(204);
    expect(granted.headers.get("Allow")).toBe(allowOf("/pets/{petId}"));
    expect(granted.headers.get("Access-Control-Allow-Methods")).toBe(
      `${allowOf("/pets/{petId}")}, ${lacking}`,
    );
    expect(granted.headers.get("Access-Control-Allow-Origin")).toBe("*");

    // The request the browser then sends: a 405 whose Allow the page can read.
    const { key } = await createKey();
    const refused = await call("/v1/pets/1", {
      method: lacking,
      key,
      headers: { Origin: ORIGIN },
    });
    await expectError(refused, 405, "method_not_allowed", new RegExp(lacking));
    expect(refused.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(refused.headers.get("Access-Control-Expose-Headers")).toContain("Allow");
  });

  it("exposes every header of the contract on errors (401) and successes; no CORS header without an Origin", async () => {
    const { key } = await createKey();
    const refused = await call("/v1/pets", { headers: { Origin: ORIGIN } });
    await expectError(refused, 401, "unauthorized");
    expect(refused.headers.get("WWW-Authenticate")).toBe('Bearer realm="petstore"');
    const served = await call("/v1/pets?limit=1", { key, headers: { Origin: ORIGIN } });
    expect(await served.json()).toEqual(expect.any(Array));
    for (const response of [refused, served]) {
      expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
      expect(response.headers.get("Access-Control-Expose-Headers")).toBe(
        CONTRACT_EXPOSED_HEADERS.join(", "),
      );
    }
    const without = await call("/v1/pets?limit=1", { key });
    expect(await without.json()).toEqual(expect.any(Array));
    expect(without.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(without.headers.get("Access-Control-Expose-Headers")).toBeNull();
    // A plain OPTIONS (no Origin): 204 with Allow, and no preflight grant.
    const plain = await call("/v1/pets/12", { method: "OPTIONS" });
    expect([plain.status, plain.headers.get("Allow")]).toEqual([204, allowOf("/pets/{petId}")]);
    expect(plain.headers.get("Access-Control-Allow-Methods")).toBeNull();
    expect(plain.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("honours CORS_ALLOWED_ORIGINS: listed origins are echoed with Vary, others get no grant", async () => {
    const app = createCheckedApp({ log: () => {} });
    const scoped = { ...env, CORS_ALLOWED_ORIGINS: "https://a.example, https://b.example" };
    const from = (origin: string) =>
      app.fetch(makeRequest("/", { headers: { Origin: origin } }), scoped);
    const listed = await from("https://b.example");
    expect(listed.headers.get("Access-Control-Allow-Origin")).toBe("https://b.example");
    expect(listed.headers.get("Vary")).toContain("Origin");
    const other = await from("https://evil.example");
    expect(other.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(other.headers.get("Vary")).toContain("Origin");
  });
});

describe("request ids and logs", () => {
  it("uses cf-ray as X-Request-Id when it is an id, a random id otherwise", async () => {
    const ray = await call("/", { headers: { "cf-ray": "8f1c2d3e4a5b6c7d-AMS" } });
    expect(ray.headers.get("X-Request-Id")).toBe("8f1c2d3e4a5b6c7d-AMS");
    const script = await call("/", { headers: { "cf-ray": "<script>alert(1)</script>" } });
    const a = script.headers.get("X-Request-Id");
    const b = (await call("/")).headers.get("X-Request-Id");
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(b).toMatch(/^[0-9a-f-]{36}$/);
    expect(a).not.toBe(b);
  });

  it("writes one line per request, at info for every response the service means to give (a 4xx, the 501)", async () => {
    const lines: LogLine[] = [];
    const app = createCheckedApp({ log: (line) => lines.push(line) });
    const { key } = await createKey();
    const listed = await app.fetch(makeRequest("/v1/pets?limit=2", { key }), env);
    expect(listed.status).toBe(200);
    const orders = await app.fetch(makeRequest("/v1/store/orders", { key }), env);
    await expectError(orders, 501, "not_implemented", /store\/orders/);
    const invalid = await app.fetch(makeRequest("/v1/pets?limit=0", { key }), env);
    await expectError(invalid, 400, "invalid_parameter");
    expect(lines.map((l) => [l.level, l.msg, l.status])).toEqual([
      ["info", "request", 200],
      ["info", "request", 501],
      ["info", "request", 400],
    ]);
    expect(lines[0]).toMatchObject({
      method: "GET",
      path: "/v1/pets",
      request_id: listed.headers.get("X-Request-Id"),
      duration_ms: expect.any(Number),
    });
    expect(JSON.stringify(lines)).not.toContain(key);
  });
});
