// The smoke test: a running deployment responds the way a client expects, in a few
// requests (read-only unless --write, which creates a pet, changes it and removes it, so it
// leaves nothing behind). Run through `npm run smoke -- --base URL`
// (scripts/smoke.ts), which checks the options and provides them here; the key comes
// from SMOKE_API_KEY. Every request goes to --base and nowhere else (smoke-client.ts),
// but those to the developer platform (--platform), which never carry the key.
import LinkHeader from "http-link-header";
import { parse as parseHtml } from "node-html-parser";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "../../src/config.ts";
import { type Pet, PetSchema, PetsSchema } from "../../src/pets/schemas.ts";
import { type SmokeResponse, smokeClient } from "./smoke-client.ts";

const options = inject("smoke");

const send = smokeClient(options, process.env.SMOKE_API_KEY ?? "");

/** The response's JSON body; it must have this status and be application/json. */
function json(response: SmokeResponse, status: number): unknown {
  expect(response.status, response.text.slice(0, 300)).toBe(status);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json\b/);
  return JSON.parse(response.text);
}

const links = (response: SmokeResponse) => LinkHeader.parse(response.headers.get("Link") ?? "");

/** The response's `x-d1-bookmark`, to send back: a read after it sees at least what it did. */
function bookmark(response: SmokeResponse): Record<string, string> {
  const sent = response.headers.get("x-d1-bookmark");
  expect(sent, "no x-d1-bookmark").toBeTruthy();
  return { "x-d1-bookmark": sent as string };
}

let root: SmokeResponse;
beforeAll(async () => {
  // Nothing responding ends the run here, with one line instead of a failure per check.
  root = await send("GET", "/").catch(
    (err: Error & { cause?: { code?: string; message?: string } }) => {
      throw new Error(
        `no response from ${options.base}: ${err.cause?.code ?? err.cause?.message ?? err.message}`,
      );
    },
  );
});

