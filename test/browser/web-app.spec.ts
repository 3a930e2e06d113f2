// A web app on another origin calls the API from the browser: fetch() as an app calls it,
// reading only what CORS lets a page read. The app's page is a route Playwright fulfils
// on another port of 127.0.0.1 (another origin), so no server of ours serves it.
import { expect, type Page, test } from "@playwright/test";
import LinkHeader from "http-link-header";
import { LOCAL_DEV_KEY } from "../../src/auth/keys.ts";
import type { Pet } from "../../src/pets/schemas.ts";
import { npm } from "../live/dev-server.ts";

const APP = "http://127.0.0.1:8793/";

/** A request of the app: `body` is sent as it is (set Content-Type yourself). */
type AppRequest = {
  method?: string;
  key?: string;
  headers?: Record<string, string>;
  body?: string;
};
/** What a web app sees of one response: status, the headers CORS lets it read, the body. */
type Seen = Awaited<ReturnType<typeof appFetch>>;

test.describe.configure({ mode: "serial" });

let page: Page;
let webKey: string;
const created: Pet[] = [];

test.beforeAll(async () => {
  const create = ["keys", "--", "create", "--label", "web", "--scope", "pets:read"];
  const { stdout } = await npm([...create, "--persist-to", process.env.BROWSER_D1 as string]);
  // `npm run keys -- create` prints the new key alone on its last line.
  webKey = stdout.trimEnd().split("\n").at(-1) ?? "";
});

test.beforeEach(async ({ page: appPage }) => {
  page = appPage;
  await page.route(APP, (route) =>
    route.fulfill({ contentType: "text/html", body: "<!doctype html><title>web app</title>" }),
  );
  await page.goto(APP);
});

/** fetch() from the app's page, exactly as a web app calls the API. */
function appFetch(path: string, request: AppRequest = {}) {
  return page.evaluate(
    async ({ url, request }) => {
      const headers: Record<string, string> = { ...request.headers };
      if (request.key) headers.Authorization = `Bearer ${request.key}`;
      const response = await fetch(url, {
        method: request.method ?? "GET",
        headers,
        body: request.body,
        cache: "no-store",
      });
      const text = await response.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON: left null, the checks say so
      }
      const seen: Record<string, string> = Object.fromEntries(response.headers);
      return { status: response.status, headers: seen, text, json };
    },
    { url: new URL(path, test.info().project.use.baseURL).href, request },
  );
}

const post = (body: string, key = LOCAL_DEV_KEY, headers = {}) =>
  appFetch("/v1/pets", {
    method: "POST",
    key,
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });

/** An Error response as the contract shapes it, read from the other origin. */
function expectError(seen: Seen, status: number, code: string): void {
  expect(seen.status, seen.text).toBe(status);
  expect(seen.headers["content-type"]).toMatch(/^application\/json/);
  expect(seen.json).toMatchObject({ code, status, message: expect.any(String) });
  expect(seen.headers["x-request-id"], "X-Request-Id is readable").toBeTruthy();
}

test("createPet with an Idempotency-Key, then its replay", async () => {
  const name = `browser pet ${Date.now()}`;
  const headers = { "Idempotency-Key": `browser-${Date.now()}` };
  const first = await post(JSON.stringify({ name, categoryId: 7 }), LOCAL_DEV_KEY, headers);
  const pet = first.json as Pet;
  expect(first.status, first.text).toBe(201);
  expect(pet).toMatchObject({ name, status: "available" });
  expect(first.headers.location).toBe(`/v1/pets/${pet.id}`);
  expect(first.headers["x-d1-bookmark"], "x-d1-bookmark is readable").toBeTruthy();
  expect(first.headers["idempotent-replayed"]).toBeUndefined();
  const replay = await post(JSON.stringify({ name, categoryId: 7 }), LOCAL_DEV_KEY, headers);
  expect(replay.status).toBe(201);
  expect(replay.headers["idempotent-replayed"]).toBe("true");
  expect(replay.headers.location).toBe(first.headers.location);
  expect(replay.text).toBe(first.text);
  created.push(pet);
});

