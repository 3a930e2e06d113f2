// The smoke test (scripts/smoke-checks.ts, scripts/smoke-cli.ts) in workerd: its grammar,
// its parsers, and its checks run against the worker itself, healthy and broken in one
// way at a time. The real process against the real `npm run dev` runs in
// `npm run smoke:local` (.ci/run).
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  type CheckResult,
  EXPECTED_DEPRECATION,
  EXPECTED_SUNSET,
  pageResources,
  parseLinkHeader,
  runSmoke,
  type SmokeOptions,
} from "../scripts/smoke-checks.ts";
import { parseBase, parseSmokeArgs, USAGE, UsageError } from "../scripts/smoke-cli.ts";
import { BASE, createKey } from "./helpers.ts";
import { petCount } from "./support/requests.ts";
import { usageErrorOf } from "./support/usage-error.ts";

const KEY_ENV = { SMOKE_API_KEY: "psk_example" };

function usageError(argv: string[], env: Record<string, string> = KEY_ENV): string {
  return usageErrorOf(() => parseSmokeArgs(argv, env), UsageError, JSON.stringify(argv));
}

describe("npm run smoke -- arguments", () => {
  it("reads every flag, and the key from SMOKE_API_KEY only", () => {
    expect(
      parseSmokeArgs(
        [
          "--base",
          "https://api.petstore.example.com/v1",
          "--write",
          "--timeout=5",
          "--pin",
          "petstore-api-production=0f6bfa3e-6b2a-4c1d-9e8f-0123456789ab",
          "--cors-origin",
          "https://shop.example",
        ],
        KEY_ENV,
      ),
    ).toEqual({
      base: "https://api.petstore.example.com",
      apiKey: "psk_example",
      write: true,
      timeoutMs: 5_000,
      pin: { worker: "petstore-api-production", version: "0f6bfa3e-6b2a-4c1d-9e8f-0123456789ab" },
      corsOrigin: "https://shop.example",
    });
  });

  it("defaults: read-only, 10 s, no pin, https://example.com as the preflight's origin", () => {
    expect(parseSmokeArgs(["--base", "http://127.0.0.1:8792"], KEY_ENV)).toEqual({
      base: "http://127.0.0.1:8792",
      apiKey: "psk_example",
      write: false,
      timeoutMs: 10_000,
      pin: undefined,
      corsOrigin: "https://example.com",
    });
    expect(parseSmokeArgs(["--help"], {})).toBe("help");
  });

  it("--base is an origin; plain http only on the loopback", () => {
    expect(parseBase("https://staging.petstore.example.com/")).toBe(
      "https://staging.petstore.example.com",
    );
    expect(parseBase("http://localhost:8787/v1/")).toBe("http://localhost:8787");
    expect(parseBase("http://[::1]:8787")).toBe("http://[::1]:8787");
    expect(usageError(["--base", "http://api.petstore.example.com"])).toMatch(
      /plain http only for 127\.0\.0\.1/,
    );
    expect(usageError(["--base", "https://x.example/v1/pets"])).toMatch(/without the path/);
    expect(usageError(["--base", "https://user:pw@x.example"])).toMatch(/credentials/);
    expect(usageError(["--base", "ftp://x.example"])).toMatch(/http\(s\) URL/);
    expect(usageError(["--base", "api.petstore.example.com"])).toMatch(/is not a URL/);
  });

  it("wrong input is one line naming the problem", () => {
    expect(usageError([])).toBe("--base is required");
    expect(usageError(["--base", "https://x.example"], {})).toMatch(/SMOKE_API_KEY .* not set/);
    expect(usageError(["--base", "https://x.example", "--key", "k"])).toMatch(
      /only from the environment variable SMOKE_API_KEY/,
    );
    expect(usageError(["--base", "https://x.example", "--verbose"])).toMatch(/unknown flag/);
    expect(usageError(["--base", "https://x.example", "--base", "https://y.example"])).toMatch(
      /given twice/,
    );
    expect(usageError(["--base"])).toBe("--base needs a value");
    expect(usageError(["--base", "--write"])).toBe("--base needs a value");
    expect(usageError(["--base", "https://x.example", "--write=yes"])).toMatch(/takes no value/);
    expect(usageError(["https://x.example"])).toMatch(/unexpected argument/);
    for (const timeout of ["0", "1.5", "121", "ten"]) {
      expect(usageError(["--base", "https://x.example", "--timeout", timeout])).toMatch(
        /whole seconds from 1 to 120/,
      );
    }
    expect(usageError(["--base", "https://x.example", "--pin", "production=latest"])).toMatch(
      /<worker name>=<version id>/,
    );
    expect(
      usageError(["--base", "https://x.example", "--cors-origin", "https://a.example/"]),
    ).toMatch(/not an origin/);
  });

  it("a key with spaces is refused without being echoed", () => {
    const message = usageError(["--base", "https://x.example"], {
      SMOKE_API_KEY: "psk_secret value",
    });
    expect(message).toMatch(/SMOKE_API_KEY holds spaces/);
    expect(message).not.toContain("psk_secret");
    expect(USAGE).toContain("SMOKE_API_KEY");
  });
});

