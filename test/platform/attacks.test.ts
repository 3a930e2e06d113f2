// An attack pass on the platform, as tests: CSRF, session fixation and theft, XSS through
// labels and display names, enumeration of ids, sign-up and sign-in floods, and the OWASP
// API Security Top 10 (2023) items that apply: API1 (object level authorization), API2
// (authentication), API4 (resource consumption), API5 (function level authorization).
// docs/platform.md says what each shows.
import { env } from "cloudflare:workers";
import { parse } from "node-html-parser";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/encoding.ts";
import { SoftwareAuthenticator } from "./authenticator.ts";
import type { Call, SignedUp } from "./helpers.ts";
import {
  count,
  expectError,
  freshAddress,
  ORIGIN,
  send,
  setSession,
  signIn,
  signUp,
} from "./helpers.ts";

/** Everything that changes state, with a body that would succeed, for `who`'s session. */
function stateChanges(who: SignedUp & { keyId: number }): Array<[string, string, unknown]> {
  return [
    ["POST", "/api/sign-up/options", { displayName: "x" }],
    ["POST", "/api/sign-up", {}],
    ["POST", "/api/sign-in/options", {}],
    ["POST", "/api/sign-in", {}],
    ["POST", "/api/sign-out", {}],
    ["POST", "/api/sign-out-everywhere", {}],
    ["POST", "/api/passkeys/options", {}],
    ["POST", "/api/passkeys", {}],
    ["DELETE", `/api/passkeys/${who.authenticator.credentialId}`, {}],
    ["POST", "/api/keys", { label: "csrf", scopes: ["pets:write"] }],
    ["POST", `/api/keys/${who.keyId}/rotate`, { graceSeconds: 0 }],
    ["POST", `/api/keys/${who.keyId}/revoke`, {}],
  ];
}

/** What a signed-in account can read, by id where there is one. */
const reads = (keyId: number) => [
  "/api/account",
  "/api/keys",
  `/api/keys/${keyId}`,
  `/api/keys/${keyId}/usage`,
];

async function victim() {
  const signedUp = await signUp({ displayName: "Victim" });
  const created = await send("/api/keys", {
    json: { label: "prod", scopes: ["pets:read"] },
    session: signedUp.session,
  });
  return { ...signedUp, keyId: (await created.json<{ id: number }>()).id };
}

/** What the victim's account looks like: its keys, passkeys and sessions. */
async function snapshotOf(who: SignedUp) {
  return env.DB.prepare(
    `SELECT (SELECT json_group_array(json_array(id, label, expires_at, revoked_at)) FROM api_keys WHERE account_id = ?1) AS keys,
            (SELECT count(*) FROM passkeys WHERE account_id = ?1) AS passkeys,
            (SELECT count(*) FROM sessions WHERE account_id = ?1) AS sessions`,
  )
    .bind(who.account.id)
    .first();
}

/** A response as a client sees it, but for the per-request id. */
async function seen(response: Response) {
  const headers = [...response.headers].filter(([name]) => name !== "x-request-id");
  return { status: response.status, headers, body: await response.text() };
}

