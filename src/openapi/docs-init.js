// The reference page's own code (GET /v1/docs; docs/design.md, "The reference page"): zod's
// `jitless` before the renderer loads, then Scalar's reference of the document, calling this
// origin first and no third party. scripts/docs-assets.ts copies it to /v1/docs/assets/.
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
