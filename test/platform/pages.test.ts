// The pages: what each shows signed in and out, that they load nothing from another
// origin and run no inline script or style (the CSP), and the files they load exist.
import { env } from "cloudflare:workers";
import type { HTMLElement } from "node-html-parser";
import { parse } from "node-html-parser";
import { describe, expect, it } from "vitest";
import { ORIGIN, send, signUp } from "./helpers.ts";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async function html(response: Response) {
  expect(response.headers.get("Content-Type")).toBe("text/html; charset=UTF-8");
  expect(response.headers.get("Content-Security-Policy")).toBe(CSP);
  expect(response.headers.get("Cache-Control")).toBe("no-store");
  expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
  return parse(await response.text());
}

/** Every URL the page makes the browser load (scripts, styles, images, frames). */
function loadedUrls(page: HTMLElement): string[] {
  return [
    ...page
      .querySelectorAll("script[src], img[src], iframe[src]")
      .map((e) => e.getAttribute("src")),
    ...page.querySelectorAll("link[href]").map((e) => e.getAttribute("href")),
  ].filter((u): u is string => u !== undefined);
}

async function signedInWithKey() {
  const signedUp = await signUp();
  const created = await send("/api/keys", {
    json: { label: "storefront", scopes: ["pets:read"] },
    session: signedUp.session,
  });
  return { ...signedUp, keyId: (await created.json<{ id: number }>()).id };
}

describe("every page", () => {
  it("loads only files of this origin that exist, and has no inline script, style or handler", async () => {
    const { session, keyId } = await signedInWithKey();
    const pages = [
      await send("/"),
      await send("/keys", { session }),
      await send(`/keys/${keyId}`, { session }),
      await send("/account", { session }),
      await send("/welcome", { session }),
      await send("/no-such-page", { session }),
    ];
    for (const response of pages) {
      const page = await html(response);
      const urls = loadedUrls(page);
      expect(urls.length).toBeGreaterThanOrEqual(3);
      for (const url of urls) {
        expect(new URL(url, ORIGIN).origin).toBe(ORIGIN);
        const file = await env.ASSETS.fetch(new URL(url, ORIGIN));
        expect(file.status, url).toBe(200);
        expect(file.headers.get("Content-Type")).toMatch(
          /^(text\/css|(text|application)\/javascript|image\/svg\+xml)/,
        );
      }
      expect(page.querySelectorAll("script:not([src]), style, [style]")).toHaveLength(0);
      const handlers = page
        .querySelectorAll("*")
        .filter((e) => Object.keys(e.attributes).some((a) => a.startsWith("on")));
      expect(handlers).toHaveLength(0);
      expect(page.querySelector("html")?.getAttribute("lang")).toBe("en");
      expect(page.querySelector('meta[name="viewport"]')?.getAttribute("content")).toBe(
        "width=device-width, initial-scale=1",
      );
    }
    expect(pages.map((p) => p.status)).toEqual([200, 200, 200, 200, 200, 404]);
  });

  it("labels every form control and makes every action a real button", async () => {
    const { session, keyId } = await signedInWithKey();
    for (const path of ["/", "/keys", `/keys/${keyId}`, "/account", "/welcome"]) {
      const page = await html(await send(path, { session: path === "/" ? undefined : session }));
      for (const control of page.querySelectorAll("input, select")) {
        const id = control.getAttribute("id");
        const wrapped = control.closest("label") !== null;
        expect(
          wrapped || page.querySelector(`label[for="${id}"]`) !== null,
          `${path} ${control.toString()}`,
        ).toBe(true);
      }
      for (const action of page.querySelectorAll("[data-action]")) {
        expect(["BUTTON", "FORM"]).toContain(action.tagName);
      }
    }
  });
});

