// The account's settings: passkeys named (from their AAGUID) and renamed, never renumbered;
// sessions listed and ended one by one; recovery codes (10, shown once, stored hashed, each
// signing in once, then asking for a new passkey); deletion confirmed with a passkey;
// rotation naming its successor; labels edited. Each endpoint is attacked here too:
// another account's ids, cross-origin requests, stolen or ended sessions, floods.
import { env } from "cloudflare:workers";
import { parse } from "node-html-parser";
import { describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/auth/keys.ts";
import { findApiKeyByHash } from "../../src/db/api-keys.ts";
import { sha256Hex } from "../../src/encoding.ts";
import { SoftwareAuthenticator } from "./authenticator.ts";
import {
  addPasskey,
  type Call,
  count,
  expectError,
  freshAddress,
  movableClock,
  ORIGIN,
  platformWith,
  send,
  setSession,
  signIn,
  signUp,
} from "./helpers.ts";

const GOOGLE_PASSWORD_MANAGER = "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4";
const CHROME_ON_LINUX =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const SAFARI_ON_IOS =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Mobile/15E148 Safari/604.1";

interface PasskeyJson {
  id: string;
  name: string;
  authenticator: string | null;
}

async function passkeysOf(session: string): Promise<PasskeyJson[]> {
  const response = await send("/api/account", { session });
  expect(response.status).toBe(200);
  return (await response.json<{ passkeys: PasskeyJson[] }>()).passkeys;
}

describe("passkey names", () => {
  it("come from the authenticator's AAGUID where the list knows it, else 'Passkey N', numbered once and kept", async () => {
    const google = await SoftwareAuthenticator.create(ORIGIN, GOOGLE_PASSWORD_MANAGER);
    const { session, authenticator } = await signUp({ authenticator: google });
    expect(await passkeysOf(session)).toMatchObject([
      { name: "Google Password Manager", authenticator: "Google Password Manager" },
    ]);
    const second = await SoftwareAuthenticator.create(ORIGIN, GOOGLE_PASSWORD_MANAGER);
    expect((await addPasskey(session, second)).status).toBe(201);
    const unknown = await SoftwareAuthenticator.create(ORIGIN);
    const added = await addPasskey(session, unknown);
    expect(await added.json()).toMatchObject({ name: "Passkey 1", authenticator: null });
    expect((await passkeysOf(session)).map((p) => p.name)).toEqual([
      "Google Password Manager",
      "Google Password Manager 2",
      "Passkey 1",
    ]);
    // Removing the first renumbers nothing.
    const removed = await send(`/api/passkeys/${authenticator.credentialId}`, {
      method: "DELETE",
      json: {},
      session,
    });
    expect(removed.status).toBe(204);
    expect((await passkeysOf(session)).map((p) => p.name)).toEqual([
      "Google Password Manager 2",
      "Passkey 1",
    ]);
  });

  it("are renamed by their holder, under the name rules; another account's passkey is 404 like a missing one", async () => {
    const { session, authenticator } = await signUp();
    const other = await signUp();
    const rename = (id: string, name: unknown, as = session, origin?: string) =>
      send(`/api/passkeys/${encodeURIComponent(id)}/name`, {
        json: { name },
        session: as,
        ...(origin ? { origin } : {}),
      });
    const renamed = await rename(authenticator.credentialId, "Work laptop <b>");
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({
      id: authenticator.credentialId,
      name: "Work laptop <b>",
    });
    const page = await send("/account", { session });
    expect(await page.text()).toContain("Work laptop &lt;b&gt;");

    for (const hostile of ["\u0301", "\ue000", "a\u0378", "\uffff", " ", "x".repeat(101), 7]) {
      const body = await expectError(
        await rename(authenticator.credentialId, hostile),
        400,
        "validation_failed",
      );
      expect(body.details).toEqual([{ field: "name", message: expect.any(String) }]);
    }
    const missing = await rename("bm8tc3VjaC1wYXNza2V5", "Mine now");
    const foreign = await rename(other.authenticator.credentialId, "Mine now");
    const bodies = [await missing.text(), await foreign.text()].map((t) => {
      const { code, message, status } = JSON.parse(t);
      return { code, message, status };
    });
    expect(bodies[1]).toEqual(bodies[0]);
    expect(foreign.status).toBe(404);
    expect((await passkeysOf(other.session))[0]?.name).toBe("Passkey 1");
    await expectError(
      await rename(authenticator.credentialId, "x", session, "https://evil.example"),
      403,
      "cross_origin_request",
    );
    await expectError(
      await rename(authenticator.credentialId, "x", "stolen-token"),
      401,
      "unauthorized",
    );
    expect((await passkeysOf(session))[0]?.name).toBe("Work laptop <b>");
  });
});

describe("sessions", () => {
  it("are listed with their browser and last use, the current one marked; another is ended by its id", async () => {
    const { authenticator, session: first } = await signUp();
    const signedIn = await signIn(authenticator, {});
    const second = setSession(signedIn).token as string;
    const listed = await send("/api/sessions", {
      session: first,
      headers: { "User-Agent": CHROME_ON_LINUX },
    });
    const sessions =
      await listed.json<
        { id: string; browser: string | null; current: boolean; lastSeenAt: string }[]
      >();
    expect(sessions).toHaveLength(2);
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
    for (const s of sessions) {
      expect(s.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(s.lastSeenAt).toMatch(/Z$/);
      // Neither the token nor its hash is ever an id.
      expect(s.id).not.toBe(await sha256Hex(first));
    }
    const other = sessions.find((s) => !s.current);
    if (!other) throw new Error("no other session");
    const ended = await send(`/api/sessions/${other.id}/end`, { json: {}, session: first });
    expect(ended.status).toBe(204);
    expect(setSession(ended).header).toBe(""); // this browser stays signed in
    await expectError(await send("/api/account", { session: second }), 401, "unauthorized");
    expect((await send("/api/account", { session: first })).status).toBe(200);
  });

  it("name the browser they signed in from", async () => {
    const authenticator = await SoftwareAuthenticator.create(ORIGIN);
    const address = freshAddress();
    const begun = await send("/api/sign-up/options", { json: { displayName: "Ua" }, address });
    const done = await send("/api/sign-up", {
      json: await authenticator.register(await begun.json()),
      address,
      headers: { "User-Agent": SAFARI_ON_IOS },
    });
    const session = setSession(done).token as string;
    const [listed] = await (await send("/api/sessions", { session })).json<{ browser: string }[]>();
    expect(listed?.browser).toBe("Safari on iOS");
    const page = await (await send("/account", { session })).text();
    expect(page).toContain("Safari on iOS");
  });

  it("of another account, or of none, are 404 and stay; the current one ends with its cookie; cross-origin is 403", async () => {
    const mine = await signUp();
    const theirs = await signUp();
    const [their] = await (await send("/api/sessions", { session: theirs.session })).json<
      { id: string }[]
    >();
    if (!their) throw new Error("no session");
    const refused = await send(`/api/sessions/${their.id}/end`, {
      json: {},
      session: mine.session,
    });
    await expectError(refused, 404, "not_found", "No such session.");
    await expectError(
      await send("/api/sessions/nope/end", { json: {}, session: mine.session }),
      404,
      "not_found",
      "No such session.",
    );
    expect((await send("/api/account", { session: theirs.session })).status).toBe(200);
    await expectError(
      await send(`/api/sessions/${their.id}/end`, {
        json: {},
        session: theirs.session,
        origin: "https://evil.example",
      }),
      403,
      "cross_origin_request",
    );
    await expectError(await send("/api/sessions", {}), 401, "unauthorized");
    const ended = await send(`/api/sessions/${their.id}/end`, {
      json: {},
      session: theirs.session,
    });
    expect(ended.status).toBe(204);
    expect(setSession(ended).header).toMatch(/^__Host-session=;/);
    await expectError(await send("/api/account", { session: theirs.session }), 401, "unauthorized");
  });
});

async function newCodes(session: string): Promise<string[]> {
  const response = await send("/api/recovery-codes", { json: {}, session });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json<{ codes: string[] }>()).codes;
}
const recover = (code: unknown, address = freshAddress()) =>
  send("/api/sign-in/recovery", { json: { code }, address });

describe("recovery codes", () => {
  it("are 10, shown once and stored hashed; each signs in once, and the session asks to secure the account", async () => {
    const { session, account } = await signUp();
    const codes = await newCodes(session);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes)
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    const { results } = await env.DB.prepare("SELECT * FROM recovery_codes WHERE account_id = ?1")
      .bind(account.id)
      .all<{ code_hash: string }>();
    expect(results.map((r) => r.code_hash).sort()).toEqual(
      (await Promise.all(codes.map((c) => sha256Hex(c.replaceAll("-", ""))))).sort(),
    );
    expect(JSON.stringify(results)).not.toMatch(
      new RegExp(codes.map((c) => c.replaceAll("-", "")).join("|")),
    );
    expect(await (await send("/account", { session })).text()).not.toContain(codes[0]);

    // Typed as a person types it: lower case, spaces for dashes, O for 0.
    const typed = (codes[0] as string).toLowerCase().replaceAll("-", " ").replaceAll("0", "o");
    const signedIn = await recover(typed);
    expect(signedIn.status, await signedIn.clone().text()).toBe(200);
    expect(await signedIn.json()).toMatchObject({ id: account.id, recoveryCodesLeft: 9 });
    const recovered = setSession(signedIn).token as string;
    const keys = parse(await (await send("/keys", { session: recovered })).text());
    expect(keys.querySelector("#recovery-banner a")?.getAttribute("href")).toBe("/account#secure");
    expect(await (await send("/keys", { session })).text()).not.toContain('id="recovery-banner"');
    // Once only.
    const again = await expectError(
      await recover(codes[0]),
      401,
      "sign_in_failed",
      /not valid, or it has been used/,
    );
    expect(again.details).toEqual([
      { field: "code", message: "is not valid, or it has been used" },
    ]);
  });

  it("new codes replace the old; a code of a disabled account signs nobody in; malformed codes are 400 by the field", async () => {
    const { session, account } = await signUp();
    const old = await newCodes(session);
    const fresh = await newCodes(session);
    expect(await count("recovery_codes", "account_id = ?1", account.id)).toBe(10);
    await expectError(await recover(old[0]), 401, "sign_in_failed");
    for (const bad of ["", "1234", "ILOU-ILOU-ILOU-ILOU-X", "x".repeat(65), 12]) {
      const body = await expectError(await recover(bad), 400, "validation_failed");
      expect(body.details?.[0]).toMatchObject({ field: "code" });
    }
    await env.DB.prepare("UPDATE accounts SET disabled_at = 1 WHERE id = ?1")
      .bind(account.id)
      .run();
    await expectError(await recover(fresh[1]), 403, "account_disabled");
  });

  it("guesses from one address are cut off (the sign-in limit counts each attempt)", async () => {
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i <= env.TEST_PLATFORM_LIMIT; i++) {
      statuses.push((await recover("AAAA-BBBB-CCCC-DDDD", address)).status);
    }
    expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true);
    const last = await recover("AAAA-BBBB-CCCC-DDDD", address);
    await expectError(last, 429, "rate_limited");
    expect(last.headers.get("Retry-After")).toBe("60");
  });

  it("are made only for a signed-in account, from this origin, with a JSON body", async () => {
    const { session } = await signUp();
    await expectError(await send("/api/recovery-codes", { json: {} }), 401, "unauthorized");
    await expectError(
      await send("/api/recovery-codes", { json: {}, session, origin: "https://evil.example" }),
      403,
      "cross_origin_request",
    );
    await expectError(
      await send("/api/recovery-codes", {
        body: "{}",
        session,
        headers: { "Content-Type": "text/plain" },
      }),
      403,
      "json_required",
    );
    await expectError(
      await send("/api/recovery-codes", { method: "GET", session }),
      405,
      "method_not_allowed",
    );
  });
});