test('listPets: Link rel="next" followed to the last page', async () => {
  for (const n of [1, 2, 3]) {
    const more = await post(JSON.stringify({ name: `browser page pet ${n}`, categoryId: 7 }));
    expect(more.status).toBe(201);
    created.push(more.json as Pet);
  }
  const ids: number[] = [];
  let path: string | undefined = "/v1/pets?limit=2";
  for (let pages = 0; path; pages++) {
    expect(pages, "more than 50 pages").toBeLessThan(50);
    const seen: Seen = await appFetch(path, { key: LOCAL_DEV_KEY });
    expect(seen.status).toBe(200);
    expect((seen.json as Pet[]).length).toBeLessThanOrEqual(2);
    ids.push(...(seen.json as Pet[]).map((p) => p.id));
    const next = LinkHeader.parse(seen.headers.link ?? "").rel("next")[0]?.uri;
    if (pages === 0) expect(next, 'the first page has a readable Link rel="next"').toBeTruthy();
    path = next;
  }
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  for (const pet of created) expect(ids.filter((id) => id === pet.id)).toHaveLength(1);
});

test("getPet: the deprecation headers are readable", async () => {
  const seen = await appFetch(`/v1/pets/${created[0]?.id}`, { key: LOCAL_DEV_KEY });
  expect(seen.status).toBe(200);
  expect(seen.text).toBe(JSON.stringify(created[0]));
  expect(seen.headers.deprecation).toMatch(/^@\d+$/);
  expect(seen.headers.sunset).toBe("Thu, 05 Dec 2030 00:00:00 GMT");
  expect(seen.headers.link).toContain('</v1/pets>; rel="successor-version"');
  expect(seen.headers.link).toContain('rel="deprecation"');
});

test("401: the Error and WWW-Authenticate", async () => {
  const none = await appFetch("/v1/pets");
  expectError(none, 401, "unauthorized");
  expect(none.headers["www-authenticate"]).toBe('Bearer realm="petstore"');
  const wrong = await appFetch("/v1/pets", { key: "psk_not-a-key" });
  expectError(wrong, 401, "unauthorized");
  expect(wrong.headers["www-authenticate"]).toContain('error="invalid_token"');
});

// PUT: a method the table gives no path (the preflight grants whatever method is asked).
test("405: PUT on a pet reaches the Error and Allow (the preflight is granted)", async () => {
  const seen = await appFetch(`/v1/pets/${created[0]?.id}`, {
    method: "PUT",
    key: LOCAL_DEV_KEY,
  });
  expectError(seen, 405, "method_not_allowed");
  expect(seen.headers.allow).toBe("GET, HEAD, PATCH, DELETE, OPTIONS");
});

test("400, 413, 415: invalid parameter, body, JSON; too large; not JSON", async () => {
  expectError(await appFetch("/v1/pets?limit=0", { key: LOCAL_DEV_KEY }), 400, "invalid_parameter");
  expectError(await post(JSON.stringify({ name: "", categoryId: 1 })), 400, "validation_failed");
  expectError(await post("{"), 400, "invalid_json");
  const large = JSON.stringify({ name: "x".repeat(17_000), categoryId: 1 });
  expectError(await post(large), 413, "payload_too_large");
  const text = await appFetch("/v1/pets", {
    method: "POST",
    key: LOCAL_DEV_KEY,
    headers: { "Content-Type": "text/plain" },
    body: "name=Rex",
  });
  expectError(text, 415, "unsupported_media_type");
});

test("403: a read-only key reads, and cannot create", async () => {
  const read = await appFetch("/v1/pets?limit=1", { key: webKey });
  expect(read.status).toBe(200);
  const seen = await post(JSON.stringify({ name: "web", categoryId: 1 }), webKey);
  expectError(seen, 403, "insufficient_scope");
  expect(seen.headers["www-authenticate"]).toBe(
    'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"',
  );
});

test("ETag: revalidation with If-None-Match responds with 304", async () => {
  for (const path of [`/v1/pets/${created[0]?.id}`, "/v1/pets?limit=1"]) {
    const first = await appFetch(path, { key: LOCAL_DEV_KEY });
    expect(first.status).toBe(200);
    // A strong tag: a pet's own (its version, the one If-Match takes) or a page's digest.
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_.-]+"$/);
    expect(first.headers["cache-control"]).toBe("private, no-cache");
    const again = await appFetch(path, {
      key: LOCAL_DEV_KEY,
      headers: { "If-None-Match": `"other", W/${first.headers.etag}` },
    });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    expect(again.headers.etag).toBe(first.headers.etag);
    // The headers that describe the response stay readable on the 304.
    expect(again.headers.link).toBe(first.headers.link);
  }
});