describe(`smoke test of ${options.base}${options.write ? " (--write)" : ""}`, () => {
  const created: { pet?: Pet; location?: string | null; etag?: string | null } = {};
  let listed: Pet | undefined;

  it("GET / names the service", () => {
    expect(json(root, 200)).toMatchObject({ name: expect.any(String) });
    expect(root.headers.get("X-Request-Id")).toBeTruthy();
  });

  it("GET /v1/openapi.json is OpenAPI 3.1 with the pet paths", async () => {
    const doc = json(await send("GET", "/v1/openapi.json"), 200) as {
      openapi: string;
      paths: object;
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/pets", "/pets/{petId}"]));
  });

  it("GET /v1/docs loads its scripts from this origin, each JavaScript", async () => {
    const page = await send("GET", "/v1/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toMatch(/^text\/html\b/);
    const html = parseHtml(page.text);
    const at = (href: string | undefined) => new URL(href ?? "", `${options.base}/v1/docs`);
    const scripts = html.querySelectorAll("script[src]").map((s) => at(s.getAttribute("src")));
    expect(scripts.length, "the page loads no script").toBeGreaterThan(0);
    const fetched = ["stylesheet", "preload", "modulepreload", "icon"].map(
      (r) => `link[rel~=${r}]`,
    );
    for (const link of html.querySelectorAll(fetched.join(", "))) {
      const url = at(link.getAttribute("href"));
      // A data: URL (the page's empty icon) is no request to anyone.
      if (url.protocol !== "data:") expect(url.origin, url.href).toBe(options.base);
    }
    for (const src of scripts) {
      const script = await send("GET", src.href);
      expect(script.status, src.href).toBe(200);
      expect(script.headers.get("Content-Type")).toMatch(/^(text|application)\/javascript\b/);
      expect(script.text.length).toBeGreaterThan(0);
    }
  });

  it("GET /v1/pets without a key: 401 with a Bearer challenge", async () => {
    const response = await send("GET", "/v1/pets");
    expect(json(response, 401)).toMatchObject({ code: "unauthorized", status: 401 });
    expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="petstore"/);
  });

  it("a CORS preflight of a create is granted", async () => {
    const response = await send("OPTIONS", "/v1/pets", {
      headers: {
        Origin: options.corsOrigin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
      },
    });
    expect(response.status).toBeGreaterThanOrEqual(200);
    expect(response.status).toBeLessThan(300);
    expect(["*", options.corsOrigin]).toContain(
      response.headers.get("Access-Control-Allow-Origin"),
    );
    expect(response.headers.get("Access-Control-Allow-Methods")).toMatch(/\bPOST\b/i);
    const allowed = (response.headers.get("Access-Control-Allow-Headers") ?? "").toLowerCase();
    expect(allowed.split(/\s*,\s*/)).toEqual(
      expect.arrayContaining(["authorization", "content-type", "idempotency-key"]),
    );
  });

  if (options.write) {
    const newPet = { name: `smoke test ${new Date().toISOString()}`, categoryId: 1 };
    const post = (idempotencyKey: string) =>
      send("POST", "/v1/pets", {
        key: true,
        headers: { "Content-Type": "application/json", "Idempotency-Key": idempotencyKey },
        body: JSON.stringify(newPet),
      });
    const idempotencyKey = `smoke-${crypto.randomUUID()}`;

    it("POST /v1/pets with an Idempotency-Key creates the pet (the key needs pets:write)", async () => {
      const response = await post(idempotencyKey);
      const pet = PetSchema.parse(json(response, 201));
      expect(pet).toMatchObject({ ...newPet, status: "available" });
      expect(response.headers.get("Location")).toBe(`/v1/pets/${pet.id}`);
      expect(response.headers.get("Idempotent-Replayed")).not.toBe("true");
      expect(response.headers.get("ETag")).toMatch(/^"[^"]+"$/);
      Object.assign(created, {
        pet,
        location: response.headers.get("Location"),
        etag: response.headers.get("ETag"),
      });
    });

    it("the same POST again is replayed: same pet, Idempotent-Replayed: true", async () => {
      expect(created.pet, "the create failed: nothing to replay").toBeDefined();
      const response = await post(idempotencyKey);
      expect(json(response, 201)).toEqual(created.pet);
      expect(response.headers.get("Idempotent-Replayed")).toBe("true");
      expect(response.headers.get("Location")).toBe(created.location);
    });

    it("PATCH /v1/pets/{petId} with If-Match from the create's ETag changes it, and its bookmark reads the change", async () => {
      expect(created.pet, "the create failed: nothing to change").toBeDefined();
      const pet = created.pet as Pet;
      const change = { name: `${newPet.name} (changed)`, status: "pending" as const };
      const response = await send("PATCH", `/v1/pets/${pet.id}`, {
        key: true,
        headers: {
          "Content-Type": "application/merge-patch+json",
          "If-Match": created.etag ?? "",
        },
        body: JSON.stringify(change),
      });
      expect(PetSchema.parse(json(response, 200))).toEqual({ ...pet, ...change });
      const etag = response.headers.get("ETag");
      expect(etag).toMatch(/^"[^"]+"$/);
      expect(etag).not.toBe(created.etag);
      const read = await send("GET", `/v1/pets/${pet.id}`, {
        key: true,
        headers: bookmark(response),
      });
      expect(json(read, 200)).toEqual({ ...pet, ...change });
      expect(read.headers.get("ETag")).toBe(etag);
    });
  }

  it('GET /v1/pets?limit=1 and its Link rel="next" page', async (context) => {
    const first = await send("GET", "/v1/pets?limit=1", { key: true });
    const page = PetsSchema.parse(json(first, 200));
    expect(page.length).toBeLessThanOrEqual(1);
    listed = page[0];
    const next = links(first).rel("next")[0];
    if (!next) return context.skip("fewer than 2 pets: no next page to follow");
    const url = new URL(next.uri, `${options.base}/v1/pets`);
    expect(`${url.origin}${url.pathname}`).toBe(`${options.base}/v1/pets`);
    expect(url.searchParams.has("cursor")).toBe(true);
    const following = PetsSchema.parse(json(await send("GET", url.href, { key: true }), 200));
    expect(following).toHaveLength(1);
    expect(following[0]?.id).toBeGreaterThan(page[0]?.id as number);
  });

  const metadataUrl = `${options.base}/.well-known/oauth-protected-resource/mcp`;
  const mcp = (body: unknown, init: { key?: boolean; headers?: Record<string, string> } = {}) =>
    send("POST", "/mcp", {
      ...init,
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
        ...init.headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...(body as object) }),
    });

  it("MCP: /mcp without a key is 401 pointing at its Protected Resource Metadata", async () => {
    const response = await mcp({ method: "tools/list" });
    expect(json(response, 401)).toMatchObject({ code: "unauthorized", status: 401 });
    expect(response.headers.get("WWW-Authenticate")).toContain(
      `resource_metadata="${metadataUrl}"`,
    );
    const metadata = json(await send("GET", metadataUrl), 200) as Record<string, unknown>;
    expect(metadata.resource).toBe(`${options.base}/mcp`);
    expect(metadata.authorization_servers).toEqual(
      options.platform ? [options.platform] : [expect.any(String)],
    );
  });

  it("MCP: a web page's Origin is refused with 403", async () => {
    const response = await mcp(
      { method: "tools/list" },
      { headers: { Origin: "https://attacker.example" } },
    );
    expect(response.status).toBe(403);
  });

  it("MCP: the key lists listPets and calls it", async () => {
    const listed = json(await mcp({ method: "tools/list" }, { key: true }), 200) as {
      result: { tools: Array<{ name: string }> };
    };
    expect(listed.result.tools.map((t) => t.name)).toContain("listPets");
    const called = json(
      await mcp(
        { method: "tools/call", params: { name: "listPets", arguments: { limit: 1 } } },
        { key: true },
      ),
      200,
    ) as { result: { isError?: boolean; structuredContent: { items: unknown } } };
    expect(called.result.isError).toBeUndefined();
    expect(PetsSchema.parse(called.result.structuredContent.items).length).toBeLessThanOrEqual(1);
  });

  it("GET /v1/pets/{petId} carries its deprecation headers", async (context) => {
    const pet = created.pet ?? listed;
    if (!pet) return context.skip("no pet to fetch: the deployment holds none");
    const response = await send("GET", `/v1/pets/${pet.id}`, { key: true });
    expect(PetSchema.parse(json(response, 200)).id).toBe(pet.id);
    expect(response.headers.get("Deprecation")).toBe(`@${GET_PET_DEPRECATED_AT}`);
    expect(response.headers.get("Sunset")).toBe(new Date(GET_PET_SUNSET_AT * 1000).toUTCString());
    expect(links(response).rel("successor-version")[0]?.uri).toBe("/v1/pets");
    expect(links(response).rel("deprecation")).toHaveLength(1);
  });

  if (options.write) {
    it("DELETE /v1/pets/{petId} removes the created pet: 204, then 404 with its bookmark", async () => {
      expect(created.pet, "the create failed: nothing to remove").toBeDefined();
      const pet = created.pet as Pet;
      const response = await send("DELETE", `/v1/pets/${pet.id}`, { key: true });
      expect(response.status, response.text.slice(0, 300)).toBe(204);
      expect(response.text).toBe("");
      const read = await send("GET", `/v1/pets/${pet.id}`, {
        key: true,
        headers: bookmark(response),
      });
      expect(json(read, 404)).toMatchObject({ code: "not_found", status: 404 });
    });
  }
});