describe("CSRF: a page of another site cannot change anything", () => {
  it("every state change needs this origin's Origin, else 403, and nothing changes", async () => {
    const target = await victim();
    const before = await snapshotOf(target);
    for (const [method, path, json] of stateChanges(target)) {
      for (const origin of [
        "https://evil.example",
        "null",
        "https://localhost:8788",
        "http://localhost:8788.evil.example",
        "http://localhost",
        null,
      ]) {
        const response = await send(path, { method, json, origin, session: target.session });
        await expectError(response, 403, "cross_origin_request", /Origin/);
      }
    }
    expect(await snapshotOf(target)).toEqual(before);
  });

  it("every state change needs a JSON body, else 403, also from this origin: no form can send one", async () => {
    const target = await victim();
    const before = await snapshotOf(target);
    const forms: Array<Pick<Call, "body" | "headers">> = [
      { body: '{"label":"x","scopes":["pets:write"]}', headers: { "Content-Type": "text/plain" } },
      {
        body: "label=x&scopes=pets:write",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
      },
      { body: new FormData(), headers: {} },
      { body: undefined, headers: {} },
      { body: "{}", headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" } },
      // JSON is UTF-8 (RFC 8259): "{}" in UTF-16 (a byte order mark, then "{" and "}").
      {
        body: new Uint8Array(new Uint16Array([0xfeff, 0x7b, 0x7d]).buffer),
        headers: { "Content-Type": "application/json; charset=utf-16" },
      },
    ];
    for (const [method, path] of stateChanges(target)) {
      for (const form of forms) {
        const response = await send(path, { method, ...form, session: target.session });
        await expectError(response, 403, "json_required", /JSON/);
      }
    }
    expect(await snapshotOf(target)).toEqual(before);
  });

  it("nothing changes state on GET: a link or an image cannot sign out or revoke", async () => {
    const target = await victim();
    for (const path of [
      "/api/sign-out",
      "/api/sign-out-everywhere",
      `/api/keys/${target.keyId}/revoke`,
    ]) {
      const response = await send(path, { session: target.session });
      await expectError(response, 405, "method_not_allowed");
      expect(response.headers.get("Allow")).toBe("POST");
    }
    expect((await send("/api/account", { session: target.session })).status).toBe(200);
  });
});

describe("session fixation", () => {
  it("a token planted before sign-in is never the session after it", async () => {
    const { authenticator } = await signUp();
    const planted = "fixated-token-chosen-by-the-attacker-0000000";
    const response = await signIn(authenticator, { session: planted });
    const { token } = setSession(response);
    expect(token).toBeDefined();
    expect(token).not.toBe(planted);
    await expectError(await send("/api/account", { session: planted }), 401, "unauthorized");
  });

  it("an attacker's own session planted in the victim's browser ends when the victim signs in", async () => {
    const attacker = await signUp({ displayName: "Attacker" });
    const target = await signUp({ displayName: "Victim" });
    const response = await signIn(target.authenticator, { session: attacker.session });
    expect(await response.json()).toMatchObject({ id: target.account.id });
    await expectError(
      await send("/api/account", { session: attacker.session }),
      401,
      "unauthorized",
    );
  });
});

describe("session theft", () => {
  it("the cookie is out of reach of scripts and other sites (HttpOnly, Secure, SameSite=Strict, __Host-)", async () => {
    const { authenticator } = await signUp();
    const { header } = setSession(await signIn(authenticator));
    expect(header).toMatch(/^__Host-session=/);
    expect(header).toMatch(/; HttpOnly(;|$)/);
    expect(header).toMatch(/; Secure(;|$)/);
    expect(header).toMatch(/; SameSite=Strict(;|$)/);
    expect(header).toMatch(/; Path=\/(;|$)/);
    expect(header).not.toMatch(/Domain=/i);
  });

  it("a copied cookie stops working at sign-out, and at sign-out everywhere from another device", async () => {
    const { authenticator, session } = await signUp();
    const stolen = session;
    await send("/api/sign-out", { json: {}, session });
    await expectError(await send("/api/keys", { session: stolen }), 401, "unauthorized");

    const laptop = setSession(await signIn(authenticator)).token ?? "";
    const phone = setSession(await signIn(authenticator)).token ?? "";
    await send("/api/sign-out-everywhere", { json: {}, session: phone });
    await expectError(await send("/api/keys", { session: laptop }), 401, "unauthorized");
  });

  it("a copy of the sessions table is no session: only hashes are stored", async () => {
    const { session, account } = await signUp();
    const { results } = await env.DB.prepare(
      "SELECT token_hash FROM sessions WHERE account_id = ?1",
    )
      .bind(account.id)
      .all<{ token_hash: string }>();
    expect(results.map((r) => r.token_hash)).toEqual([await sha256Hex(session)]);
    for (const { token_hash } of results) {
      await expectError(await send("/api/keys", { session: token_hash }), 401, "unauthorized");
    }
  });
});

describe("XSS through what people type", () => {
  const payloads = [
    `<script>alert(1)</script>`,
    `"><img src=x onerror=alert(1)>`,
    `'><svg onload=alert(1)>`,
  ];

  it("labels and display names are shown as text on every page, never as markup", async () => {
    for (const payload of payloads) {
      const { session } = await signUp({ displayName: payload });
      const created = await send("/api/keys", {
        json: { label: payload, scopes: ["pets:read"] },
        session,
      });
      const { id } = await created.json<{ id: number }>();
      for (const path of ["/keys", `/keys/${id}`, "/account"]) {
        const text = await (await send(path, { session })).text();
        expect(text).not.toContain(payload);
        expect(text).not.toMatch(/<(script|img|svg) [^>]*on\w+=|<script>alert/);
        const page = parse(text);
        // The payload is there, as text.
        expect(page.text).toContain(payload);
      }
      const keyPage = parse(await (await send(`/keys/${id}`, { session })).text());
      expect(keyPage.querySelector("h1")?.text).toBe(payload);
      expect(
        keyPage.querySelector('button[data-action="revoke"]')?.getAttribute("data-label"),
      ).toBe(payload);
    }
  });

  it("JSON responses that echo input are JSON, which a browser does not render", async () => {
    const { session } = await signUp();
    const created = await send("/api/keys", {
      json: { label: payloads[0], scopes: ["pets:read"] },
      session,
    });
    expect(created.headers.get("Content-Type")).toBe("application/json");
    const refused = await send("/api/keys", {
      json: { label: "ok", scopes: ["pets:read"], [payloads[1] as string]: 1 },
      session,
    });
    expect(refused.headers.get("Content-Type")).toBe("application/json");
    expect(refused.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });
});

describe("enumeration and API1: another account's ids are 404 exactly like ids that do not exist", () => {
  it("for every read and change of a key, whatever the id", async () => {
    const owner = await victim();
    // An operator's key (npm run keys), in no account.
    const operator = await env.DB.prepare(
      "INSERT INTO api_keys (key_hash, prefix, label, created_at) VALUES (?1, 'psk_op', 'operator', unixepoch()) RETURNING id",
    )
      .bind(await sha256Hex(crypto.randomUUID()))
      .first<{ id: number }>();
    const before = await snapshotOf(owner);
    const prober = await signUp({ displayName: "Prober" });
    const missing = 9_999_999;
    const probe = (method: string, path: string, json?: unknown) =>
      send(path, { method, session: prober.session, ...(json === undefined ? {} : { json }) });
    for (const [method, template, json] of [
      ["GET", "/api/keys/ID", undefined],
      ["GET", "/api/keys/ID/usage", undefined],
      ["POST", "/api/keys/ID/rotate", {}],
      ["POST", "/api/keys/ID/revoke", {}],
      ["GET", "/keys/ID", undefined],
    ] as const) {
      const reference = await seen(
        await probe(method, template.replace("ID", String(missing)), json),
      );
      expect(reference.status).toBe(404);
      for (const id of [owner.keyId, operator?.id, "abc", "01", "-1", "1e3", "99999999999999999"]) {
        const response = await seen(await probe(method, template.replace("ID", String(id)), json));
        expect(response, `${method} ${template} ${id}`).toEqual(reference);
      }
    }
    expect(await snapshotOf(owner)).toEqual(before);
    // A key list is the account's own: the prober sees none of the owner's keys.
    expect(await (await probe("GET", "/api/keys")).json()).toEqual([]);
  });

  it("for another account's passkey: 404 like a missing one, and it stays", async () => {
    const owner = await victim();
    const prober = await signUp();
    await send("/api/passkeys/options", { json: {}, session: prober.session });
    const remove = (id: string) =>
      send(`/api/passkeys/${id}`, { method: "DELETE", json: {}, session: prober.session });
    expect(await seen(await remove(owner.authenticator.credentialId))).toEqual(
      await seen(await remove("AAAA")),
    );
    expect(await count("passkeys", "credential_id = ?1", owner.authenticator.credentialId)).toBe(1);
  });

  it("account ids are random, so they count nothing and cannot be guessed", async () => {
    const ids = [(await signUp()).account.id, (await signUp()).account.id];
    for (const id of ids) expect(id).toMatch(/^acct_[A-Za-z0-9_-]{22}$/);
    const [a, b] = ids as [string, string];
    let common = 0;
    while (a[common] === b[common]) common++;
    expect(common).toBeLessThan(12);
  });
});

describe("floods (API4)", () => {
  it("sign-ups are limited per client address: past the limit 429 with Retry-After, other addresses unaffected", async () => {
    const address = freshAddress();
    const begin = (from: string) =>
      send("/api/sign-up/options", { json: { displayName: "bot" }, address: from });
    for (let i = 0; i < env.TEST_PLATFORM_LIMIT; i++)
      expect((await begin(address)).status).toBe(200);
    const refused = await begin(address);
    await expectError(refused, 429, "rate_limited", /sign-ups/);
    expect(refused.headers.get("Retry-After")).toBe("60");
    expect((await begin(freshAddress())).status).toBe(200);
  });

  it("sign-in attempts and failures are limited per client address", async () => {
    const address = freshAddress();
    const stranger = await SoftwareAuthenticator.create(ORIGIN);
    const attempt = async () => {
      const begun = await send("/api/sign-in/options", { json: {}, address });
      if (begun.status !== 200) return begun;
      return send("/api/sign-in", {
        json: await stranger.authenticate(await begun.json()),
        address,
      });
    };
    // An attempt counts at its start and again when it fails: the first fails (401), and
    // within the limit the address is refused (429) before anything is checked.
    expect((await attempt()).status).toBe(401);
    const later: number[] = [];
    for (let i = 1; i < env.TEST_PLATFORM_LIMIT; i++) later.push((await attempt()).status);
    expect(later).toContain(429);
    expect(later.filter((s) => s !== 429 && s !== 401)).toEqual([]);
    const refused = await send("/api/sign-in/options", { json: {}, address });
    await expectError(refused, 429, "rate_limited", /sign-in attempts/);
    expect(refused.headers.get("Retry-After")).toBe("60");
  });

  it("a body over 16 KiB is 413 before it is parsed; so is one sent in chunks", async () => {
    const { session } = await signUp();
    const big = JSON.stringify({ label: "x".repeat(20_000), scopes: ["pets:read"] });
    await expectError(
      await send("/api/keys", {
        body: big,
        headers: { "Content-Type": "application/json" },
        session,
      }),
      413,
      "payload_too_large",
    );
    const chunked = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode(" ".repeat(1024)));
        controller.close();
      },
    });
    await expectError(
      await send("/api/keys", {
        body: chunked,
        headers: { "Content-Type": "application/json" },
        session,
      }),
      413,
      "payload_too_large",
    );
  });

  it("an account holds at most 20 passkeys", async () => {
    const { session, account } = await signUp();
    for (let i = 1; i < 20; i++) {
      const options = await (await send("/api/passkeys/options", { json: {}, session })).json();
      const added = await send("/api/passkeys", {
        json: await (await SoftwareAuthenticator.create(ORIGIN)).register(options as never),
        session,
      });
      expect(added.status).toBe(201);
    }
    const options = await (await send("/api/passkeys/options", { json: {}, session })).json();
    const refused = await send("/api/passkeys", {
      json: await (await SoftwareAuthenticator.create(ORIGIN)).register(options as never),
      session,
    });
    await expectError(refused, 409, "passkey_limit_reached");
    expect(await count("passkeys", "account_id = ?1", account.id)).toBe(20);
  });
});

