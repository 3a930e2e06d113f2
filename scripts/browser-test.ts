// npm run test:browser
// Headless Chromium (Debian's `chromium`, driven by playwright-core; nothing downloads a
// browser) against the real `npm run dev` on 127.0.0.1 with a temporary local D1:
//   1. from a page served by this script on another port (another origin), the flows a
//      web app runs, each answer read the way the app reads it (fetch, status, JSON body,
//      and only the headers CORS lets it read);
//   2. GET /v1/docs with no internet: every operation's summary renders, no request
//      fails, nothing leaves 127.0.0.1, the console shows no error (a CSP violation
//      counts), "try it" reaches the local API with local-dev-key; screenshots in
//      test-results/browser/ (git-ignored).
// Bounded in time; stops the server, the page server and the browser however it ends.
// Ports: BROWSER_API_PORT (default 8792) and BROWSER_APP_PORT (default 8793).
// Browser: CHROMIUM_PATH (default /usr/bin/chromium).
import { existsSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { OPERATIONS } from "../src/operations.ts";
import { check, type DevServer, Failure, HOST, runBounded, startDevServer } from "./dev-server.ts";

const API_PORT = Number(process.env.BROWSER_API_PORT ?? 8792);
const APP_PORT = Number(process.env.BROWSER_APP_PORT ?? 8793);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const LOCAL_DEV_KEY = "local-dev-key";
const TOTAL_TIMEOUT_MS = 300_000;
const SHOTS = fileURLToPath(new URL("../test-results/browser/", import.meta.url));
/** How Chromium runs here (as root, offline): see README "Browser tests". */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

let server: DevServer | undefined;
let appServer: Server | undefined;
let browser: Browser | undefined;
const results = { passed: 0, failed: 0, skipped: 0 };

function log(message: string): void {
  console.log(`[browser] ${message}`);
}

/** One named check: a failure is reported and counted, and the run goes on. */
async function step(name: string, body: () => Promise<string | undefined>): Promise<void> {
  try {
    const skipped = await body();
    if (skipped) {
      results.skipped += 1;
      log(`skip - ${name}: ${skipped}`);
    } else {
      results.passed += 1;
      log(`ok - ${name}`);
    }
  } catch (err) {
    results.failed += 1;
    const message = err instanceof Error ? err.message : String(err);
    log(`not ok - ${name}: ${message}`);
    if (!(err instanceof Failure) && err instanceof Error) console.error(err.stack);
  }
}

/** What a web app sees of one answer: status, the headers CORS lets it read, the body. */
interface Seen {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
  /** fetch() rejected (a CORS refusal looks like this to the page). */
  networkError?: string;
}

interface AppRequest {
  method?: string;
  key?: string;
  headers?: Record<string, string>;
  /** Sent as it is (a string); set Content-Type yourself. */
  body?: string;
}

/** fetch() from the app page, on the other origin, exactly as a web app calls the API. */
async function appFetch(page: Page, url: string, request: AppRequest = {}): Promise<Seen> {
  return page.evaluate(
    async ({ url, request }) => {
      const headers: Record<string, string> = { ...request.headers };
      if (request.key) headers.Authorization = `Bearer ${request.key}`;
      try {
        const response = await fetch(url, {
          method: request.method ?? "GET",
          headers,
          body: request.body,
          cache: "no-store",
        });
        const readable: Record<string, string> = {};
        response.headers.forEach((value, name) => {
          readable[name] = value;
        });
        const text = await response.text();
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          // not JSON: left null, the checks say so
        }
        return { status: response.status, headers: readable, text, json };
      } catch (error) {
        return { status: 0, headers: {}, text: "", json: null, networkError: String(error) };
      }
    },
    { url, request },
  );
}

function describeSeen(seen: Seen): string {
  return seen.networkError
    ? `network error ${seen.networkError}`
    : `${seen.status} ${JSON.stringify(seen.headers)} ${seen.text.slice(0, 300)}`;
}

