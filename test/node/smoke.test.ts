// `npm run smoke` (scripts/smoke.ts): what it accepts, and how its checks send requests
// (test/live/smoke-client.ts). The checks themselves run against the real `npm run dev`
// in `npm run smoke:local`.
import { describe, expect, it } from "vitest";
import { type SmokeOptions, smokeOptions } from "../../scripts/smoke.ts";
import { smokeClient } from "../live/smoke-client.ts";

const KEY = { SMOKE_API_KEY: "psk_example" };
const VERSION = "0f6bfa3e-6b2a-4c1d-9e8f-0123456789ab";
const X = "https://x.example";

describe("npm run smoke -- <flags>", () => {
  it("reads every flag; the key only from SMOKE_API_KEY", () => {
    const pin = `petstore-api-production=${VERSION}`;
    const argv = ["--base", "https://api.example.com/v1", "--write", "--timeout=5", "--pin", pin];
    expect(smokeOptions([...argv, "--cors-origin", "https://shop.example"], KEY)).toEqual({
      base: "https://api.example.com",
      platform: undefined,
      write: true,
      timeoutMs: 5_000,
      pin: `petstore-api-production="${VERSION}"`,
      corsOrigin: "https://shop.example",
    });
    expect(smokeOptions(["--base", "http://[::1]:8787/"], KEY)).toMatchObject({
      base: "http://[::1]:8787",
      write: false,
      timeoutMs: 10_000,
      pin: undefined,
    });
    expect(smokeOptions(["--help"], {})).toBe("help");
    expect(smokeOptions(["--base", X, "--platform", "http://localhost:8788/"], KEY)).toMatchObject({
      base: X,
      platform: "http://localhost:8788",
    });
  });

  it.each([
    [["--base", "http://api.example.com"], KEY, /^--base: plain http only for 127\.0\.0\.1/],
    [["--base", `${X}/v1/pets`], KEY, /^--base is the deployment's origin, without the path/],
    [["--base", "https://user:pw@x.example"], KEY, /^--base must not carry credentials/],
    [["--base", "ftp://x.example"], KEY, /^--base must be an http\(s\) URL/],
    [["--base", "x.example"], KEY, /^--base x\.example is not a URL/],
    [[], KEY, /^--base is required$/],
    [["--base", X], {}, /^the environment variable SMOKE_API_KEY .* is not set$/],
    [["--base", X, "--key", "k"], KEY, /only from the environment variable SMOKE_API_KEY$/],
    [["--base", X, "--verbose"], KEY, /^Unknown option '--verbose'/],
    [["--base", X, "--timeout", "121"], KEY, /whole seconds from 1 to 120$/],
    [["--base", X, "--pin", "production=latest"], KEY, /expected <worker name>=<version id>$/],
    [["--base", X, "--cors-origin", `${X}/`], KEY, /is not an origin such as/],
    [["--base", X], { SMOKE_API_KEY: "psk_secret value" }, /^SMOKE_API_KEY holds spaces[^\n]*$/],
    [["--base", X, "--platform", "http://d.example"], KEY, /^--platform: plain http only for/],
    [["--base", X, "--platform", `${X}/keys`], KEY, /^--platform is the deployment's origin/],
    [["--base", X, "--platform", X], KEY, /^--platform is the developer platform's origin/],
  ])("refuses %j in one line", (argv, env, message) => {
    expect(() => smokeOptions(argv, env)).toThrow(message);
    expect(() => smokeOptions(argv, env)).not.toThrow(/\n|psk_secret/);
  });
});

describe("the smoke test's requests", () => {
  const options: SmokeOptions = {
    base: "https://api.example.com",
    platform: undefined,
    write: false,
    timeoutMs: 1_000,
    pin: `petstore-api-production="${VERSION}"`,
    corsOrigin: "https://example.com",
  };
  function deployment(response: () => Response) {
    const sent: Request[] = [];
    const fetchImpl = (async (input: URL, init?: RequestInit) => {
      sent.push(new Request(input, init));
      return response();
    }) as typeof fetch;
    return { sent, send: smokeClient(options, "psk_secret", fetchImpl) };
  }

  it("go to the deployment only, with the key only where asked, pinned, never redirected", async () => {
    const { sent, send } = deployment(() => Response.json({ ok: true }));
    await send("GET", "/v1/pets", { key: true });
    await send("GET", "/");
    await send("DELETE", "/v1/pets/7", { key: true });
    expect(sent.map((r) => [r.method, r.url, r.headers.get("Authorization"), r.redirect])).toEqual([
      ["GET", "https://api.example.com/v1/pets", "Bearer psk_secret", "manual"],
      ["GET", "https://api.example.com/", null, "manual"],
      ["DELETE", "https://api.example.com/v1/pets/7", "Bearer psk_secret", "manual"],
    ]);
    for (const r of sent)
      expect(r.headers.get("Cloudflare-Workers-Version-Overrides")).toBe(options.pin);
    await expect(
      send("GET", "https://evil.example/v1/pets?cursor=x", { key: true }),
    ).rejects.toThrow(/refused to send a request to https:\/\/evil\.example/);
    expect(sent).toHaveLength(3);
  });

  it("send a change as asked: its method, headers (If-Match, a bookmark) and body, beside the key", async () => {
    const { sent, send } = deployment(() => Response.json({ id: 7 }));
    const headers = {
      "Content-Type": "application/merge-patch+json",
      "If-Match": '"abc"',
      "x-d1-bookmark": "0000-1",
    };
    const body = JSON.stringify({ status: "pending" });
    expect((await send("PATCH", "/v1/pets/7", { key: true, headers, body })).text).toBe('{"id":7}');
    const [patch] = sent;
    expect(patch?.method).toBe("PATCH");
    expect(Object.fromEntries(patch?.headers ?? [])).toEqual({
      authorization: "Bearer psk_secret",
      "cloudflare-workers-version-overrides": options.pin,
      "content-type": "application/merge-patch+json",
      "if-match": '"abc"',
      "x-d1-bookmark": "0000-1",
    });
    expect(await patch?.text()).toBe(body);
  });

  it("a redirect is a failure; a body that echoes the key is kept without it", async () => {
    const redirect = deployment(
      () => new Response(null, { status: 302, headers: { Location: "https://evil.example/" } }),
    );
    await expect(redirect.send("GET", "/")).rejects.toThrow(/GET \/: a 302 redirect/);
    const echo = deployment(() => new Response("bad Bearer psk_secret", { status: 500 }));
    expect((await echo.send("GET", "/v1/pets/1", { key: true })).text).toBe(
      "bad Bearer [SMOKE_API_KEY]",
    );
  });

  it("the developer platform's client has no key to send, and keeps bodies as they are", async () => {
    const sent: Request[] = [];
    const fetchImpl = (async (input: URL, init?: RequestInit) => {
      sent.push(new Request(input, init));
      return new Response("a page");
    }) as typeof fetch;
    const platform = "https://developers.example.com";
    const send = smokeClient({ ...options, base: platform, pin: undefined }, "", fetchImpl);
    expect((await send("GET", "/")).text).toBe("a page");
    await expect(send("GET", "/api/keys", { key: true })).rejects.toThrow(/sends no key/);
    await expect(send("GET", `${options.base}/v1/pets`)).rejects.toThrow(/refused to send/);
    expect(sent.map((r) => [r.url, r.headers.get("Authorization")])).toEqual([
      [`${platform}/`, null],
    ]);
  });
});
