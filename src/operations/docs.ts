// GET /v1/openapi.json and GET /v1/docs (public): the document, and a reference page whose
// renderer and script are static assets (docs/api.md "Browsers and the docs page").
import type { Context } from "hono";
import * as z from "zod/mini";
import { IF_NONE_MATCH_MAX_LENGTH } from "../config.ts";
import { ApiError } from "../errors.ts";
import { ifNoneMatchOf } from "../http/conditional-read.ts";
import { ETAG } from "../http/etag.ts";
import type { AppEnv } from "../http/types.ts";
import { defineOperation } from "./operation.ts";

/** The pinned renderer; scripts/docs-assets.ts refuses any other installed version. */
export const SCALAR_VERSION = "1.72.1";

/** Every file of the page lives under /v1/docs (nothing responds outside /v1 but GET /). */
export const DOCS_ASSETS_PATH = "/v1/docs/assets";

/**
 * The files scripts/docs-assets.ts writes under dist/assets, by URL path. A versioned
 * name never changes content, so browsers and shared caches may keep it for a year;
 * the others are revalidated on every use.
 */
export const DOCS_ASSETS = {
  renderer: {
    path: `${DOCS_ASSETS_PATH}/scalar-api-reference-${SCALAR_VERSION}.js`,
    versioned: true,
  },
  init: { path: `${DOCS_ASSETS_PATH}/docs-init.js`, versioned: false },
} as const;

const IMMUTABLE = "public, max-age=31536000, immutable";
/** May be stored, but must be revalidated before every use (ETag from the asset store). */
const REVALIDATE = "no-cache";

/**
 * The page's policy: this origin only. Styles may be inline because the renderer
 * injects its stylesheet at run time; scripts may not. `connect-src 'self'` keeps
 * "try it" and everything else on this origin.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The page, with a "Get a key" link to the developer platform at `platformOrigin` (the
 * PLATFORM_ORIGIN var of the environment): a link, not a load, so the CSP stays as it is.
 */
const docsPageHtml = (platformOrigin: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pet Store API v1 reference</title>
<link rel="icon" href="data:,">
<style>
:root{color-scheme:light dark}
.get-key{display:flex;flex-wrap:wrap;gap:.25rem .75rem;align-items:center;justify-content:flex-end;padding:.5rem 1rem;font:14px/1.4 system-ui,sans-serif;color:var(--scalar-color-1,CanvasText);background:var(--scalar-background-1,Canvas);border-bottom:1px solid var(--scalar-border-color,#8884)}
.get-key a{font-weight:600;padding:.25rem .75rem;border-radius:6px;background:#0b5cad;color:#fff;text-decoration:none}
.get-key a:focus-visible{outline:2px solid var(--scalar-color-1,CanvasText);outline-offset:2px}
</style>
</head>
<body>
<nav class="get-key" aria-label="API keys"><span>Every call needs an API key.</span><a href="${new URL(platformOrigin).origin}/">Get a key</a></nav>
<div id="app"></div>
<noscript>The reference needs JavaScript; the raw document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<script src="${DOCS_ASSETS.init.path}"></script>
<script src="${DOCS_ASSETS.renderer.path}"></script>
</body>
</html>
`;

function docsPage(c: Context<AppEnv>): Response {
  return c.html(docsPageHtml(c.env.PLATFORM_ORIGIN), 200, {
    "Content-Security-Policy": DOCS_CSP,
    "Cache-Control": REVALIDATE,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
  });
}

const VERSIONED = new Set<string>(
  Object.values(DOCS_ASSETS)
    .filter((asset) => asset.versioned)
    .map((asset) => asset.path),
);

/**
 * GET/HEAD /v1/docs/assets/* and /v1/openapi.json: the file from the ASSETS binding
 * (which responds to If-None-Match with 304), with this service's cache policy; an unknown
 * file is the usual 404 Error.
 */
async function docsAsset(c: Context<AppEnv>): Promise<Response> {
  ifNoneMatchOf(c);
  const stored = await c.env.ASSETS.fetch(c.req.raw);
  if (stored.status === 404) {
    await stored.body?.cancel();
    throw new ApiError("not_found", `No such path: ${c.req.path}.`);
  }
  // A fetched response's headers are immutable; X-Request-Id and CORS come later.
  const response = new Response(stored.body, stored);
  response.headers.set("Cache-Control", VERSIONED.has(c.req.path) ? IMMUTABLE : REVALIDATE);
  response.headers.set("X-Content-Type-Options", "nosniff");
  return response;
}

/** What GET /openapi.json responses: this document (its shape is OpenAPI's, not ours). */
const OpenApiDocumentSchema = z.looseObject({
  openapi: z.string().check(z.maxLength(16), z.regex(/^3\.1\.\d+$/)),
  info: z.looseObject({
    title: z.string().check(z.maxLength(100)),
    version: z.string().check(z.maxLength(64)),
  }),
  // An object of path items (no z.record: 0.6 KiB of the bundle for the document alone).
  paths: z.looseObject({}),
});

export const getOpenApiDocument = defineOperation(
  {
    operationId: "getOpenApiDocument",
    tag: "documentation",
    method: "get",
    path: "/openapi.json",
    summary: "This OpenAPI document",
    description:
      "The OpenAPI 3.1 description of the API, generated from the schemas that validate requests. Public: no API key needed.",
    public: true,
    headers: [
      {
        name: "If-None-Match",
        description:
          "The `ETag` of the document the client holds: while it is current, the response is 304 with no body.",
        schema: { type: "string", maxLength: IF_NONE_MATCH_MAX_LENGTH },
      },
    ],
    errors: ["invalid_parameter"],
    success: {
      status: 200,
      schema: OpenApiDocumentSchema,
      description: "The OpenAPI 3.1 document.",
      headers: {
        ETag: ETAG,
        "Cache-Control": {
          description: "`no-cache`: keep the document and revalidate it.",
          schema: { type: "string", const: REVALIDATE },
          required: true,
        },
      },
      notModified:
        "Not modified: the `If-None-Match` of the request matches the document's `ETag`.",
      asset: { mediaType: "application/json" },
    },
    mcp: { tool: true },
  },
  docsAsset,
);

export const getDocs = defineOperation(
  {
    operationId: "getDocs",
    tag: "documentation",
    method: "get",
    path: "/docs",
    summary: "Interactive API reference",
    description:
      "An HTML page that renders this document as an interactive reference. Public: no API key needed.",
    public: true,
    success: {
      status: 200,
      schema: z.string().check(z.maxLength(16_384)),
      description: "The reference page.",
      asset: { mediaType: "text/html" },
    },
    mcp: { tool: false, reason: "a page for people to read in a browser" },
    files: { path: DOCS_ASSETS_PATH.replace(/^\/v1/, ""), handler: docsAsset },
  },
  docsPage,
);