/** An Error answer as the contract shapes it, read from the other origin. */
function expectError(seen: Seen, status: number, code: string): void {
  const body = seen.json as { code?: unknown; status?: unknown; message?: unknown } | null;
  check(seen.status === status, `expected ${status} ${code}, got ${describeSeen(seen)}`);
  check(
    seen.headers["content-type"]?.startsWith("application/json"),
    `${status}: not JSON: ${describeSeen(seen)}`,
  );
  check(
    body?.code === code && body.status === status && typeof body.message === "string",
    `${status}: not the Error ${code}: ${seen.text}`,
  );
  check(seen.headers["x-request-id"], `${status}: X-Request-Id is not readable`);
}

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

async function webAppFlows(page: Page, api: string, webKey: string): Promise<void> {
  const json = { "Content-Type": "application/json" };
  const created: Pet[] = [];
  const create = async (name: string, headers: Record<string, string> = {}) =>
    appFetch(page, `${api}/v1/pets`, {
      method: "POST",
      key: LOCAL_DEV_KEY,
      headers: { ...json, ...headers },
      body: JSON.stringify({ name, categoryId: 7 }),
    });

  await step("createPet with Idempotency-Key, then its replay", async () => {
    const idempotencyKey = `browser-${Date.now()}`;
    const name = `browser pet ${Date.now()}`;
    const first = await create(name, { "Idempotency-Key": idempotencyKey });
    const pet = first.json as Pet;
    check(first.status === 201, `create: ${describeSeen(first)}`);
    check(pet.name === name && pet.status === "available", `create: body ${first.text}`);
    check(first.headers.location === `/v1/pets/${pet.id}`, `Location: ${describeSeen(first)}`);
    check(first.headers["x-d1-bookmark"], `x-d1-bookmark is not readable: ${describeSeen(first)}`);
    check(!first.headers["idempotent-replayed"], "the first answer says it is a replay");
    const replay = await create(name, { "Idempotency-Key": idempotencyKey });
    check(replay.status === 201, `replay: ${describeSeen(replay)}`);
    check(replay.headers["idempotent-replayed"] === "true", `replay: ${describeSeen(replay)}`);
    check(replay.headers.location === first.headers.location, "replay: another Location");
    check(replay.text === first.text, `replay: another body ${replay.text}`);
    created.push(pet);
    return undefined;
  });

  await step('listPets: Link rel="next" followed to the last page', async () => {
    for (const n of [1, 2, 3]) {
      const more = await create(`browser page pet ${n} ${Date.now()}`);
      check(more.status === 201, `create: ${describeSeen(more)}`);
      created.push(more.json as Pet);
    }
    const ids: number[] = [];
    let url: string | undefined = `${api}/v1/pets?limit=2`;
    let pages = 0;
    while (url && pages < 50) {
      const seen = await appFetch(page, url, { key: LOCAL_DEV_KEY });
      check(seen.status === 200 && Array.isArray(seen.json), `page: ${describeSeen(seen)}`);
      const pets = seen.json as Pet[];
      check(pets.length <= 2, `page of ${pets.length} pets with limit=2`);
      ids.push(...pets.map((p) => p.id));
      const next = /<([^>]+)>;\s*rel="next"/.exec(seen.headers.link ?? "")?.[1];
      check(
        next || pages > 0,
        `the first page has no readable Link rel="next": ${describeSeen(seen)}`,
      );
      url = next ? new URL(next, api).href : undefined;
      pages += 1;
    }
    check(url === undefined, "more than 50 pages");
    check(
      ids.every((id, i) => i === 0 || id > (ids[i - 1] as number)),
      `ids not ascending: ${ids}`,
    );
    for (const pet of created) {
      check(ids.filter((id) => id === pet.id).length === 1, `pet ${pet.id} not listed once`);
    }
    log(`  ${pages} pages of limit=2, ${ids.length} pets, ascending, each once`);
    return undefined;
  });

  const pet = created[0];
  await step("getPet: the deprecation headers are readable", async () => {
    check(pet, "no pet was created");
    const seen = await appFetch(page, `${api}/v1/pets/${pet.id}`, { key: LOCAL_DEV_KEY });
    check(
      seen.status === 200 && seen.text === JSON.stringify(pet),
      `getPet: ${describeSeen(seen)}`,
    );
    check(/^@\d+$/.test(seen.headers.deprecation ?? ""), `Deprecation: ${describeSeen(seen)}`);
    check(seen.headers.sunset === "Thu, 05 Dec 2030 00:00:00 GMT", `Sunset: ${describeSeen(seen)}`);
    const link = seen.headers.link ?? "";
    check(
      link.includes('</v1/pets>; rel="successor-version"') && link.includes('rel="deprecation"'),
      `Link: ${describeSeen(seen)}`,
    );
    return undefined;
  });

  await step("401: the Error and WWW-Authenticate", async () => {
    const none = await appFetch(page, `${api}/v1/pets`);
    expectError(none, 401, "unauthorized");
    check(
      none.headers["www-authenticate"] === 'Bearer realm="petstore"',
      `WWW-Authenticate: ${describeSeen(none)}`,
    );
    const wrong = await appFetch(page, `${api}/v1/pets`, { key: "psk_not-a-key" });
    expectError(wrong, 401, "unauthorized");
    check(
      wrong.headers["www-authenticate"]?.includes('error="invalid_token"'),
      `WWW-Authenticate: ${describeSeen(wrong)}`,
    );
    return undefined;
  });

  await step("405: DELETE reaches the Error and Allow (the preflight is granted)", async () => {
    const seen = await appFetch(page, `${api}/v1/pets/${pet?.id ?? 1}`, {
      method: "DELETE",
      key: LOCAL_DEV_KEY,
    });
    expectError(seen, 405, "method_not_allowed");
    check(seen.headers.allow === "GET, HEAD, OPTIONS", `Allow: ${describeSeen(seen)}`);
    return undefined;
  });

  await step("400: invalid parameter, invalid body, invalid JSON", async () => {
    expectError(
      await appFetch(page, `${api}/v1/pets?limit=0`, { key: LOCAL_DEV_KEY }),
      400,
      "invalid_parameter",
    );
    const post = (body: string) =>
      appFetch(page, `${api}/v1/pets`, { method: "POST", key: LOCAL_DEV_KEY, headers: json, body });
    expectError(await post(JSON.stringify({ name: "", categoryId: 1 })), 400, "validation_failed");
    expectError(await post("{"), 400, "invalid_json");
    return undefined;
  });

  await step("413: a body over 16 KiB", async () => {
    const seen = await appFetch(page, `${api}/v1/pets`, {
      method: "POST",
      key: LOCAL_DEV_KEY,
      headers: json,
      body: JSON.stringify({ name: "x".repeat(17_000), categoryId: 1 }),
    });
    expectError(seen, 413, "payload_too_large");
    return undefined;
  });

  await step("415: a body that is not application/json", async () => {
    const seen = await appFetch(page, `${api}/v1/pets`, {
      method: "POST",
      key: LOCAL_DEV_KEY,
      headers: { "Content-Type": "text/plain" },
      body: "name=Rex",
    });
    expectError(seen, 415, "unsupported_media_type");
    return undefined;
  });

  await step("403: a read-only key reads, and cannot create", async () => {
    const read = await appFetch(page, `${api}/v1/pets?limit=1`, { key: webKey });
    check(read.status === 200 && Array.isArray(read.json), `read: ${describeSeen(read)}`);
    const seen = await appFetch(page, `${api}/v1/pets`, {
      method: "POST",
      key: webKey,
      headers: json,
      body: JSON.stringify({ name: "web", categoryId: 1 }),
    });
    expectError(seen, 403, "insufficient_scope");
    check(
      seen.headers["www-authenticate"] ===
        'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"',
      `WWW-Authenticate: ${describeSeen(seen)}`,
    );
    return undefined;
  });

  await step("ETag: revalidation with If-None-Match answers 304", async () => {
    for (const url of [`${api}/v1/pets/${pet?.id ?? 1}`, `${api}/v1/pets?limit=1`]) {
      const first = await appFetch(page, url, { key: LOCAL_DEV_KEY });
      check(first.status === 200, `${url}: ${describeSeen(first)}`);
      const etag = first.headers.etag;
      check(
        etag !== undefined && /^"[A-Za-z0-9_-]{22}"$/.test(etag),
        `ETag: ${describeSeen(first)}`,
      );
      check(
        first.headers["cache-control"] === "private, no-cache",
        `Cache-Control: ${describeSeen(first)}`,
      );
      const again = await appFetch(page, url, {
        key: LOCAL_DEV_KEY,
        headers: { "If-None-Match": `"other", W/${etag}` },
      });
      check(again.status === 304, `If-None-Match: ${describeSeen(again)}`);
      check(again.text === "", "304 with a body");
      check(again.headers.etag === etag, `304: ETag ${describeSeen(again)}`);
      // The headers that describe the answer stay readable on the 304.
      check(again.headers.link === first.headers.link, `304: Link ${describeSeen(again)}`);
    }
    return undefined;
  });
}