describe("securing the account after a recovery", () => {
  // Passkeys made before the code's sign-in are the ones it offers to remove, those made since
  // count as this device's: to the second, so the clock moves between the steps, as a person's does.
  const clock = movableClock();
  const send = platformWith({ clock });
  /** An account whose passkey is lost, still signed in elsewhere, and a session of a recovery code. */
  async function recovered() {
    const lost = await signUp({ fetch: send });
    const codes = await send("/api/recovery-codes", { json: {}, session: lost.session });
    const [code] = (await codes.json<{ codes: string[] }>()).codes;
    clock.advance(60);
    const response = await send("/api/sign-in/recovery", { json: { code } });
    expect(response.status).toBe(200);
    clock.advance(30);
    return { ...lost, recovered: setSession(response).token as string };
  }
  const secure = (session: string, json: unknown, call: Partial<Call> = {}) =>
    send("/api/account/secure", { json, session, ...call });
  const card = async (session: string) =>
    parse(await (await send("/account", { session })).text()).querySelector("#secure");

  it("asks for a passkey on this device first, then removes the lost passkeys and ends the other sessions in one step", async () => {
    const { session, recovered: mine, authenticator: lost, account } = await recovered();
    // The account page holds the card (no banner there); first a passkey on this device.
    const page = parse(await (await send("/account", { session: mine })).text());
    expect(page.querySelector("#recovery-banner")).toBeNull();
    expect(page.querySelector("#secure button[data-action=add-passkey]")).not.toBeNull();
    expect(page.querySelector("#secure form")).toBeNull();
    const everything = { removePasskeys: [lost.credentialId], endOtherSessions: true };
    await expectError(await secure(mine, everything), 409, "passkey_required", /first/);
    expect(await count("passkeys", "account_id = ?1", account.id)).toBe(1);
    const found = await SoftwareAuthenticator.create(ORIGIN);
    expect((await addPasskey(mine, found, send)).status).toBe(201);

    // Then the lost passkey, ticked (its name as text, whatever it holds), and the session still
    // signed in elsewhere, listed.
    const hostile = '<img src=x onerror=alert(1)>"';
    const renamed = await send(`/api/passkeys/${lost.credentialId}/name`, {
      json: { name: hostile },
      session: mine,
    });
    expect(renamed.status).toBe(200);
    const form = (await card(mine))?.querySelector("form[data-action=secure-account]");
    expect(form?.querySelector("img")).toBeNull();
    expect(form?.querySelector("label.check")?.text).toContain(hostile);
    const boxes = form?.querySelectorAll("input[name=removePasskeys]") ?? [];
    expect(boxes.map((b) => [b.getAttribute("value"), b.hasAttribute("checked")])).toEqual([
      [lost.credentialId, true],
    ]);
    expect(form?.querySelectorAll(".others li")).toHaveLength(1);
    expect(form?.querySelector("button[type=submit]")?.text).toBe(
      "Remove the ticked passkeys and sign out everywhere else",
    );
    // The other session has a passkey prompt open; it ends with it.
    expect((await send("/api/passkeys/options", { json: {}, session })).status).toBe(200);

    // Refused, each changing nothing: every passkey, another account's or no passkey, another
    // origin, no session, a malformed body.
    await expectError(
      await secure(mine, {
        ...everything,
        removePasskeys: [lost.credentialId, found.credentialId],
      }),
      409,
      "last_passkey",
    );
    const stranger = await signUp({ fetch: send });
    await expectError(
      await secure(mine, { ...everything, removePasskeys: [stranger.authenticator.credentialId] }),
      404,
      "not_found",
      "No such passkey.",
    );
    await expectError(
      await secure(mine, everything, { origin: "https://evil.example" }),
      403,
      "cross_origin_request",
    );
    await expectError(await send("/api/account/secure", { json: everything }), 401, "unauthorized");
    const malformed = await expectError(
      await secure(mine, { removePasskeys: "all", endOtherSessions: true }),
      400,
      "validation_failed",
    );
    expect(malformed.details?.[0]).toMatchObject({ field: "removePasskeys" });
    expect(await count("passkeys", "account_id = ?1", account.id)).toBe(2);
    expect(await count("passkeys", "account_id = ?1", stranger.account.id)).toBe(1);
    expect(await count("sessions", "account_id = ?1", account.id)).toBe(2);

    // The one step.
    const done = await secure(mine, everything);
    expect(done.status, await done.clone().text()).toBe(200);
    expect(await done.json()).toEqual({ removedPasskeys: [lost.credentialId], endedSessions: 1 });
    await expectError(await send("/api/account", { session }), 401, "unauthorized");
    await expectError(await signIn(lost, { fetch: send }), 401, "unknown_passkey");
    expect((await signIn(found, { fetch: send })).status).toBe(200);
    expect(await count("challenges", "json_extract(pending, '$.accountId') = ?1", account.id)).toBe(
      0,
    );
    // No more asking, here or on any page.
    expect(await card(mine)).toBeNull();
    expect(await (await send("/keys", { session: mine })).text()).not.toContain("recovery-banner");
  });

  it("or keeps everything: the asking ends, nothing else changes", async () => {
    const { session, recovered: mine, account } = await recovered();
    expect((await addPasskey(mine, await SoftwareAuthenticator.create(ORIGIN), send)).status).toBe(
      201,
    );
    const kept = await secure(mine, { removePasskeys: [], endOtherSessions: false });
    expect(await kept.json()).toEqual({ removedPasskeys: [], endedSessions: 0 });
    expect(await count("passkeys", "account_id = ?1", account.id)).toBe(2);
    expect((await send("/api/account", { session })).status).toBe(200);
    expect(await card(mine)).toBeNull();
    // A session that never recovered has no card, and nothing asks it for a passkey first.
    expect(await card(session)).toBeNull();
    const plain = await secure(session, { removePasskeys: [], endOtherSessions: true });
    expect(await plain.json()).toEqual({ removedPasskeys: [], endedSessions: 1 });
    await expectError(await send("/api/account", { session: mine }), 401, "unauthorized");
  });
});