describe("parsers", () => {
  it("Link: targets and relation types (RFC 8288)", () => {
    expect(
      parseLinkHeader(
        '</v1/pets>; rel="successor-version", </v1/docs#x>; rel="deprecation"; type="text/html"',
      ),
    ).toEqual([
      { href: "/v1/pets", rels: ["successor-version"] },
      { href: "/v1/docs#x", rels: ["deprecation"] },
    ]);
    expect(parseLinkHeader("<https://a.example/p?cursor=x,y>; rel=next")).toEqual([
      { href: "https://a.example/p?cursor=x,y", rels: ["next"] },
    ]);
    expect(parseLinkHeader('<a>; title="x"; rel="Next Last"')).toEqual([
      { href: "a", rels: ["next", "last"] },
    ]);
    expect(parseLinkHeader(null)).toEqual([]);
  });

  it("a page's scripts and fetched links, not those in comments or other elements", () => {
    const html = `<!doctype html><head>
      <link rel="stylesheet" href="/assets/a.css"><link rel=icon href='/favicon.ico'>
      <link rel="canonical" href="https://elsewhere.example/docs">
      <!-- <script src="https://old.example/x.js"></script> -->
      <script type="module" src="/assets/scalar.js?v=1&amp;x=2"></script>
      <script>inline()</script><SCRIPT SRC=https://cdn.example/y.js></SCRIPT>
      <img src="https://img.example/z.png"></head>`;
    expect(pageResources(html)).toEqual({
      scripts: ["/assets/scalar.js?v=1&x=2", "https://cdn.example/y.js"],
      links: ["/assets/a.css", "/favicon.ico"],
    });
  });
});

/** The requests the smoke test sent, as the deployment saw them. */
interface Sent {
  method: string;
  url: string;
  authorization: string | null;
  pin: string | null;
}

type Fault = (request: Request, response: Response) => Response | Promise<Response>;

/**
 * The worker's own fetch, recording each request; `fault` may change an answer (to
 * play a broken deployment) and `docsPage` replaces the docs page's HTML.
 */
function deployment(options: { fault?: Fault; docsPage?: string; scripts?: Set<string> } = {}) {
  const sent: Sent[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    sent.push({
      method: request.method,
      url: request.url,
      authorization: request.headers.get("Authorization"),
      pin: request.headers.get("Cloudflare-Workers-Version-Overrides"),
    });
    const path = new URL(request.url).pathname;
    let response: Response;
    if (options.docsPage !== undefined && path === "/v1/docs") {
      response = new Response(options.docsPage, {
        headers: { "Content-Type": "text/html; charset=UTF-8" },
      });
    } else if (options.scripts?.has(path)) {
      response = new Response("console.log('reference')", {
        headers: { "Content-Type": "text/javascript; charset=utf-8" },
      });
    } else {
      response = await exports.default.fetch(request);
    }
    return options.fault ? options.fault(request, response) : response;
  };
  return { fetchImpl, sent };
}

async function optionsWithKey(overrides: Partial<SmokeOptions> = {}): Promise<SmokeOptions> {
  const { key } = await createKey("smoke");
  return {
    base: BASE,
    apiKey: key,
    write: false,
    timeoutMs: 10_000,
    pin: undefined,
    corsOrigin: "https://shop.example",
    ...overrides,
  };
}

