// The smoke test's checks: a deployment answered the way a client expects, in a few
// requests. No Node APIs (only fetch, URL, Headers), so the tests run these very
// checks in workerd against the worker itself (test/smoke.test.ts), and
// scripts/smoke.ts runs them in Node against a deployment.
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "../src/config.ts";

export interface SmokeOptions {
  /** The deployment's origin, e.g. https://api.petstore.example.com. */
  base: string;
  /** Sent as `Authorization: Bearer` on the requests that need a key; never reported. */
  apiKey: string;
  /** Adds createPet with an Idempotency-Key and its replay. */
  write: boolean;
  timeoutMs: number;
  /** Pins every request to one version of a gradual deployment. */
  pin: { worker: string; version: string } | undefined;
  corsOrigin: string;
}

export type Outcome = "ok" | "FAIL";

export interface CheckResult {
  outcome: Outcome;
  name: string;
  detail: string;
}

export interface SmokeReport {
  results: CheckResult[];
  passed: number;
  failed: number;
  /** Checks not run because the deployment stopped answering. */
  skipped: number;
}

/** What Node's fetch reports for a deployment that is not there, in words. */
const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused: nothing listens there",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be resolved",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the host is unreachable",
};

/** A check that did not hold: its message is the report line. */
class CheckFailure extends Error {}

/** No HTTP answer at all (connection refused, DNS, TLS, timeout): later checks are moot. */
class NoAnswer extends Error {}

function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailure(message);
}