/** What the account's sessions' open challenges count against (limits.ts), one a session. */
async function sessionHolders(accountId: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT id FROM sessions WHERE account_id = ?1")
    .bind(accountId)
    .all<{ id: string }>();
  return results.map((r) => `session:${r.id}`);
}

describe("deleting an account", () => {
  async function confirmation(session: string, authenticator: SoftwareAuthenticator) {
    const begun = await send("/api/account/delete/options", { json: {}, session });
    expect(begun.status, await begun.clone().text()).toBe(200);
    const options = await begun.json<{
      challenge: string;
      rpId: string;
      allowCredentials: { id: string }[];
    }>();
    return { options, passkey: await authenticator.authenticate(options) };
  }

  it("needs a passkey of the account: its keys are refused, its passkeys, sessions, open challenges, codes, labels and name erased, its usage kept", async () => {
    const { session, authenticator, account } = await signUp({ displayName: "Erase me" });
    const created = await send("/api/keys", {
      json: { label: "to be erased", scopes: ["pets:read"] },
      session,
    });
    const { id, key } = await created.json<{ id: number; key: string }>();
    await send("/api/recovery-codes", { json: {}, session });
    await env.DB.prepare(
      "INSERT INTO api_key_usage (api_key_id, hour_start, operation, status, code, count) VALUES (?1, 3600, 'listPets', 200, '', 4)",
    )
      .bind(id)
      .run();
    // Open challenges: this session's and a second session's (adding a passkey), one made for the
    // account by a session that signed out since, and another account's, which stays.
    const second = setSession(await signIn(authenticator)).token as string;
    const signedOut = setSession(await signIn(authenticator)).token as string;
    const stranger = await signUp();
    for (const as of [session, second, signedOut, stranger.session]) {
      expect((await send("/api/passkeys/options", { json: {}, session: as })).status).toBe(200);
    }
    expect((await send("/api/sign-out", { json: {}, session: signedOut })).status).toBe(204);
    const held = await sessionHolders(account.id);
    expect(held).toHaveLength(2);
    const { options, passkey } = await confirmation(session, authenticator);
    expect(options.allowCredentials.map((c) => c.id)).toEqual([authenticator.credentialId]);
    const theirs = await sessionHolders(stranger.account.id);
    const open = (where: string, ...params: unknown[]) => count("challenges", where, ...params);
    expect(await open("json_extract(pending, '$.accountId') = ?1", account.id)).toBe(4);
    const deleted = await send("/api/account/delete", { json: { passkey }, session });
    expect(deleted.status, await deleted.clone().text()).toBe(204);
    expect(setSession(deleted).header).toMatch(/^__Host-session=;/);

    expect(await findApiKeyByHash(env.DB, await hashApiKey(key))).toMatchObject({ revoked: true });
    const row = await env.DB.prepare("SELECT label, revoked_at FROM api_keys WHERE id = ?1")
      .bind(id)
      .first();
    expect(row).toEqual({ label: "", revoked_at: expect.any(Number) });
    for (const table of ["passkeys", "sessions", "recovery_codes"]) {
      expect(await count(table, "account_id = ?1", account.id), table).toBe(0);
    }
    // Its open challenges went with it, not at the hourly purge; another account's stay.
    expect(await open("json_extract(pending, '$.accountId') = ?1", account.id)).toBe(0);
    for (const holder of held) expect(await open("holder = ?1", holder)).toBe(0);
    expect(await open("holder = ?1", theirs[0])).toBe(1);
    const stored = await env.DB.prepare(
      "SELECT display_name, deleted_at, disabled_at FROM accounts WHERE id = ?1",
    )
      .bind(account.id)
      .first();
    expect(stored).toEqual({
      display_name: "(deleted)",
      deleted_at: expect.any(Number),
      disabled_at: expect.any(Number),
    });
    expect(await count("api_key_usage", "api_key_id = ?1", id)).toBe(1);
    await expectError(await send("/api/account", { session }), 401, "unauthorized");
    await expectError(await signIn(authenticator), 401, "unknown_passkey");
  });

  it("refuses a session alone, another account's passkey, a sign-in challenge, and its own challenge for signing in", async () => {
    const victim = await signUp();
    const attacker = await signUp();
    // A stolen session without the passkey: the options' challenge needs an answer it cannot give.
    const forged = await confirmation(victim.session, attacker.authenticator);
    await expectError(
      await send("/api/account/delete", {
        json: { passkey: forged.passkey },
        session: victim.session,
      }),
      401,
      "sign_in_failed",
      /another one/,
    );
    // A plain sign-in challenge answered by the victim's passkey.
    const plain = await send("/api/sign-in/options", { json: {} });
    const response = await victim.authenticator.authenticate(await plain.json());
    await expectError(
      await send("/api/account/delete", { json: { passkey: response }, session: victim.session }),
      400,
      "invalid_challenge",
    );
    // The attacker's own deletion challenge, answered by the victim's passkey, sent with the victim's session.
    const theirs = await confirmation(attacker.session, victim.authenticator);
    await expectError(
      await send("/api/account/delete", {
        json: { passkey: theirs.passkey },
        session: victim.session,
      }),
      400,
      "invalid_challenge",
    );
    // A deletion challenge does not sign anyone in.
    const own = await confirmation(victim.session, victim.authenticator);
    await expectError(await send("/api/sign-in", { json: own.passkey }), 400, "invalid_challenge");
    // Cross-origin and without a session.
    await expectError(
      await send("/api/account/delete/options", {
        json: {},
        session: victim.session,
        origin: "https://evil.example",
      }),
      403,
      "cross_origin_request",
    );
    await expectError(await send("/api/account/delete/options", { json: {} }), 401, "unauthorized");
    await expectError(
      await send("/api/account/delete", { json: { passkey: own.passkey } }),
      401,
      "unauthorized",
    );
    expect(await count("accounts", "id = ?1 AND deleted_at IS NULL", victim.account.id)).toBe(1);
    expect(await count("accounts", "id = ?1 AND deleted_at IS NULL", attacker.account.id)).toBe(1);
  });
});