async function docsPage(page: Page, api: string): Promise<void> {
  const problems: string[] = [];
  const onPage = (what: string) => (detail: string) => problems.push(`${what}: ${detail}`);
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") {
      onPage(`console ${message.type()}`)(message.text());
    }
  });
  page.on("pageerror", (error) => onPage("page error")(error.message));
  // The browser's own console entries (CSP violations, blocked loads), which are not
  // console API calls and so not page "console" events.
  const cdp = await page.context().newCDPSession(page);
  cdp.on("Log.entryAdded", ({ entry }) => {
    if (entry.level === "error" || entry.level === "warning") {
      onPage(`console ${entry.source} ${entry.level}`)(`${entry.text} ${entry.url ?? ""}`);
    }
  });
  await cdp.send("Log.enable");
  // Chromium reports some CSP violations (a blocked eval) only as DevTools issues.
  cdp.on("Audits.issueAdded", ({ issue }) => {
    if (issue.code === "ContentSecurityPolicyIssue") {
      onPage("CSP issue")(JSON.stringify(issue.details.contentSecurityPolicyIssueDetails));
    }
  });
  await cdp.send("Audits.enable");
  page.on("requestfailed", (request) =>
    onPage("request failed")(`${request.url()} ${request.failure()?.errorText}`),
  );
  page.on("request", (request) => {
    if (new URL(request.url()).hostname !== HOST) onPage("left 127.0.0.1")(request.url());
  });
  page.on("response", (response) => {
    if (response.status() >= 400) onPage("answered")(`${response.status()} ${response.url()}`);
  });
  // Recorded by the page itself too, in case a violation is not logged to the console.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener("securitypolicyviolation", (event) => {
      seen.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });

  const summaries = OPERATIONS.map((op) => op.summary);
  await step("GET /v1/docs renders every operation's summary, offline", async () => {
    const started = Date.now();
    const response = await page.goto(`${api}/v1/docs`);
    check(response?.status() === 200, `GET /v1/docs: ${response?.status()}`);
    check(
      response?.headers()["content-security-policy"]?.includes("script-src 'self'"),
      "no Content-Security-Policy",
    );
    for (const summary of summaries) {
      await page
        .getByText(summary, { exact: true })
        .first()
        .waitFor({ timeout: 30_000 })
        .catch(() => {
          throw new Failure(`"${summary}" did not render`);
        });
    }
    log(`  ${summaries.length} summaries rendered in ${Date.now() - started} ms`);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, "docs.png") });
    log(`  screenshot: ${path.relative(process.cwd(), path.join(SHOTS, "docs.png"))}`);
    return undefined;
  });

  await step('"try it" goes to this origin first, and lists pets with local-dev-key', async () => {
    const serverButton = page.getByRole("button", { name: /^Server:/ }).first();
    const shown = ((await serverButton.textContent()) ?? "").replace(/\s+/g, " ");
    check(shown.includes(`${api}/v1`), `the selected server is not this origin: ${shown}`);
    await page
      .getByRole("button", { name: /Test Request/ })
      .first()
      .click();
    const dialog = page.getByRole("dialog");
    await dialog.getByPlaceholder("Token").fill(LOCAL_DEV_KEY);
    const [answer] = await Promise.all([
      page.waitForResponse(
        (r) => r.url().startsWith(`${api}/v1/pets`) && r.request().method() === "GET",
        { timeout: 30_000 },
      ),
      dialog.getByRole("button", { name: /^Send/ }).first().click(),
    ]);
    const sent = answer.request().headers().authorization;
    check(sent === `Bearer ${LOCAL_DEV_KEY}`, `try it sent Authorization ${sent}`);
    check(answer.status() === 200, `try it: ${answer.status()} ${answer.url()}`);
    const pets = (await answer.json()) as Pet[];
    check(Array.isArray(pets) && pets.length > 0, `try it listed ${JSON.stringify(pets)}`);
    await dialog.getByText("200 OK").first().waitFor({ timeout: 10_000 });
    await page.screenshot({ path: path.join(SHOTS, "try-it.png") });
    log(`  ${answer.url()} answered 200 with ${pets.length} pets; screenshot try-it.png`);
    return undefined;
  });

  await step("the docs page: no failed request, no console error, no CSP violation", async () => {
    const violations = await page.evaluate(
      () => (window as unknown as { cspViolations?: string[] }).cspViolations ?? [],
    );
    problems.push(...violations.map((v) => `CSP violation: ${v}`));
    check(problems.length === 0, `\n    ${problems.join("\n    ")}`);
    return undefined;
  });
}