const byName = (results: CheckResult[], fragment: string) =>
  results.find((r) => r.name.includes(fragment));

/** Copies a response with some headers changed (null removes one). */
function withHeaders(response: Response, changes: Record<string, string | null>): Response {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) headers.delete(name);
    else headers.set(name, value);
  }
  return new Response(response.body, { status: response.status, headers });
}

describe("runSmoke against the worker", () => {
  it("read-only: passes with a few GET and OPTIONS requests, the key only where needed", async () => {
    const options = await optionsWithKey();
    const before = await petCount();
    const { fetchImpl, sent } = deployment();
    const lines: CheckResult[] = [];
    const report = await runSmoke(options, fetchImpl, (r) => lines.push(r));
    expect(report.failed, JSON.stringify(report.results, null, 2)).toBe(0);
    expect(report.passed).toBe(7);
    expect(lines).toEqual(report.results);
    expect(new Set(sent.map((s) => s.method))).toEqual(new Set(["GET", "OPTIONS"]));
    expect(sent.length).toBeLessThanOrEqual(9);
    expect(await petCount()).toBe(before);
    // The key goes only with the reads that need one: the list, its next page, getPet.
    const withKey = sent.filter((s) => s.authorization !== null);
    expect(withKey.length).toBeGreaterThanOrEqual(2);
    for (const s of withKey) {
      expect(s.authorization).toBe(`Bearer ${options.apiKey}`);
      expect(`${s.method} ${new URL(s.url).pathname}`).toMatch(/^GET \/v1\/pets(\/\d+)?$/);
    }
    expect(sent).toContainEqual({
      method: "GET",
      url: `${BASE}/v1/pets`,
      authorization: null,
      pin: null,
    });
    expect(JSON.stringify(report)).not.toContain(options.apiKey);
  });

  it("--write: creates exactly one pet, replays it, and follows the list's next page", async () => {
    const options = await optionsWithKey({ write: true });
    const seed = await optionsWithKey({ write: true });
    await runSmoke(seed, deployment().fetchImpl); // at least one pet before, so page 1 has a next
    const before = await petCount();
    const { fetchImpl, sent } = deployment();
    const report = await runSmoke(options, fetchImpl);
    expect(report.failed, JSON.stringify(report.results, null, 2)).toBe(0);
    expect(report.passed).toBe(9);
    expect(await petCount()).toBe(before + 1);
    const posts = sent.filter((s) => s.method === "POST");
    expect(posts).toHaveLength(2);
    expect(byName(report.results, "replayed")?.detail).toMatch(/Idempotent-Replayed: true/);
    expect(byName(report.results, "next page")?.detail).toMatch(/Link rel="next" followed/);
    expect(sent.some((s) => new URL(s.url).searchParams.has("cursor"))).toBe(true);
  });

  it("--pin sends every request to that version", async () => {
    const version = "0f6bfa3e-6b2a-4c1d-9e8f-0123456789ab";
    const options = await optionsWithKey({ pin: { worker: "petstore-api-production", version } });
    const { fetchImpl, sent } = deployment();
    await runSmoke(options, fetchImpl);
    expect(sent.length).toBeGreaterThan(5);
    for (const s of sent) expect(s.pin).toBe(`petstore-api-production="${version}"`);
  });

  it("a key without pets:write fails --write with a line that says so", async () => {
    const { key } = await createKey("read-only smoke", { scopes: ["pets:read"] });
    const options = { ...(await optionsWithKey({ write: true })), apiKey: key };
    const report = await runSmoke(options, deployment().fetchImpl);
    expect(byName(report.results, "Idempotency-Key")).toMatchObject({
      outcome: "FAIL",
      detail: expect.stringMatching(/expected 201, got 403 insufficient_scope.*pets:write/),
    });
    expect(byName(report.results, "replayed")?.outcome).toBe("FAIL");
    expect(report.failed).toBe(2);
  });
});