describe("signed out", () => {
  it("the start page offers sign-up and sign-in; the account's pages send the visitor there", async () => {
    const page = await html(await send("/"));
    expect(page.querySelector("h1")?.text).toBe("Get a key for the Pet Store API");
    expect(
      page.querySelector('form[data-action="sign-up"] input[name="displayName"]'),
    ).not.toBeNull();
    // Sign-in offers passkeys in the browser's autofill (conditional mediation) on its field.
    const signIn = page.querySelector('form[data-action="sign-in"]');
    expect(signIn?.querySelector("input")?.getAttribute("autocomplete")).toBe("username webauthn");
    expect(signIn?.querySelector("button")?.text).toBe("Sign in with a passkey");
    expect(page.querySelector('form[data-action="recover"] input[name="code"]')).not.toBeNull();
    expect(page.querySelector('a[href="http://localhost:8787/v1/docs"]')).not.toBeNull();
    expect(page.querySelector("#notice")).toBeNull();
    // Each page sends the visitor to sign in, and back to it afterwards.
    for (const path of ["/keys", "/keys?show=ended", "/keys/1", "/account", "/welcome"]) {
      const response = await send(path);
      expect([response.status, response.headers.get("Location")]).toEqual([
        303,
        `/?next=${encodeURIComponent(path)}`,
      ]);
      const start = await html(await send(response.headers.get("Location") ?? ""));
      expect(start.querySelector("#notice")?.text).toMatch(/session has ended/);
      expect(start.querySelector("[data-next]")?.getAttribute("data-next")).toBe(path);
    }
  });

  it("goes back only to a path of this site after signing in", async () => {
    const { session } = await signUp();
    const back = async (next: string) =>
      (await send(`/?next=${encodeURIComponent(next)}`, { session })).headers.get("Location");
    expect(await back("/keys/7")).toBe("/keys/7");
    for (const elsewhere of [
      "https://evil.example/",
      "//evil.example/x",
      "/\\evil.example",
      "javascript:alert(1)",
      "/a b",
    ]) {
      expect(await back(elsewhere), elsewhere).toBe("/keys");
      const page = await html(await send(`/?next=${encodeURIComponent(elsewhere)}`));
      expect(page.querySelector("[data-next]")?.getAttribute("data-next")).toBe("/keys");
    }
  });
});

