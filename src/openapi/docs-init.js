// The reference page's own code (GET /v1/docs; docs/design.md, "The reference page"), copied to
// /v1/docs/assets/: zod's `jitless`, then Scalar's reference of the document, calling this origin
// first and no third party, restyled to pass axe in both colour schemes (test/browser/docs.spec.ts).
globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true };

/**
 * Scalar's default theme, with every colour that text takes at 4.5:1 or more on the
 * backgrounds it sits on (its greys and method colours are 2.9 to 4.4:1). Unlayered, so it
 * wins over the theme's `@layer`. Two of its names are `display: none`, which takes them out
 * of the accessibility tree as well: a copy button's visually hidden "Copy" until its code
 * block is hovered (kept, without the language beside it), and the labels of the document's
 * links when they do not fit on one line and show as icons (hidden visually only). And the
 * Authentication card's header: its title keeps its width, and the auth type's selector goes
 * below it when both do not fit (at 390 and 1,280 px it cut "Required" to "Requi").
 */
const customCss = `
.light-mode {
  --scalar-color-2: #555555;
  --scalar-color-3: #666666;
  --scalar-color-accent: #0066bc;
  --scalar-color-blue: #0063a3;
  --scalar-color-green: #037050;
  --scalar-color-orange: #b24000;
  --scalar-color-red: #c4000a;
  --scalar-color-yellow: #875f00;
  --scalar-color-query: #00686c;
}
.dark-mode {
  --scalar-color-2: #b0b0b0;
  --scalar-color-3: #939393;
  --scalar-color-red: #ff6b66;
}
.scalar-code-copy .sr-only > .hidden { display: inline; }
.scalar-code-copy .sr-only > .hidden > :not(:last-child) { display: none; }
.scalar-app div:has(> button [data-testid="auth-indicator"]) {
  flex-wrap: wrap;
  row-gap: 0.125rem;
  padding-bottom: 0.125rem;
}
.scalar-app div:has(> button [data-testid="auth-indicator"]) > div { padding-left: 0.5rem; }
.scalar-app button:has([data-testid="auth-indicator"]) { flex: 1 0 auto; }
.scalar-app .icons-only a > span {
  display: inline;
  position: absolute;
  width: 1px;
  height: 1px;
  overflow: hidden;
  clip-path: inset(50%);
  white-space: nowrap;
}
`;

/**
 * Names two things Scalar 1.72 renders without one, as they appear: the contact's URL link
 * (an icon alone when the contact has an email too) by where it leads, and each operation's
 * "Example Responses" region by its operation (Scalar names it by its status-code tabs, so a
 * GET and its HEAD were two landmarks of one name). The document itself is left as it is,
 * so "Download OpenAPI Document" gives the one the API serves.
 */
function nameWhatScalarLeavesUnnamed(app, contactUrl) {
  const contact = contactUrl && new URL(contactUrl);
  const links = contact && `a[href="${CSS.escape(contactUrl)}"]:not([aria-label])`;
  const name = () => {
    for (const link of links ? app.querySelectorAll(links) : []) {
      if (link.textContent.trim() === "") {
        link.setAttribute("aria-label", contact.host + contact.pathname);
      }
    }
    for (const region of app.querySelectorAll(".response-card[role=region][aria-labelledby]")) {
      const operation = region.closest("section")?.querySelector("h3")?.textContent?.trim();
      if (!operation) continue;
      region.removeAttribute("aria-labelledby");
      region.setAttribute("aria-label", `${operation}, example responses`);
    }
  };
  new MutationObserver(name).observe(app, { childList: true, subtree: true });
}

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
  nameWhatScalarLeavesUnnamed(app, openapi.info?.contact?.url);
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
    customCss,
  });
})();
