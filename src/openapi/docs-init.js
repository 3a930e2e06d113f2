// The reference page's own code (GET /v1/docs), served as a same-origin file so the
// page's Content-Security-Policy needs no inline script. Copied to
// /v1/docs/assets/docs-init.js by scripts/docs-assets.ts. It loads the document
// while the renderer (window.Scalar, @scalar/api-reference's standalone build) loads,
// and mounts the reference once both are there.
//
// "Try it" talks to the origin that served this page first (so the local page calls
// the local API); the document's own servers follow. Everything that would reach a
// third party is off: Scalar's web fonts, telemetry, developer tools, the AI agent,
// MCP, the "open in client" button. The CSP (connect-src 'self') enforces the rest.
//
// This file runs BEFORE the renderer's script: the renderer bundles zod 4, which probes
// `Function("")` to decide whether to compile its parsers, and under the page's CSP
// (no 'unsafe-eval') that probe is a CSP violation. zod's documented switch for such
// pages is `jitless`, read from globalThis.__zod_globalConfig (what `z.config()` sets).
globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true };

/** Resolves once every script of the page has run (window.Scalar is defined then). */
const scriptsRan =
  document.readyState === "loading"
    ? new Promise((resolve) =>
        document.addEventListener("DOMContentLoaded", resolve, { once: true }),
      )
    : Promise.resolve();

(async () => {
  const documentUrl = new URL("openapi.json", window.location.href);
  let openapi;
  try {
    const response = await fetch(documentUrl, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    openapi = await response.json();
  } catch (error) {
    await scriptsRan;
    const app = document.getElementById("app");
    app.textContent = `The OpenAPI document (${documentUrl.pathname}) could not be loaded: ${error.message}`;
    throw error;
  }
  await scriptsRan;
  const app = document.getElementById("app");
  const here = {
    url: new URL("/v1", window.location.origin).href,
    description: "This server (the origin of this page)",
  };
  const servers = [here, ...(openapi.servers ?? []).filter((server) => server.url !== here.url)];
  window.Scalar.createApiReference(app, {
    content: openapi,
    servers,
    withDefaultFonts: false,
    telemetry: false,
    showDeveloperTools: "never",
    hideClientButton: true,
    agent: { disabled: true },
    mcp: { disabled: true },
    persistAuth: false,
    documentDownloadType: "json",
    operationTitleSource: "summary",
    defaultOpenAllTags: true,
  });
})();