describe("signed in", () => {
  it("the start page leads to the keys", async () => {
    const { session } = await signUp();
    const response = await send("/", { session });
    expect([response.status, response.headers.get("Location")]).toEqual([303, "/keys"]);
  });

  it("the keys page lists each key with its state, and says how many of the 10 are active", async () => {
    const { session, keyId } = await signedInWithKey();
    await send(`/api/keys/${keyId}/revoke`, { json: {}, session });
    await send("/api/keys", { json: { label: "server", scopes: ["pets:write"] }, session });
    const rowsOf = (page: HTMLElement) =>
      page.querySelectorAll("table.keys tbody tr").map((tr) => ({
        label: tr.querySelector("th a")?.text,
        scopes: tr.querySelector('[data-label="Scopes"]')?.text.trim(),
        status: tr.querySelector(".badge")?.text,
      }));
    const tabs = (page: HTMLElement) =>
      page.querySelectorAll("nav.tabs a").map((a) => [a.text, a.getAttribute("aria-current")]);
    const page = await html(await send("/keys", { session }));
    expect(page.querySelector("#key-count")?.text).toBe("1 of 10 active keys");
    expect(rowsOf(page)).toEqual([{ label: "server", scopes: "pets:write", status: "Active" }]);
    expect(tabs(page)).toEqual([
      ["Active 1", "page"],
      ["Ended 1", undefined],
    ]);
    const ended = await html(await send("/keys?show=ended", { session }));
    expect(rowsOf(ended)).toEqual([
      { label: "storefront", scopes: "pets:read", status: "Revoked" },
    ]);
    expect(tabs(ended)).toEqual([
      ["Active 1", undefined],
      ["Ended 1", "page"],
    ]);
    expect(
      page.querySelector('form[data-action="create-key"] button')?.getAttribute("disabled"),
    ).toBeUndefined();
    expect(page.querySelector("#new-key")?.hasAttribute("hidden")).toBe(true);
    // The new key's panel says how an AI agent uses it: the API's MCP server.
    expect(page.querySelector("#new-key-mcp code")?.text).toBe("http://localhost:8787/mcp");
    expect(page.querySelector("#new-key-mcp")?.text).toMatch(/docs\/agents\.md/);
  });

  it("at 10 active keys the create button is disabled and says why", async () => {
    const { session } = await signUp();
    for (let i = 0; i < 10; i++) {
      await send("/api/keys", { json: { label: `k${i}`, scopes: ["pets:read"] }, session });
    }
    const page = await html(await send("/keys", { session }));
    expect(
      page.querySelector('form[data-action="create-key"] button')?.hasAttribute("disabled"),
    ).toBe(true);
    expect(page.querySelector("#key-limit")?.text).toMatch(/revoke one/);
  });

  it("a key's page shows its facts and offers rotate and revoke while it is active", async () => {
    const { session, keyId } = await signedInWithKey();
    const active = await html(await send(`/keys/${keyId}`, { session }));
    expect(active.querySelector("h1")?.text).toBe("storefront");
    expect(
      active.querySelector(`form[data-action="rotate"][data-key-id="${keyId}"]`),
    ).not.toBeNull();
    expect(
      active.querySelector(`button[data-action="revoke"][data-key-id="${keyId}"]`),
    ).not.toBeNull();
    await send(`/api/keys/${keyId}/revoke`, { json: {}, session });
    const revoked = await html(await send(`/keys/${keyId}`, { session }));
    expect(revoked.querySelector(".badge")?.text).toBe("Revoked");
    expect(revoked.querySelector('[data-action="rotate"], [data-action="revoke"]')).toBeNull();
  });

  it("a key's page says what it may do and may not, and how to get a key that may do more", async () => {
    const { session, keyId } = await signedInWithKey();
    const may = async (id: number) => {
      const page = await html(await send(`/keys/${id}`, { session }));
      const section = page.querySelector("#may");
      return {
        lines: section?.querySelectorAll("li").map((li) => li.text.replace(/\s+/g, " ")),
        text: section?.querySelector("p")?.text.replace(/\s+/g, " "),
        create: section?.querySelector('a[href="/keys#create"]') ?? null,
      };
    };
    // Read-only, as the form offers first: a create (or a change, or a removal) is refused, and
    // the page says so, with the way to a key that writes.
    const readOnly = await may(keyId);
    expect(readOnly.lines).toEqual([
      "May pets:read Read animals. Safe in a web page.",
      "May not pets:write Add, change and remove animals. Keep it on a server.",
      "May not orders:read Read store orders. (not yet available)",
    ]);
    expect(readOnly.text).toBe(
      "A call that needs a scope it lacks is refused: 403 insufficient_scope, naming the scope. A key's scopes are fixed when it is made, and a rotation keeps them: for one that may do more, create a key with pets:write.",
    );
    expect(readOnly.create).not.toBeNull();
    // Every scope there is to have: nothing more to create; an ended key offers nothing either.
    const all = await send("/api/keys", {
      json: { label: "server", scopes: ["pets:read", "pets:write", "orders:read"] },
      session,
    });
    const full = await may((await all.json<{ id: number }>()).id);
    expect(full.lines).toEqual([
      "May pets:read Read animals. Safe in a web page.",
      "May pets:write Add, change and remove animals. Keep it on a server.",
      "May orders:read Read store orders. (not yet available)",
    ]);
    expect(full.text).toBeUndefined();
    await send(`/api/keys/${keyId}/revoke`, { json: {}, session });
    const ended = await may(keyId);
    expect(ended.text).toBe(
      "A call that needs a scope it lacks is refused: 403 insufficient_scope, naming the scope.",
    );
    expect(ended.create).toBeNull();
    // The form says a key's scopes are for good, where the choice is made.
    const keys = await html(await send("/keys", { session }));
    expect(keys.querySelector("fieldset#scopes")?.getAttribute("aria-describedby")).toBe(
      "scopes-hint scopes-error",
    );
    expect(keys.querySelector("#scopes-hint")?.text).toMatch(/cannot change later/);
    expect(keys.querySelector("#new-key")?.getAttribute("data-scopes")).toBe(
      "pets:read pets:write orders:read",
    );
  });

  it("the account page lists the passkeys; the only one cannot be removed", async () => {
    const { session, account, authenticator } = await signUp({ displayName: "Grace" });
    const page = await html(await send("/account", { session }));
    expect(page.querySelectorAll(".facts dd").map((dd) => dd.text)[0]).toBe("Grace");
    expect(page.querySelector("code")?.text).toBe(account.id);
    const remove = page.querySelectorAll('button[data-action="remove-passkey"]');
    expect(remove.map((b) => b.getAttribute("data-passkey-id"))).toEqual([
      authenticator.credentialId,
    ]);
    expect(remove[0]?.hasAttribute("disabled")).toBe(true);
    expect(page.querySelector("#only-passkey")).not.toBeNull();
  });
});
