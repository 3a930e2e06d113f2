// GET /v1/docs with no internet: every operation's summary renders, "try it" reaches the
// local API with local-dev-key, and no request fails or leaves 127.0.0.1, nothing is
// logged as an error or a warning, and no Content-Security-Policy violation occurs.
// Screenshots of both states: test-results/browser/docs-*/docs.png and try-it.png.
// The page, every section rendered, through axe at each width in both colour schemes.
import { expect, type Page, test } from "@playwright/test";
import { LOCAL_DEV_KEY } from "../../src/auth/keys.ts";
import { OPERATIONS } from "../../src/operations/index.ts";
import { review } from "./review.ts";

test("the docs page renders offline, and its try it lists pets from this origin", async ({
  page,
  request,
  baseURL,
}, testInfo) => {
  const created = await request.post("/v1/pets", {
    headers: { Authorization: `Bearer ${LOCAL_DEV_KEY}` },
    data: { name: "docs page pet", categoryId: 1 },
  });
  expect(created.status()).toBe(201);

  const problems: string[] = [];
  const problem = (what: string) => (detail: string) => problems.push(`${what}: ${detail}`);
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problem(`console ${m.type()}`)(m.text());
  });
  page.on("pageerror", (error) => problem("page error")(error.message));
  page.on("requestfailed", (r) =>
    problem("request failed")(`${r.url()} ${r.failure()?.errorText}`),
  );
  page.on("request", (r) => {
    if (new URL(r.url()).hostname !== "127.0.0.1") problem("left 127.0.0.1")(r.url());
  });
  page.on("response", (r) => {
    if (r.status() >= 400) problem("responded")(`${r.status()} ${r.url()}`);
  });
  // The browser's own console entries (CSP violations, blocked loads) are not console API
  // calls, and Chromium reports some CSP violations (a blocked eval) only as DevTools issues.
  const cdp = await page.context().newCDPSession(page);
  cdp.on("Log.entryAdded", ({ entry }) => {
    if (entry.level === "error" || entry.level === "warning") {
      problem(`console ${entry.source} ${entry.level}`)(`${entry.text} ${entry.url ?? ""}`);
    }
  });
  cdp.on("Audits.issueAdded", ({ issue }) => {
    if (issue.code === "ContentSecurityPolicyIssue") {
      problem("CSP issue")(JSON.stringify(issue.details.contentSecurityPolicyIssueDetails));
    }
  });
  await cdp.send("Log.enable");
  await cdp.send("Audits.enable");
  // Recorded by the page itself too, in case a violation is not logged to the console.
  await page.addInitScript(() => {
    const seen: string[] = [];
    Object.assign(window, { cspViolations: seen });
    document.addEventListener("securitypolicyviolation", (e) => {
      seen.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });

  await test.step("every operation's summary renders", async () => {
    const response = await page.goto("/v1/docs");
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    for (const { summary } of OPERATIONS) {
      await expect(page.getByText(summary, { exact: true }).first()).toBeVisible({
        timeout: 30_000,
      });
    }
    await page.screenshot({ path: testInfo.outputPath("docs.png") });
  });

  await test.step('"try it" goes to this origin first, and lists pets with local-dev-key', async () => {
    const server = page.getByRole("button", { name: /^Server:/ }).first();
    await expect(server).toContainText(`${baseURL}/v1`);
    // The reference renders an operation only as it nears the viewport: go to listPets.
    await page
      .getByRole("list", { name: "animals endpoints" })
      .getByText("/pets", { exact: true })
      .first()
      .click();
    await page
      .getByRole("button", { name: /Test Request/ })
      .first()
      .click();
    const dialog = page.getByRole("dialog");
    await dialog.getByPlaceholder("Token").fill(LOCAL_DEV_KEY);
    const [response] = await Promise.all([
      page.waitForResponse(
        (r) => r.url().startsWith(`${baseURL}/v1/pets`) && r.request().method() === "GET",
      ),
      dialog.getByRole("button", { name: /^Send/ }).first().click(),
    ]);
    expect(response.request().headers().authorization).toBe(`Bearer ${LOCAL_DEV_KEY}`);
    expect(response.status()).toBe(200);
    expect(((await response.json()) as unknown[]).length).toBeGreaterThan(0);
    await expect(dialog.getByText("200 OK").first()).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath("try-it.png") });
  });

  await test.step("no failed request, no console error, no CSP violation", async () => {
    const violations = await page.evaluate(
      () => (window as unknown as { cspViolations?: string[] }).cspViolations ?? [],
    );
    expect([...problems, ...violations.map((v) => `CSP violation: ${v}`)]).toEqual([]);
  });
});

/**
 * The reference renders a section only as it nears the viewport (a placeholder until then):
 * scrolls to each placeholder in turn until none is left, then back to the top.
 */
async function renderEverySection(page: Page) {
  await expect
    .poll(
      () =>
        page.evaluate(() => {
          const placeholder = document.querySelector('[data-placeholder="true"]');
          placeholder?.scrollIntoView();
          return placeholder === null;
        }),
      { timeout: 30_000 },
    )
    .toBe(true);
  await page.evaluate(() => window.scrollTo(0, 0));
}

test("the docs page, every section rendered, passes axe at 390, 800 and 1,280 px in both colour schemes", async ({
  page,
}, testInfo) => {
  // Six axe runs over every section: about a minute each on a busy 2-core machine.
  test.setTimeout(600_000);
  await page.goto("/v1/docs");
  await expect(page.getByText("List animals", { exact: true }).first()).toBeVisible({
    timeout: 30_000,
  });
  await review(page, testInfo, "docs", async (scheme) => {
    // The reference follows the browser's scheme with a class on <body>.
    await expect(page.locator("body")).toHaveClass(new RegExp(`\\b${scheme}-mode\\b`));
    await renderEverySection(page);
    // The Authentication card's title shows whole ("Required" is not cut off by the auth
    // type's selector beside it): axe does not see a clipped word.
    const title = page.locator("button:has([data-testid=auth-indicator])").first();
    const [shown, whole] = await title.evaluate((b) => [b.clientWidth, b.scrollWidth]);
    const width = page.viewportSize()?.width;
    expect.soft(shown, `the Authentication card's title at ${width} px, ${scheme}`).toBe(whole);
  });
});
