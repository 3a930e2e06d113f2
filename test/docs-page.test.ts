// GET /v1/docs and its files (docs/api.md, "Browsers and the docs page"): a page that loads
// nothing from another origin, its renderer served through the ASSETS binding (written by
// `npm run docs:assets`, which `npm test` runs first). In a browser: `npm run test:browser`.

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { call, createCheckedApp, expectError, makeRequest } from "./helpers.ts";

const PINNED = packageJson.devDependencies["@scalar/api-reference"];
const RENDERER = `/v1/docs/assets/scalar-api-reference-${PINNED}.js`;
const INIT = "/v1/docs/assets/docs-init.js";

describe("GET /v1/docs", () => {
  it("is a public HTML page whose scripts are this origin's files, the renderer versioned", async () => {
    const response = await call("/v1/docs");
    const html = await response.text();
    expect(response.status, html).toBe(200);
    expect(PINNED).toMatch(/^\d+\.\d+\.\d+$/); // an exact pin, not a range
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes]) => /\bsrc="([^"]+)"/.exec(attributes ?? "")?.[1])).toEqual(
      // The init script first: it switches the renderer's zod to jitless before it loads.
      [INIT, RENDERER],
    );
    // No inline script: every <script> is empty and loads a file.
    expect(scripts.map(([, , body]) => body)).toEqual(["", ""]);
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline event handlers either
    // Nothing loaded from another origin: the only other origin is a link, "Get a key".
    const loaded = html.matchAll(/\bsrc="([^"]*)"|<link\b[^>]*\bhref="([^"]*)"/g);
    for (const [, src, href] of loaded) {
      expect(src ?? href, src ?? href).toMatch(/^(\/v1\/|data:,$)/);
    }
    const links = [...html.matchAll(/<a\b[^>]*href="([^"]*)"[^>]*>([^<]*)<\/a>/g)];
    expect(links.map(([, href, text]) => [text, href])).toEqual([
      ["Get a key", `${env.PLATFORM_ORIGIN}/`],
      ["/v1/openapi.json", "/v1/openapi.json"], // the <noscript> fallback
    ]);
    expect(html.match(/https?:\/\//g)).toEqual(["http://"]);
  });

  it("leads to the developer platform of its own environment, from wrangler.toml's PLATFORM_ORIGIN", async () => {
    const app = createCheckedApp({ log: () => {} });
    const staging = "https://developers.staging.petstore.example.com";
    const response = await app.fetch(makeRequest("/v1/docs"), { ...env, PLATFORM_ORIGIN: staging });
    expect(await response.text()).toContain(`<a href="${staging}/">Get a key</a>`);
    expect(env.PLATFORM_ORIGIN).toBe("http://localhost:8788"); // npm run dev's default
  });

  it("allows this origin only (no eval, no inline script) and is revalidated on every use", async () => {
    const response = await call("/v1/docs");
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "content-type": expect.stringMatching(/^text\/html/),
      "content-security-policy":
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    });
  });
});

describe("the docs page's files, served from the ASSETS binding", () => {
  it("serves the pinned renderer without a key, cached for a year under its versioned name (HEAD too)", async () => {
    const response = await call(RENDERER);
    const body = await response.text();
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "content-type": expect.stringMatching(/^text\/javascript/),
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
      etag: expect.stringMatching(/^"[^"]+"$/),
    });
    // Scalar's standalone build: it defines window.Scalar.createApiReference.
    expect(body.length).toBeGreaterThan(1_000_000);
    expect(body).toContain("window.Scalar={createApiReference:");
    expect(body).not.toContain("sourceMappingURL=standalone.js.map");
    const head = await call(RENDERER, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(await head.text()).toBe("");
  });

  it("serves the init script revalidated on every use (304 when it matches), readable from another origin, the renderer's third-party features off", async () => {
    const response = await call(INIT, { headers: { Origin: "https://app.example" } });
    const body = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/javascript/);
    expect(response.headers.get("Cache-Control")).toBe("no-cache");
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
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
    // A matching If-None-Match: 304 without a body.
    const etag = response.headers.get("ETag") ?? "";
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await call(INIT, { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("ETag")).toBe(etag);
    expect(again.headers.get("Cache-Control")).toBe("no-cache");
  });

  it.each([
    "/v1/docs/assets/nope.js",
    "/v1/docs/assets/scalar-api-reference-0.0.0.js",
    "/v1/docs/assets/",
    "/v1/docs/assets/sub/docs-init.js",
  ])("responds to an unknown file %s with the 404 Error, without a key", async (path) => {
    await expectError(await call(path), 404, "not_found", /No such path/);
  });

  it.each([
    ["DELETE", "/v1/docs"],
    ["PUT", INIT],
  ])("responds to %s %s without a key with 405 and Allow, not 401", async (method, path) => {
    const response = await call(path, { method, body: "x" });
    await expectError(response, 405, "method_not_allowed", method);
    expect(response.headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
  });
});