describe("runSmoke against a broken deployment", () => {
  /** Runs the read-only (or --write) smoke test with one fault; answers the failed lines. */
  async function failures(fault: Fault, write = false): Promise<CheckResult[]> {
    const report = await runSmoke(await optionsWithKey({ write }), deployment({ fault }).fetchImpl);
    return report.results.filter((r) => r.outcome === "FAIL");
  }

  it("getPet without its Deprecation header", async () => {
    const failed = await failures((req, res) =>
      /^\/v1\/pets\/\d+$/.test(new URL(req.url).pathname)
        ? withHeaders(res, { Deprecation: null })
        : res,
    );
    expect(failed).toEqual([
      {
        outcome: "FAIL",
        name: "GET /v1/pets/{petId} deprecation headers",
        detail: `getPet: Deprecation is null, not ${EXPECTED_DEPRECATION}`,
      },
    ]);
  });

  it("getPet with another Sunset, or without the successor link", async () => {
    const sunset = await failures((req, res) =>
      /^\/v1\/pets\/\d+$/.test(new URL(req.url).pathname)
        ? withHeaders(res, { Sunset: "Fri, 06 Dec 2030 00:00:00 GMT" })
        : res,
    );
    expect(sunset.map((f) => f.detail)).toEqual([
      `getPet: Sunset is "Fri, 06 Dec 2030 00:00:00 GMT", not ${EXPECTED_SUNSET}`,
    ]);
    const link = await failures((req, res) =>
      /^\/v1\/pets\/\d+$/.test(new URL(req.url).pathname)
        ? withHeaders(res, { Link: '</v1/docs>; rel="deprecation"' })
        : res,
    );
    expect(link.map((f) => f.detail)).toEqual([
      'getPet: no Link </v1/pets>; rel="successor-version" in "</v1/docs>; rel=\\"deprecation\\""',
    ]);
  });

  it("401 without WWW-Authenticate", async () => {
    const failed = await failures((_req, res) =>
      res.status === 401 ? withHeaders(res, { "WWW-Authenticate": null }) : res,
    );
    expect(failed.map((f) => f.detail)).toEqual(['no key: WWW-Authenticate is ""']);
  });

  it("a preflight without CORS headers", async () => {
    const failed = await failures((req, res) =>
      req.method === "OPTIONS" ? withHeaders(res, { "Access-Control-Allow-Origin": null }) : res,
    );
    expect(failed.map((f) => f.detail)).toEqual([
      "preflight: Access-Control-Allow-Origin is null for https://shop.example",
    ]);
  });

  it("a replay without Idempotent-Replayed", async () => {
    const failed = await failures(
      (_req, res) =>
        res.headers.get("Idempotent-Replayed") === "true"
          ? withHeaders(res, { "Idempotent-Replayed": null })
          : res,
      true,
    );
    expect(failed.map((f) => f.detail)).toEqual(["replay: Idempotent-Replayed is null"]);
  });

  it("a next-page link to another origin is not followed", async () => {
    const options = await optionsWithKey({ write: true });
    await runSmoke(options, deployment().fetchImpl); // two pets at least
    const { fetchImpl, sent } = deployment({
      fault: (_req, res) => {
        const link = res.headers.get("Link");
        return link?.includes('rel="next"')
          ? withHeaders(res, { Link: '<https://evil.example/v1/pets?cursor=x>; rel="next"' })
          : res;
      },
    });
    const report = await runSmoke({ ...options, write: false }, fetchImpl);
    expect(byName(report.results, "next page")).toMatchObject({
      outcome: "FAIL",
      detail: `list: rel="next" points to https://evil.example/v1/pets?cursor=x, not ${BASE}/v1/pets`,
    });
    expect(sent.some((s) => s.url.startsWith("https://evil.example"))).toBe(false);
  });

  it("a redirect is a failure, never followed", async () => {
    const { fetchImpl, sent } = deployment({
      fault: (req, res) =>
        new URL(req.url).pathname === "/"
          ? new Response(null, { status: 302, headers: { Location: "https://evil.example/" } })
          : res,
    });
    const report = await runSmoke(await optionsWithKey(), fetchImpl);
    expect(byName(report.results, "GET /")).toMatchObject({
      outcome: "FAIL",
      detail: "GET /: a 302 redirect to https://evil.example/",
    });
    expect(sent.some((s) => s.url.startsWith("https://evil.example"))).toBe(false);
  });

  it("an error body that echoes the key is reported without it", async () => {
    const options = await optionsWithKey();
    const report = await runSmoke(
      options,
      deployment({
        fault: (req, res) =>
          /^\/v1\/pets\/\d+$/.test(new URL(req.url).pathname)
            ? Response.json(
                {
                  code: "internal_error",
                  message: `bad ${req.headers.get("Authorization")}`,
                  status: 500,
                },
                { status: 500 },
              )
            : res,
      }).fetchImpl,
    );
    const line = byName(report.results, "deprecation");
    expect(line?.outcome).toBe("FAIL");
    expect(line?.detail).toContain("internal_error: bad Bearer [SMOKE_API_KEY]");
    expect(JSON.stringify(report)).not.toContain(options.apiKey);
  });

  it("nothing answering: one clear line, the rest not run", async () => {
    let calls = 0;
    const refused: typeof fetch = async () => {
      calls++;
      throw new TypeError("fetch failed", {
        cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8849"), {
          code: "ECONNREFUSED",
        }),
      });
    };
    const report = await runSmoke(
      { ...(await optionsWithKey()), base: "http://127.0.0.1:8849" },
      refused,
    );
    expect(calls).toBe(1);
    expect(report).toMatchObject({ passed: 0, failed: 1, skipped: 6 });
    expect(report.results).toEqual([
      {
        outcome: "FAIL",
        name: "GET /",
        detail:
          "no answer: GET http://127.0.0.1:8849/: connection refused: nothing listens there (ECONNREFUSED)",
      },
    ]);
  });

  it("an answer slower than --timeout", async () => {
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    const report = await runSmoke({ ...(await optionsWithKey()), timeoutMs: 50 }, hanging);
    expect(report.results).toEqual([
      {
        outcome: "FAIL",
        name: "GET /",
        detail: `no answer: GET ${BASE}/: no answer within 0.05 s`,
      },
    ]);
  });
});