if (options.platform) {
  const platform = options.platform;
  const sendToPlatform = smokeClient({ ...options, base: platform, pin: undefined }, "");

  describe(`the developer platform at ${platform}`, () => {
    it("GET / is its start page, under a policy that runs this origin's scripts only", async () => {
      const page = await sendToPlatform("GET", "/");
      expect(page.status, page.text.slice(0, 300)).toBe(200);
      expect(page.headers.get("Content-Type")).toMatch(/^text\/html\b/);
      expect(page.headers.get("X-Request-Id")).toBeTruthy();
      expect(page.headers.get("Cache-Control")).toBe("no-store");
      const policy = page.headers.get("Content-Security-Policy") ?? "";
      const scriptSrc = /(?:^|;)\s*script-src ([^;]*)/.exec(policy)?.[1]?.trim();
      expect(scriptSrc, policy).toBe("'self'");
      expect(policy).toMatch(/(?:^|;)\s*default-src 'none'/);
      const html = parseHtml(page.text);
      const at = (href: string | undefined) => new URL(href ?? "", `${platform}/`);
      const files = [
        ...html.querySelectorAll("script[src]").map((s) => at(s.getAttribute("src"))),
        ...html.querySelectorAll("link[href]").map((l) => at(l.getAttribute("href"))),
      ];
      expect(files.length, "the page loads no file").toBeGreaterThan(0);
      for (const file of files) {
        expect(file.origin, file.href).toBe(platform);
        expect((await sendToPlatform("GET", file.href)).status, file.href).toBe(200);
      }
    });

    it("responds to its JSON endpoints with the Error object", async () => {
      const signedOut = await sendToPlatform("GET", "/api/keys");
      expect(json(signedOut, 401)).toEqual({
        code: "unauthorized",
        message: expect.any(String),
        status: 401,
      });
      const unknown = await sendToPlatform("GET", "/api/no-such-endpoint");
      expect(json(unknown, 404)).toMatchObject({ code: "not_found", status: 404 });
      // A change from another origin is refused before anything is read (nothing changes).
      const forged = await sendToPlatform("POST", "/api/sign-out", {
        headers: { Origin: "https://attacker.example", "Content-Type": "application/json" },
        body: "{}",
      });
      expect(json(forged, 403)).toMatchObject({ code: "cross_origin_request", status: 403 });
    });

    it('the API\'s reference page leads to it ("Get a key")', async () => {
      const page = parseHtml((await send("GET", "/v1/docs")).text);
      const link = page.querySelectorAll("a").find((a) => a.text.trim() === "Get a key");
      expect(link?.getAttribute("href")).toBe(`${platform}/`);
    });
  });
}
