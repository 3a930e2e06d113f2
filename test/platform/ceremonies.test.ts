// Passkey ceremonies with a software authenticator: sign-up, sign-in, and what the
// server refuses (expired and replayed challenges, wrong origin, RP or type, no user
// verification, a counter that goes back).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SoftwareAuthenticator } from "./authenticator.ts";
import { count, expectError, ORIGIN, send, setSession, signIn, signUp } from "./helpers.ts";

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
