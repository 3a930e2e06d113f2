// GET /v1/docs and its files (decisions.md "Docs and browsers"): a page that loads
// nothing from another origin, under a strict Content-Security-Policy, whose renderer
// is served from this origin through the ASSETS binding (dist/assets, written by
// `npm run docs:assets`, which `npm test` runs first). The browser side (it renders,
// no request fails, no CSP violation) is `npm run test:browser`.
import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { call, expectError } from "./helpers.ts";

const PINNED = packageJson.devDependencies["@scalar/api-reference"];
const RENDERER = `/v1/docs/assets/scalar-api-reference-${PINNED}.js`;
const INIT = "/v1/docs/assets/docs-init.js";

/** The directives of a Content-Security-Policy header, by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name as string, values]),
  );
}

async function page(): Promise<{ response: Response; html: string }> {
  const response = await call("/v1/docs");
  const html = await response.text();
  expect(response.status, html).toBe(200);
  return { response, html };
}

describe("GET /v1/docs", () => {
  it("is a public HTML page whose scripts are this origin's files, the renderer versioned", async () => {
    const { response, html } = await page();
    expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(response.headers.get("X-Request-Id")).toBeTruthy();
    expect(PINNED).toMatch(/^\d+\.\d+\.\d+$/); // an exact pin, not a range
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes]) => /\bsrc="([^"]+)"/.exec(attributes ?? "")?.[1])).toEqual(
      // The init script first: it switches the renderer's zod to jitless before it loads.
      [INIT, RENDERER],
    );
    // No inline script: every <script> is empty and loads a file.
    expect(scripts.map(([, , body]) => body)).toEqual(["", ""]);
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline event handlers either
  });

  it("names no other origin anywhere in the HTML", async () => {
    const { html } = await page();
    expect(html).not.toMatch(/https?:|\/\/[a-z0-9]/i);
    for (const [, url] of html.matchAll(/\b(?:src|href)="([^"]*)"/g)) {
      expect(url, url).toMatch(/^(\/v1\/|data:,$)/);
    }
  });

  it("sends a Content-Security-Policy that allows this origin only, no eval, no inline script", async () => {
    const { response } = await page();
    const policy = response.headers.get("Content-Security-Policy") ?? "";
    const csp = directives(policy);
    expect(csp.get("default-src")).toEqual(["'none'"]);
    expect(csp.get("script-src")).toEqual(["'self'"]);
    expect(csp.get("connect-src")).toEqual(["'self'"]);
    expect(csp.get("font-src")).toEqual(["'self'"]);
    expect(csp.get("img-src")).toEqual(["'self'", "data:"]);
    expect(csp.get("style-src")).toEqual(["'self'", "'unsafe-inline'"]);
    expect(csp.get("frame-ancestors")).toEqual(["'none'"]);
    expect(csp.get("base-uri")).toEqual(["'none'"]);
    expect(csp.get("form-action")).toEqual(["'none'"]);
    expect(policy).not.toMatch(/unsafe-eval|wasm-unsafe-eval|https?:|\*/);
  });

  it("is revalidated on every use, never cached as immutable", async () => {
    const { response } = await page();
    expect(response.headers.get("Cache-Control")).toBe("no-cache");
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(response.headers.get("Referrer-Policy")).toBe("no-referrer");
  });

  it("answers DELETE with 405 and Allow, not 401", async () => {
    const response = await call("/v1/docs", { method: "DELETE" });
    await expectError(response, 405, "method_not_allowed");
    expect(response.headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
  });
});

describe("the docs page's files, served from the ASSETS binding", () => {
  it("serves the pinned renderer without a key, cached for a year under its versioned name", async () => {
    const response = await call(RENDERER);
    const body = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/javascript/);
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(response.headers.get("X-Request-Id")).toBeTruthy();
    expect(response.headers.get("ETag")).toMatch(/^"[^"]+"$/);
    // Scalar's standalone build: it defines window.Scalar.createApiReference.
    expect(body.length).toBeGreaterThan(1_000_000);
    expect(body).toContain("window.Scalar={createApiReference:");
    expect(body).not.toContain("sourceMappingURL=standalone.js.map");
  });

  it("serves the page's init script revalidated on every use, with the renderer's third-party features off", async () => {
    const response = await call(INIT);
    const body = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/javascript/);
    expect(response.headers.get("Cache-Control")).toBe("no-cache");
    for (const setting of [
      "withDefaultFonts: false",
      "telemetry: false",
      'showDeveloperTools: "never"',
      "hideClientButton: true",
      "agent: { disabled: true }",
      "mcp: { disabled: true }",
      "__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true }",
    ]) {
      expect(body).toContain(setting);
    }
    expect(body).not.toMatch(/proxyUrl|https?:\/\//);
  });

  it("answers a matching If-None-Match with 304 and no body", async () => {
    const first = await call(INIT);
    const etag = first.headers.get("ETag") ?? "";
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await call(INIT, { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("ETag")).toBe(etag);
    expect(again.headers.get("Cache-Control")).toBe("no-cache");
  });

  it("answers HEAD like GET without a body", async () => {
    const response = await call(RENDERER, { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(await response.text()).toBe("");
  });

  it("is readable from another origin (CORS)", async () => {
    const response = await call(INIT, { headers: { Origin: "https://app.example" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });

  it.each([
    "/v1/docs/assets/nope.js",
    "/v1/docs/assets/scalar-api-reference-0.0.0.js",
    "/v1/docs/assets/",
    "/v1/docs/assets/sub/docs-init.js",
  ])("answers an unknown file %s with the 404 Error, without a key", async (path) => {
    await expectError(await call(path), 404, "not_found", /No such path/);
  });

  it("answers another method with 405 and Allow", async () => {
    const response = await call(INIT, { method: "PUT", body: "x" });
    await expectError(response, 405, "method_not_allowed", /PUT/);
    expect(response.headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
  });
});