describe("the docs page and the scripts it loads", () => {
  async function docs(page: string, scripts = new Set<string>(), fault?: Fault) {
    const { fetchImpl, sent } = deployment({
      docsPage: page,
      scripts,
      ...(fault ? { fault } : {}),
    });
    const report = await runSmoke(await optionsWithKey(), fetchImpl);
    return { line: byName(report.results, "docs"), sent };
  }

  it("a same-origin script is fetched and must be JavaScript", async () => {
    const page = '<script src="/assets/reference.js"></script>';
    const ok = await docs(page, new Set(["/assets/reference.js"]));
    expect(ok.line).toEqual({
      outcome: "ok",
      name: "GET /v1/docs and its scripts",
      detail: "200 text/html; 1 same-origin script(s) loaded: /assets/reference.js (24 bytes)",
    });
    expect(ok.sent.find((s) => s.url.endsWith("/reference.js"))?.authorization).toBeNull();
    const html = await docs(page, new Set(["/assets/reference.js"]), (req, res) =>
      req.url.endsWith(".js") ? withHeaders(res, { "Content-Type": "text/html" }) : res,
    );
    expect(html.line?.detail).toBe("docs script /assets/reference.js: Content-Type text/html");
    const missing = await docs(page);
    expect(missing.line?.outcome).toBe("FAIL");
    expect(missing.line?.detail).toMatch(
      /^docs script \/assets\/reference\.js: expected 200, got 404/,
    );
  });

  it("a script from another origin fails, and is never fetched", async () => {
    const page = '<script src="https://cdn.example/reference.js"></script>';
    const strict = await docs(page);
    expect(strict.line).toMatchObject({
      outcome: "FAIL",
      detail:
        "docs: the page loads the script https://cdn.example/reference.js from another origin",
    });
    expect(strict.sent.some((s) => s.url.startsWith("https://cdn.example"))).toBe(false);
  });

  it("a page without a script, or with a stylesheet from another origin, fails", async () => {
    expect((await docs("<p>no reference</p>")).line?.detail).toBe(
      "docs: the page loads no script (no <script src>)",
    );
    const css = await docs(
      '<link rel="stylesheet" href="//fonts.example/a.css"><script src="/r.js"></script>',
      new Set(["/r.js"]),
    );
    expect(css.line?.detail).toBe(
      "docs: the page loads https://fonts.example/a.css from another origin",
    );
    const icon = await docs(
      '<link rel="icon" href="data:,"><script src="/r.js"></script>',
      new Set(["/r.js"]),
    );
    expect(icon.line?.outcome).toBe("ok");
  });
});