describe("API2: nothing about an account without its session", () => {
  it("every read and change of an account needs a valid session: 401 without one, with a forged one, or an ended one", async () => {
    const target = await victim();
    const ended = (await signUp()).session;
    await send("/api/sign-out", { json: {}, session: ended });
    const accountOnly = stateChanges(target).filter(
      ([, path]) => !/sign-(up|in)|\/sign-out$/.test(path),
    );
    for (const session of [undefined, "forged", ended]) {
      for (const path of reads(target.keyId)) {
        await expectError(await send(path, { session }), 401, "unauthorized");
      }
      for (const [method, path, json] of accountOnly) {
        await expectError(await send(path, { method, json, session }), 401, "unauthorized");
      }
    }
  });
});

describe("API5: no function of the operator is reachable from an account", () => {
  it("there is no endpoint to list accounts, disable one, or change a key's owner, scopes or revocation", async () => {
    const { session, keyId } = await victim();
    for (const [method, path] of [
      ["GET", "/api/accounts"],
      ["POST", "/api/accounts/acct_x/disable"],
      ["GET", "/api/admin"],
      ["GET", "/api/keys/all"],
    ] as const) {
      const response = await send(path, {
        method,
        session,
        ...(method === "POST" ? { json: {} } : {}),
      });
      await expectError(response, 404, "not_found");
    }
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const response = await send(`/api/keys/${keyId}`, {
        method,
        json: { revokedAt: null, scopes: ["pets:write"] },
        session,
      });
      await expectError(response, 405, "method_not_allowed");
      expect(response.headers.get("Allow")).toBe("GET, HEAD");
    }
    for (const field of ["accountId", "account_id", "id", "revokedAt", "keyHash"]) {
      const response = await send("/api/keys", {
        json: { label: "x", scopes: ["pets:read"], [field]: "x" },
        session,
      });
      const body = await expectError(response, 400, "validation_failed", new RegExp(field));
      expect(body.details).toContainEqual({ field, message: "is not an accepted field" });
    }
  });
});