describe("keys: rotation names the successor, labels are edited", () => {
  it("a rotated key names the key that replaced it and cannot be rotated again", async () => {
    const { session } = await signUp();
    const created = await send("/api/keys", {
      json: { label: "old", scopes: ["pets:read"] },
      session,
    });
    const { id } = await created.json<{ id: number }>();
    const rotated = await send(`/api/keys/${id}/rotate`, { json: { graceSeconds: 3600 }, session });
    const body = await rotated.json<{
      id: number;
      replacedBy: null;
      previous: { replacedBy: number };
    }>();
    expect(body.replacedBy).toBeNull();
    expect(body.previous.replacedBy).toBe(body.id);
    expect(await (await send(`/api/keys/${id}`, { session })).json()).toMatchObject({
      replacedBy: body.id,
    });
    await expectError(
      await send(`/api/keys/${id}/rotate`, { json: {}, session }),
      409,
      "key_not_active",
      /replaced already/,
    );
    const page = await (await send(`/keys/${id}`, { session })).text();
    expect(page).toMatch(/Replaced by <a href="\/keys\/\d+">old \(<code>psk_/);
    expect(page).not.toContain('data-action="rotate"');
  });

  it("a label is edited under the name rules; another account's key is 404 like a missing one", async () => {
    const { session } = await signUp();
    const other = await signUp();
    const created = await send("/api/keys", {
      json: { label: "first", scopes: ["pets:read"] },
      session,
    });
    const { id } = await created.json<{ id: number }>();
    const relabel = (label: unknown, as = session, key = id) =>
      send(`/api/keys/${key}/label`, { json: { label }, session: as });
    const edited = await relabel("storefront <script>alert(1)</script>");
    expect(await edited.json()).toMatchObject({
      id,
      label: "storefront <script>alert(1)</script>",
    });
    expect(await (await send(`/keys/${id}`, { session })).text()).toContain(
      "storefront &lt;script&gt;",
    );
    for (const hostile of ["\u0301", "\u202eevil", "", "x".repeat(101)]) {
      const body = await expectError(await relabel(hostile), 400, "validation_failed");
      expect(body.details).toEqual([{ field: "label", message: expect.any(String) }]);
    }
    await expectError(await relabel("mine", other.session), 404, "not_found", "No such key.");
    await expectError(
      await relabel("mine", other.session, 999_999),
      404,
      "not_found",
      "No such key.",
    );
    await expectError(
      await send(`/api/keys/${id}/label`, { json: { label: "x" }, session, origin: "null" }),
      403,
      "cross_origin_request",
    );
    expect(await (await send(`/api/keys/${id}`, { session })).json()).toMatchObject({
      label: "storefront <script>alert(1)</script>",
    });
  });
});