/** The web app's own origin: a blank page on another port of 127.0.0.1. */
function startAppServer(): Promise<Server> {
  const page = "<!doctype html><html lang=en><title>A web app on another origin</title><p>app";
  const http = createServer((request, response) => {
    if (request.method === "GET" && request.url === "/") {
      response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      response.end(page);
    } else {
      response.writeHead(404, { "Content-Type": "text/plain" });
      response.end("not found");
    }
  });
  return new Promise((resolve, reject) => {
    http.once("error", reject);
    http.listen(APP_PORT, HOST, () => resolve(http));
  });
}

async function main(): Promise<void> {
  const started = Date.now();
  check(
    existsSync(CHROMIUM),
    `no browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH`,
  );
  log(`starting npm run dev on ${HOST}:${API_PORT} with a temporary local D1`);
  server = await startDevServer(API_PORT, { label: "browser" });
  const api = server.base;
  // `keys create` prints the new key alone on its last line.
  const created = await server.keys("create", "--label", "web", "--scope", "pets:read");
  const webKey = created.trimEnd().split("\n").at(-1)?.trim() ?? "";
  check(webKey.startsWith("psk_"), `keys create printed no key on its last line:\n${created}`);
  appServer = await startAppServer();
  const app = `http://${HOST}:${APP_PORT}`;

  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  log(`Chromium ${browser.version()} (${CHROMIUM}); API ${api}, web app ${app}`);
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });

  const appPage = await context.newPage();
  await appPage.goto(`${app}/`);
  await webAppFlows(appPage, api, webKey);
  await docsPage(await context.newPage(), api);

  log(`finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (results.failed > 0) throw new Failure(`${results.failed} check(s) failed`);
}

await runBounded("browser", TOTAL_TIMEOUT_MS, main, async () => {
  await browser?.close().catch(() => {});
  await new Promise<void>((resolve) => (appServer ? appServer.close(() => resolve()) : resolve()));
  await server?.stop();
});
// The plain closing line CI reads.
console.log(
  `browser: ${results.passed} passed, ${results.failed} failed, ${results.skipped} skipped`,
);
