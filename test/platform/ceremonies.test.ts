// Passkey ceremonies with a software authenticator: sign-up, sign-in, and what the
// server refuses (expired and replayed challenges, wrong origin, RP or type, no user
// verification, a counter that goes back).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  disableAccountStatements,
  enableAccountStatement,
  parseAccountId,
} from "../../scripts/account-statements.ts";
import { SoftwareAuthenticator } from "./authenticator.ts";
import {
  count,
  expectError,
  movableClock,
  ORIGIN,
  platformWith,
  send,
  setSession,
  signIn,
  signUp,
} from "./helpers.ts";

describe("sign-up", () => {
  it("creates the account, its passkey and a session; the options ask for a discoverable, verified passkey", async () => {
    const authenticator = await SoftwareAuthenticator.create(ORIGIN);
    const begun = await send("/api/sign-up/options", { json: { displayName: "Ada's shop" } });
    expect(begun.status).toBe(200);
    const options = await begun.json<Parameters<SoftwareAuthenticator["register"]>[0]>();
    expect(options).toMatchObject({
      rp: { id: "localhost", name: "Pet Store API" },
      user: { name: "Ada's shop", displayName: "Ada's shop" },
      authenticatorSelection: { residentKey: "required", userVerification: "required" },
      attestation: "none",
      timeout: 300_000,
    });
    const done = await send("/api/sign-up", { json: await authenticator.register(options) });
    expect(done.status, await done.clone().text()).toBe(201);
    const account = await done.json<{ id: string }>();
    expect(account).toEqual({
      id: expect.stringMatching(/^acct_[A-Za-z0-9_-]{22}$/),
      displayName: "Ada's shop",
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    // The user handle the passkey keeps is the account id, nothing personal.
    expect(atob(options.user.id.replaceAll("-", "+").replaceAll("_", "/"))).toBe(account.id);
    const { token } = setSession(done);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(
      await count(
        "passkeys",
        "account_id = ?1 AND credential_id = ?2",
        account.id,
        authenticator.credentialId,
      ),
    ).toBe(1);
    const me = await send("/api/account", { session: token });
    expect(await me.json()).toMatchObject({
      id: account.id,
      displayName: "Ada's shop",
      passkeys: [
        { id: authenticator.credentialId, transports: ["internal", "hybrid"], lastUsedAt: null },
      ],
    });
  });

  it("refuses a display name that breaks the pet-name rules or is longer than 64 characters, naming the field", async () => {
    for (const displayName of ["", " ", "a\u0000b", "x\u202Ey", "n".repeat(65), 7]) {
      const body = await expectError(
        await send("/api/sign-up/options", { json: { displayName } }),
        400,
        "validation_failed",
        /displayName/,
      );
      expect(body.details).toEqual([expect.objectContaining({ field: "displayName" })]);
    }
    expect(
      (await send("/api/sign-up/options", { json: { displayName: "n".repeat(64) } })).status,
    ).toBe(200);
  });
});

describe("sign-in", () => {
  it("signs in with the passkey alone (a discoverable credential) and gives a new session each time", async () => {
    const { authenticator, session, account } = await signUp();
    const first = await signIn(authenticator);
    expect(first.status, await first.clone().text()).toBe(200);
    expect(await first.json()).toMatchObject({ id: account.id, displayName: account.displayName });
    const second = await signIn(authenticator);
    const [a, b] = [setSession(first).token, setSession(second).token];
    expect(new Set([session, a, b]).size).toBe(3);
    for (const token of [session, a, b]) {
      expect((await send("/api/account", { session: token })).status).toBe(200);
    }
    const row = await env.DB.prepare(
      "SELECT counter, last_used_at FROM passkeys WHERE credential_id = ?1",
    )
      .bind(authenticator.credentialId)
      .first();
    expect(row).toMatchObject({ counter: 2, last_used_at: expect.any(Number) });
  });
});

describe("what a ceremony must prove", () => {
  it("a challenge lasts 5 minutes: accepted at 4:59, refused at 5:00, for sign-up and sign-in", async () => {
    for (const [late, status] of [
      [299, 201],
      [300, 400],
    ] as const) {
      const clock = movableClock();
      const fetch = platformWith({ clock });
      const authenticator = await SoftwareAuthenticator.create(ORIGIN);
      const begun = await fetch("/api/sign-up/options", { json: { displayName: "Late" } });
      clock.advance(late);
      const done = await fetch("/api/sign-up", {
        json: await authenticator.register(await begun.json()),
      });
      if (status === 400) {
        await expectError(done, 400, "invalid_challenge", /expired or was already used/);
        expect(setSession(done).header).toBe("");
      } else {
        expect(done.status).toBe(201);
        const signInBegun = await fetch("/api/sign-in/options", { json: {} });
        clock.advance(300);
        const refused = await fetch("/api/sign-in", {
          json: await authenticator.authenticate(await signInBegun.json()),
        });
        await expectError(refused, 400, "invalid_challenge");
      }
    }
  });

  it("a challenge is used once: the same answer replayed is refused, and so is one made for another ceremony", async () => {
    const { authenticator } = await signUp();
    const begun = await send("/api/sign-in/options", { json: {} });
    const assertion = await authenticator.authenticate(await begun.json());
    expect((await send("/api/sign-in", { json: assertion })).status).toBe(200);
    await expectError(await send("/api/sign-in", { json: assertion }), 400, "invalid_challenge");
    // A sign-in challenge answered as a sign-up, a sign-up challenge as a sign-in.
    const other = await SoftwareAuthenticator.create(ORIGIN);
    const signInOptions = await (await send("/api/sign-in/options", { json: {} })).json<{
      challenge: string;
    }>();
    const signUpOptions = await (
      await send("/api/sign-up/options", { json: { displayName: "X" } })
    ).json<{
      challenge: string;
      rp: { id: string };
      user: { id: string };
    }>();
    const asSignUp = await other.register({ ...signUpOptions, challenge: signInOptions.challenge });
    await expectError(await send("/api/sign-up", { json: asSignUp }), 400, "invalid_challenge");
    const asSignIn = await authenticator.authenticate({
      challenge: signUpOptions.challenge,
      rpId: "localhost",
    });
    await expectError(await send("/api/sign-in", { json: asSignIn }), 400, "invalid_challenge");
  });

  it("refuses a passkey made for another origin, in a frame of another origin, for another RP ID, with the wrong type, or without user verification", async () => {
    // What each ceremony's client data or authenticator data falsifies, and the reason given.
    const forgeries = (wrongType: string) =>
      [
        [{ origin: "https://evil.example" }, /answered for another website/],
        [{ origin: "http://localhost:9999" }, /answered for another website/],
        [{ rpId: "evil.example" }, /could not be checked/],
        [{ type: wrongType }, /could not be checked/],
        [{ userVerified: false }, /did not confirm it was you/],
        [{ crossOrigin: true }, /inside another website/],
      ] as const;
    for (const [forgery, reason] of forgeries("webauthn.get")) {
      const authenticator = await SoftwareAuthenticator.create(ORIGIN);
      const begun = await send("/api/sign-up/options", { json: { displayName: "Mallory" } });
      const done = await send("/api/sign-up", {
        json: await authenticator.register(await begun.json(), forgery),
      });
      const body = await expectError(done, 400, "passkey_rejected", reason);
      // Words a person uses: none of the library's (RP ID, counter, "expected").
      expect(body.message).not.toMatch(/RP ID|expected|counter|clientData|authData/i);
      expect(await count("passkeys", "credential_id = ?1", authenticator.credentialId)).toBe(0);
    }
    const { authenticator } = await signUp();
    for (const [forgery, reason] of forgeries("webauthn.create")) {
      const refused = await signIn(authenticator, { forgery });
      const body = await expectError(refused, 401, "sign_in_failed", reason);
      expect(body.message).not.toMatch(/RP ID|expected|counter|clientData|authData/i);
      expect(setSession(refused).header).toBe("");
    }
  });

  it("refuses a signature counter that does not grow; a passkey that always says 0 (synced passkeys) may sign in", async () => {
    const { authenticator } = await signUp();
    expect((await signIn(authenticator, { forgery: { counter: 5 } })).status).toBe(200);
    for (const counter of [5, 4, 0]) {
      const body = await expectError(
        await signIn(authenticator, { forgery: { counter } }),
        401,
        "sign_in_failed",
        /fewer uses than it had before, which is how a copied passkey looks/,
      );
      expect(body.message).not.toMatch(/counter|expected|\d/);
    }
    expect((await signIn(authenticator, { forgery: { counter: 6 } })).status).toBe(200);
    // A forged signature says nothing of the counter: the signature is checked first.
    const stranger = await SoftwareAuthenticator.create(ORIGIN);
    const begun = await send("/api/sign-in/options", { json: {} });
    const forged = await stranger.authenticate(await begun.json(), {
      counter: 1,
      userHandle: authenticator.userHandle,
    });
    const body = await expectError(
      await send("/api/sign-in", {
        json: { ...forged, id: authenticator.credentialId, rawId: authenticator.credentialId },
      }),
      401,
      "sign_in_failed",
      /could not be checked/,
    );
    expect(body.message).not.toMatch(/copied/);

    const synced = await signUp();
    for (let i = 0; i < 2; i++) {
      expect((await signIn(synced.authenticator, { forgery: { counter: 0 } })).status).toBe(200);
    }
  });

  it("refuses an unknown passkey, a forged signature, and a user handle that is not the passkey's account", async () => {
    const stranger = await SoftwareAuthenticator.create(ORIGIN);
    // Unknown: its own code, so the page can tell the browser (the WebAuthn signal API).
    await expectError(
      await signIn(stranger, { forgery: { userHandle: "YWNjdF94" } }),
      401,
      "unknown_passkey",
      /not registered here/,
    );
    const { authenticator } = await signUp();
    const other = await signUp();
    await expectError(
      await signIn(authenticator, { forgery: { userHandle: other.authenticator.userHandle } }),
      401,
      "sign_in_failed",
    );
    // The right credential id, signed by another key.
    const begun = await send("/api/sign-in/options", { json: {} });
    const forged = await stranger.authenticate(await begun.json());
    const assertion = {
      ...forged,
      id: authenticator.credentialId,
      rawId: authenticator.credentialId,
    };
    delete (assertion.response as { userHandle?: string }).userHandle;
    await expectError(await send("/api/sign-in", { json: assertion }), 401, "sign_in_failed");
  });

  it("refuses a body that is not a passkey answer, naming the field", async () => {
    const body = await expectError(
      await send("/api/sign-in", { json: { id: "abc" } }),
      400,
      "validation_failed",
    );
    expect(body.message).toMatch(/rawId|type|response/);
    await expectError(await send("/api/sign-up", { json: [] }), 400, "validation_failed");
    await expectError(
      await send("/api/sign-in", {
        json: {
          id: "a",
          rawId: "a",
          type: "public-key",
          response: { clientDataJSON: "e30", authenticatorData: "AA", signature: "AA" },
        },
      }),
      400,
      "invalid_challenge",
    );
  });
});

describe("passkeys of an account", () => {
  it("adds a second passkey that then signs in; removes any but the last", async () => {
    const { authenticator, session, account } = await signUp();
    const second = await SoftwareAuthenticator.create(ORIGIN);
    const begun = await send("/api/passkeys/options", { json: {}, session });
    const options = await begun.json<
      Parameters<SoftwareAuthenticator["register"]>[0] & { excludeCredentials: { id: string }[] }
    >();
    expect(options.excludeCredentials.map((c) => c.id)).toEqual([authenticator.credentialId]);
    const added = await send("/api/passkeys", { json: await second.register(options), session });
    expect(added.status, await added.clone().text()).toBe(201);
    expect(await added.json()).toMatchObject({ id: second.credentialId, lastUsedAt: null });
    const signedIn = await signIn(second);
    expect(await signedIn.json()).toMatchObject({ id: account.id });

    const remove = (id: string) =>
      send(`/api/passkeys/${id}`, { method: "DELETE", json: {}, session });
    const removed = await remove(authenticator.credentialId);
    expect(removed.status).toBe(204);
    await expectError(await signIn(authenticator), 401, "unknown_passkey");
    await expectError(await remove(second.credentialId), 409, "last_passkey", /only passkey/);
    expect(await count("passkeys", "account_id = ?1", account.id)).toBe(1);
    await expectError(await remove(authenticator.credentialId), 404, "not_found");
  });

  it("refuses a passkey already registered (to this or another account), and a challenge of another session", async () => {
    const first = await signUp();
    const second = await signUp();
    const begun = await send("/api/passkeys/options", { json: {}, session: second.session });
    const again = await first.authenticator.register(await begun.json());
    await expectError(
      await send("/api/passkeys", { json: again, session: second.session }),
      409,
      "passkey_exists",
    );
    expect(await count("passkeys", "account_id = ?1", second.account.id)).toBe(1);

    const mine = await send("/api/passkeys/options", { json: {}, session: first.session });
    const fresh = await SoftwareAuthenticator.create(ORIGIN);
    const response = await fresh.register(await mine.json());
    await expectError(
      await send("/api/passkeys", { json: response, session: second.session }),
      400,
      "invalid_challenge",
      /another session/,
    );
    expect(await count("passkeys", "credential_id = ?1", fresh.credentialId)).toBe(0);
  });
});

describe("a disabled account (npm run accounts -- disable, enable)", () => {
  /** The batch of `npm run accounts -- disable`: its rows per statement. */
  const disable = async (id: string) =>
    (
      await env.DB.batch(
        disableAccountStatements(id, Math.floor(Date.now() / 1000)).map((sql) =>
          env.DB.prepare(sql),
        ),
      )
    ).map((result) => result.results);

  it("cannot sign in, and its sessions stop working at once", async () => {
    const { authenticator, session, account } = await signUp();
    expect((await send("/api/account", { session })).status).toBe(200);
    const [disabled, ended] = await disable(account.id);
    expect(disabled).toHaveLength(1);
    expect(ended).toHaveLength(1); // the session of the sign-up, ended by the command itself
    expect(await count("sessions", "account_id = ?1", account.id)).toBe(0);
    await expectError(await send("/api/account", { session }), 401, "unauthorized");
    const page = await send("/keys", { session });
    expect(page.status).toBe(303);
    expect(page.headers.get("Location")).toBe("/?next=%2Fkeys");
    const refused = await signIn(authenticator);
    await expectError(refused, 403, "account_disabled");
    expect(setSession(refused).header).toBe("");
    expect(await count("sessions", "account_id = ?1", account.id)).toBe(0);
  });

  it("enabled again, signs in with its passkey; an id no account has changes nothing", async () => {
    const { authenticator, account } = await signUp();
    await disable(account.id);
    await expectError(await signIn(authenticator), 403, "account_disabled");
    const [enabled] = (await env.DB.prepare(enableAccountStatement(account.id)).all()).results;
    expect(enabled).toMatchObject({ id: account.id, disabled_at: null });
    const signedIn = await signIn(authenticator);
    expect(signedIn.status).toBe(200);
    const { token } = setSession(signedIn);
    expect((await send("/api/account", { session: token })).status).toBe(200);
    expect(await disable("acct_AAAAAAAAAAAAAAAAAAAAAA")).toEqual([[], []]);
  });

  it("the ids the platform makes are the ids the command reads", async () => {
    const { account } = await signUp();
    expect(parseAccountId(account.id)).toBe(account.id);
  });
});