/** One `Link` header value (RFC 8288) as targets and their relation types. */
export function parseLinkHeader(value: string | null): Array<{ href: string; rels: string[] }> {
  const links: Array<{ href: string; rels: string[] }> = [];
  if (!value) return links;
  for (const match of value.matchAll(/<([^>]*)>([^,<]*)/g)) {
    const params = match[2] ?? "";
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i.exec(params);
    const rels = (rel?.[1] ?? rel?.[2] ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    links.push({ href: match[1] as string, rels });
  }
  return links;
}

const ENTITIES: Record<string, string> = { amp: "&", quot: '"', apos: "'", lt: "<", gt: ">" };

function attribute(attributes: string, name: string): string | undefined {
  const match = new RegExp(
    `(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'=<>\`]+))`,
    "i",
  ).exec(attributes);
  const raw = match?.[1] ?? match?.[2] ?? match?.[3];
  return raw?.replace(/&(amp|quot|apos|lt|gt);/g, (_, entity: string) => ENTITIES[entity] ?? "");
}

/**
 * What an HTML page makes a browser load: `<script src>` (scripts) and the `href` of
 * `<link>` elements that fetch (stylesheets, preloads, icons). Comments are ignored.
 */
export function pageResources(html: string): { scripts: string[]; links: string[] } {
  const page = html.replace(/<!--[\s\S]*?-->/g, "");
  const scripts: string[] = [];
  for (const match of page.matchAll(/<script\b([^>]*)>/gi)) {
    const src = attribute(match[1] ?? "", "src");
    if (src !== undefined) scripts.push(src);
  }
  const links: string[] = [];
  for (const match of page.matchAll(/<link\b([^>]*)>/gi)) {
    const rel = (attribute(match[1] ?? "", "rel") ?? "").toLowerCase();
    const href = attribute(match[1] ?? "", "href");
    if (href !== undefined && /\b(stylesheet|preload|modulepreload|icon)\b/.test(rel)) {
      links.push(href);
    }
  }
  return { scripts, links };
}

interface Answer {
  response: Response;
  text: string;
}

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

function isPet(value: unknown): value is Pet {
  const pet = value as Pet | null;
  return (
    typeof pet === "object" &&
    pet !== null &&
    Object.keys(pet).sort().join() === "categoryId,id,name,status" &&
    Number.isSafeInteger(pet.id) &&
    typeof pet.name === "string" &&
    Number.isSafeInteger(pet.categoryId) &&
    ["available", "pending", "sold"].includes(pet.status)
  );
}

function json(answer: Answer, what: string): unknown {
  expect(
    /^application\/json\b/i.test(answer.response.headers.get("Content-Type") ?? ""),
    `${what}: Content-Type ${answer.response.headers.get("Content-Type")}, not application/json`,
  );
  try {
    return JSON.parse(answer.text);
  } catch {
    throw new CheckFailure(`${what}: the body is not JSON`);
  }
}

/** `401 unauthorized: The API key ...`: the status and, for an Error body, its code and message. */
function describe(answer: Answer): string {
  let error = "";
  try {
    const body = JSON.parse(answer.text) as { code?: unknown; message?: unknown };
    if (typeof body.code === "string") error = ` ${body.code}: ${String(body.message)}`;
  } catch {
    error = answer.text ? ` ${JSON.stringify(answer.text.slice(0, 120))}` : "";
  }
  return `${answer.response.status}${error}`;
}

function expectStatus(answer: Answer, status: number, what: string, hint = ""): void {
  expect(
    answer.response.status === status,
    `${what}: expected ${status}, got ${describe(answer)}${hint}`,
  );
}

export const EXPECTED_DEPRECATION = `@${GET_PET_DEPRECATED_AT}`;
export const EXPECTED_SUNSET = new Date(GET_PET_SUNSET_AT * 1000).toUTCString();

interface Check {
  name: string;
  /** Answers the report's detail. */
  run(): Promise<{ detail: string }>;
}

/**
 * Runs every check in order and reports each as it ends. `fetchImpl` is the global
 * fetch in Node; the tests pass the worker's own. Never throws for a deployment's
 * answer: a check that does not hold is a FAIL line.
 */
export async function runSmoke(
  options: SmokeOptions,
  fetchImpl: typeof fetch,
  onResult: (result: CheckResult) => void = () => {},
): Promise<SmokeReport> {
  const redact = (text: string) => text.split(options.apiKey).join("[SMOKE_API_KEY]");

  async function send(
    method: string,
    target: string,
    init: { key?: boolean; headers?: Record<string, string>; body?: string } = {},
  ): Promise<Answer> {
    const url = new URL(target, options.base);
    // Every request goes to the deployment under test, and nowhere else.
    expect(url.origin === options.base, `refused to send a request to ${url.origin}`);
    const headers = new Headers(init.headers);
    if (init.key) headers.set("Authorization", `Bearer ${options.apiKey}`);
    if (options.pin) {
      headers.set(
        "Cloudflare-Workers-Version-Overrides",
        `${options.pin.worker}="${options.pin.version}"`,
      );
    }
    let response: Response;
    try {
      response = await fetchImpl(url.href, {
        method,
        headers,
        body: init.body,
        // An API never redirects; following one could carry the key elsewhere.
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (err) {
      const error = err as Error & { cause?: { code?: string; message?: string } };
      const code = error.cause?.code ?? "";
      const reason =
        error.name === "TimeoutError" || error.name === "AbortError"
          ? `no answer within ${options.timeoutMs / 1000} s`
          : (NETWORK_ERRORS[code] ?? error.cause?.message ?? error.message);
      throw new NoAnswer(`${method} ${url.href}: ${reason}${code ? ` (${code})` : ""}`);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      throw new NoAnswer(`${method} ${url.href}: the body broke off (${(err as Error).message})`);
    }
    expect(
      response.status < 300 || response.status >= 400,
      `${method} ${url.pathname}: a ${response.status} redirect to ${response.headers.get("Location")}`,
    );
    return { response, text };
  }

  const created: { pet?: Pet; location?: string; body?: string } = {};
  let firstListed: Pet | undefined;
  const idempotencyKey = `smoke-${crypto.randomUUID()}`;
  const newPet = { name: `smoke test ${new Date().toISOString()}`, categoryId: 1 };

  const checks: Check[] = [
    {
      name: "GET /",
      async run() {
        const answer = await send("GET", "/");
        expectStatus(answer, 200, "GET /");
        const body = json(answer, "GET /") as { name?: unknown; version?: unknown };
        expect(typeof body.name === "string", "GET /: no name in the body");
        expect(answer.response.headers.get("X-Request-Id"), "GET /: no X-Request-Id");
        return { detail: `200 ${body.name} ${String(body.version)}` };
      },
    },
    {
      name: "GET /v1/openapi.json",
      async run() {
        const answer = await send("GET", "/v1/openapi.json");
        expectStatus(answer, 200, "openapi.json");
        const doc = json(answer, "openapi.json") as { openapi?: unknown; paths?: object };
        expect(
          typeof doc.openapi === "string" && doc.openapi.startsWith("3.1."),
          `openapi.json: openapi is ${JSON.stringify(doc.openapi)}, not 3.1.x`,
        );
        const paths = Object.keys(doc.paths ?? {});
        expect(
          paths.includes("/pets") && paths.includes("/pets/{petId}"),
          `openapi.json: paths are ${paths.join(", ")}`,
        );
        return { detail: `200 OpenAPI ${doc.openapi}, ${paths.length} paths` };
      },
    },
    {
      name: "GET /v1/docs and its scripts",
      async run() {
        const pageUrl = new URL("/v1/docs", options.base);
        const answer = await send("GET", pageUrl.href);
        expectStatus(answer, 200, "docs");
        expect(
          /^text\/html\b/i.test(answer.response.headers.get("Content-Type") ?? ""),
          `docs: Content-Type ${answer.response.headers.get("Content-Type")}, not text/html`,
        );
        const { scripts, links } = pageResources(answer.text);
        expect(scripts.length > 0, "docs: the page loads no script (no <script src>)");
        for (const href of links) {
          const url = new URL(href, pageUrl);
          // A data: URL (the page's empty icon) is no request to anyone.
          if (url.protocol === "data:") continue;
          expect(
            url.origin === pageUrl.origin,
            `docs: the page loads ${url.href} from another origin`,
          );
        }
        const loaded: string[] = [];
        for (const src of scripts) {
          const url = new URL(src, pageUrl);
          expect(
            url.origin === pageUrl.origin,
            `docs: the page loads the script ${url.href} from another origin`,
          );
          const script = await send("GET", url.href);
          expectStatus(script, 200, `docs script ${url.pathname}`);
          expect(
            /^(text|application)\/(javascript|ecmascript)\b/i.test(
              script.response.headers.get("Content-Type") ?? "",
            ),
            `docs script ${url.pathname}: Content-Type ${script.response.headers.get("Content-Type")}`,
          );
          expect(script.text.length > 0, `docs script ${url.pathname}: empty`);
          loaded.push(`${url.pathname} (${script.text.length} bytes)`);
        }
        return {
          detail: `200 text/html; ${loaded.length} same-origin script(s) loaded: ${loaded.join(", ")}`,
        };
      },
    },
    {
      name: "GET /v1/pets without a key",
      async run() {
        const answer = await send("GET", "/v1/pets");
        expectStatus(answer, 401, "no key");
        const challenge = answer.response.headers.get("WWW-Authenticate") ?? "";
        expect(
          challenge.startsWith('Bearer realm="petstore"'),
          `no key: WWW-Authenticate is ${JSON.stringify(challenge)}`,
        );
        const body = json(answer, "no key") as { code?: unknown };
        expect(body.code === "unauthorized", `no key: code ${JSON.stringify(body.code)}`);
        return { detail: `401 unauthorized, WWW-Authenticate: ${challenge}` };
      },
    },
    {
      name: "CORS preflight OPTIONS /v1/pets",
      async run() {
        const answer = await send("OPTIONS", "/v1/pets", {
          headers: {
            Origin: options.corsOrigin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
          },
        });
        expect(answer.response.ok, `preflight: expected 2xx, got ${describe(answer)}`);
        const h = answer.response.headers;
        const origin = h.get("Access-Control-Allow-Origin");
        expect(
          origin === "*" || origin === options.corsOrigin,
          `preflight: Access-Control-Allow-Origin is ${JSON.stringify(origin)} for ${options.corsOrigin}`,
        );
        const methods = (h.get("Access-Control-Allow-Methods") ?? "").toUpperCase();
        expect(/\bPOST\b/.test(methods), `preflight: Access-Control-Allow-Methods ${methods}`);
        const allowed = (h.get("Access-Control-Allow-Headers") ?? "").toLowerCase();
        for (const header of ["authorization", "content-type", "idempotency-key"]) {
          expect(
            allowed.split(/\s*,\s*/).includes(header),
            `preflight: Access-Control-Allow-Headers lacks ${header}`,
          );
        }
        return { detail: `${answer.response.status}, origin ${origin}, methods ${methods}` };
      },
    },
  ];

  if (options.write) {
    const post = () =>
      send("POST", "/v1/pets", {
        key: true,
        headers: { "Content-Type": "application/json", "Idempotency-Key": idempotencyKey },
        body: JSON.stringify(newPet),
      });
    checks.push(
      {
        name: "POST /v1/pets with an Idempotency-Key",
        async run() {
          const answer = await post();
          expectStatus(answer, 201, "create", " (--write needs a key with pets:write)");
          const pet = json(answer, "create");
          expect(isPet(pet), `create: the body is not a Pet: ${answer.text.slice(0, 200)}`);
          expect(
            pet.name === newPet.name && pet.categoryId === 1 && pet.status === "available",
            `create: the pet is not the one sent: ${answer.text.slice(0, 200)}`,
          );
          const location = answer.response.headers.get("Location");
          expect(location === `/v1/pets/${pet.id}`, `create: Location is ${location}`);
          expect(
            answer.response.headers.get("Idempotent-Replayed") !== "true",
            "create: the first request says Idempotent-Replayed: true",
          );
          Object.assign(created, { pet, location, body: answer.text });
          return { detail: `201 pet ${pet.id}, Location ${location}` };
        },
      },
      {
        name: "POST /v1/pets replayed with the same key",
        async run() {
          expect(created.pet, "replay: nothing to replay (the create failed)");
          const answer = await post();
          expectStatus(answer, 201, "replay");
          const replayed = answer.response.headers.get("Idempotent-Replayed");
          expect(replayed === "true", `replay: Idempotent-Replayed is ${replayed}`);
          expect(
            JSON.stringify(json(answer, "replay")) === JSON.stringify(created.pet),
            `replay: a different body: ${answer.text.slice(0, 200)}`,
          );
          const location = answer.response.headers.get("Location");
          expect(location === created.location, `replay: Location ${location}`);
          return { detail: `201 Idempotent-Replayed: true, same pet ${created.pet.id}` };
        },
      },
    );
  }

  checks.push(
    {
      name: "GET /v1/pets?limit=1 and its next page",
      async run() {
        const first = await send("GET", "/v1/pets?limit=1", { key: true });
        expectStatus(first, 200, "list");
        const page = json(first, "list");
        expect(
          Array.isArray(page) && page.length <= 1 && page.every(isPet),
          `list: not an array of at most 1 Pet: ${first.text.slice(0, 200)}`,
        );
        firstListed = page[0];
        const next = parseLinkHeader(first.response.headers.get("Link")).find((l) =>
          l.rels.includes("next"),
        );
        if (!next) {
          return {
            detail: `200, ${page.length} pet(s), no next page (fewer than 2 pets: nothing to follow)`,
          };
        }
        expect(page.length === 1, 'list: an empty page with a rel="next" link');
        const url = new URL(next.href, new URL("/v1/pets?limit=1", options.base));
        expect(
          url.origin === options.base && url.pathname === "/v1/pets",
          `list: rel="next" points to ${url.href}, not ${options.base}/v1/pets`,
        );
        expect(url.searchParams.has("cursor"), `list: rel="next" has no cursor: ${url.href}`);
        const second = await send("GET", url.href, { key: true });
        expectStatus(second, 200, "next page");
        const nextPage = json(second, "next page");
        expect(
          Array.isArray(nextPage) && nextPage.length === 1 && nextPage.every(isPet),
          `next page: not an array of 1 Pet: ${second.text.slice(0, 200)}`,
        );
        const [a, b] = [page[0] as Pet, nextPage[0] as Pet];
        expect(b.id > a.id, `next page: pet ${b.id} does not follow pet ${a.id}`);
        return { detail: `200 pet ${a.id}; Link rel="next" followed: 200 pet ${b.id}` };
      },
    },
    {
      name: "GET /v1/pets/{petId} deprecation headers",
      async run() {
        const id = created.pet?.id ?? firstListed?.id ?? 1;
        const answer = await send("GET", `/v1/pets/${id}`, { key: true });
        const known = created.pet !== undefined || firstListed !== undefined;
        if (known) expectStatus(answer, 200, `getPet ${id}`);
        else
          expect(
            answer.response.status === 200 || answer.response.status === 404,
            `getPet ${id}: expected 200 or 404, got ${describe(answer)}`,
          );
        const h = answer.response.headers;
        expect(
          h.get("Deprecation") === EXPECTED_DEPRECATION,
          `getPet: Deprecation is ${JSON.stringify(h.get("Deprecation"))}, not ${EXPECTED_DEPRECATION}`,
        );
        expect(
          h.get("Sunset") === EXPECTED_SUNSET,
          `getPet: Sunset is ${JSON.stringify(h.get("Sunset"))}, not ${EXPECTED_SUNSET}`,
        );
        const links = parseLinkHeader(h.get("Link"));
        expect(
          links.some((l) => l.href === "/v1/pets" && l.rels.includes("successor-version")),
          `getPet: no Link </v1/pets>; rel="successor-version" in ${JSON.stringify(h.get("Link"))}`,
        );
        expect(
          links.some((l) => l.rels.includes("deprecation")),
          `getPet: no Link rel="deprecation" in ${JSON.stringify(h.get("Link"))}`,
        );
        if (answer.response.status === 200) {
          const pet = json(answer, "getPet");
          expect(
            isPet(pet) && pet.id === id,
            `getPet: not pet ${id}: ${answer.text.slice(0, 200)}`,
          );
        }
        return { detail: `${answer.response.status} pet ${id}, Deprecation, Sunset and Link` };
      },
    },
  );

  const report: SmokeReport = { results: [], passed: 0, failed: 0, skipped: 0 };
  const record = (result: CheckResult) => {
    const clean = { ...result, detail: redact(result.detail) };
    report.results.push(clean);
    if (clean.outcome === "ok") report.passed++;
    else report.failed++;
    onResult(clean);
  };
  for (const [index, check] of checks.entries()) {
    try {
      const { detail } = await check.run();
      record({ outcome: "ok", name: check.name, detail });
    } catch (err) {
      if (err instanceof CheckFailure) {
        record({ outcome: "FAIL", name: check.name, detail: err.message });
      } else if (err instanceof NoAnswer) {
        report.skipped = checks.length - index - 1;
        record({ outcome: "FAIL", name: check.name, detail: `no answer: ${err.message}` });
        break;
      } else {
        throw err;
      }
    }
  }
  return report;
}
