// Sessions as the contract states them: a __Host- cookie (HttpOnly, Secure,
// SameSite=Strict, Path=/) holding a 256-bit token stored only hashed; 7 days idle, 30
// days at most; sign-out, sign-out everywhere; the hourly purge.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/encoding.ts";
import {
  count,
  expectError,
  movableClock,
  platformWith,
  runCron,
  send,
  setSession,
  signIn,
  signUp,
} from "./helpers.ts";

const DAY = 86_400;

describe("the session cookie", () => {
  it("is __Host-session: HttpOnly, Secure, SameSite=Strict, Path=/, no Domain, 30 days; only its hash is stored", async () => {
    const { authenticator } = await signUp();
    const response = await signIn(authenticator);
    const { token, header } = setSession(response);
    const attributes = header
      .split(/;\s*/)
      .slice(1)
      .map((a) => a.toLowerCase());
    expect(attributes.sort()).toEqual(
      ["httponly", "max-age=2592000", "path=/", "samesite=strict", "secure"].sort(),
    );
    // 256 random bits, base64url.
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await count("sessions", "token_hash = ?1", await sha256Hex(token ?? ""))).toBe(1);
    expect(await count("sessions", "token_hash = ?1", token)).toBe(0);
  });
});

describe("a session's life", () => {
  it("ends 7 days after its last use, counted from each use", async () => {
    const clock = movableClock();
    const fetch = platformWith({ clock });
    const { session } = await signUp({ fetch });
    clock.advance(4 * DAY);
    expect((await fetch("/api/account", { session })).status).toBe(200);
    clock.advance(7 * DAY - 1);
    expect((await fetch("/api/account", { session })).status).toBe(200);
    clock.advance(7 * DAY);
    const ended = await fetch("/api/account", { session });
    await expectError(ended, 401, "unauthorized");
    // The browser is told to drop the cookie, and the row is gone.
    expect(setSession(ended).header).toMatch(/^__Host-session=;.*Max-Age=0/i);
    expect(await count("sessions", "token_hash = ?1", await sha256Hex(session))).toBe(0);
  });

  it("ends 30 days after sign-in however often it is used", async () => {
    const clock = movableClock();
    const fetch = platformWith({ clock });
    const { session } = await signUp({ fetch });
    for (let day = 6; day < 30; day += 6) {
      clock.advance(6 * DAY);
      expect((await fetch("/api/account", { session })).status, `day ${day}`).toBe(200);
    }
    clock.advance(6 * DAY - 1); // 30 days less a second after sign-in
    expect((await fetch("/api/account", { session })).status).toBe(200);
    clock.advance(1);
    await expectError(await fetch("/api/account", { session }), 401, "unauthorized");
  });

  it("a token nobody issued, or a malformed cookie, is no session (401; pages send the visitor to the start)", async () => {
    for (const session of ["forged-token", "A".repeat(43), "%00;x"]) {
      await expectError(await send("/api/keys", { session }), 401, "unauthorized", /Sign in/);
      const page = await send("/account", { session });
      expect([page.status, page.headers.get("Location")]).toEqual([303, "/?next=%2Faccount"]);
    }
  });
});

describe("signing out", () => {
  it("ends this session only; the cookie is cleared and the old token no longer works", async () => {
    const { authenticator, session } = await signUp();
    const other = setSession(await signIn(authenticator)).token ?? "";
    const out = await send("/api/sign-out", { json: {}, session });
    expect(out.status).toBe(204);
    expect(setSession(out).header).toMatch(/^__Host-session=;.*Max-Age=0/i);
    await expectError(await send("/api/account", { session }), 401, "unauthorized");
    expect((await send("/api/account", { session: other })).status).toBe(200);
    // Without a session there is nothing to end: still 204.
    expect((await send("/api/sign-out", { json: {} })).status).toBe(204);
  });

  it("everywhere ends every session of the account and no other account's", async () => {
    const { authenticator, session, account } = await signUp();
    const more = [
      setSession(await signIn(authenticator)).token,
      setSession(await signIn(authenticator)).token,
    ];
    const stranger = await signUp();
    const out = await send("/api/sign-out-everywhere", { json: {}, session });
    expect(out.status).toBe(204);
    expect(setSession(out).header).toMatch(/Max-Age=0/i);
    for (const token of [session, ...more]) {
      await expectError(await send("/api/account", { session: token }), 401, "unauthorized");
    }
    expect(await count("sessions", "account_id = ?1", account.id)).toBe(0);
    expect((await send("/api/account", { session: stranger.session })).status).toBe(200);
    await expectError(await send("/api/sign-out-everywhere", { json: {} }), 401, "unauthorized");
  });
});

describe("the hourly purge", () => {
  it("removes expired challenges and ended sessions, and keeps live ones", async () => {
    const now = Math.floor(Date.now() / 1000);
    const { account } = await signUp();
    const rows = [
      ["challenges", "gone-challenge", "sign-in", now - 1],
      ["challenges", "live-challenge", "sign-in", now + 60],
    ] as const;
    for (const [, hash, purpose, expiresAt] of rows) {
      await env.DB.prepare(
        "INSERT INTO challenges (challenge_hash, purpose, expires_at) VALUES (?1, ?2, ?3)",
      )
        .bind(hash, purpose, expiresAt)
        .run();
    }
    const session = (hash: string, lastSeen: number, expiresAt: number) =>
      env.DB.prepare(
        "INSERT INTO sessions (token_hash, account_id, created_at, last_seen_at, expires_at) VALUES (?1, ?2, ?3, ?3, ?4)",
      )
        .bind(hash, account.id, lastSeen, expiresAt)
        .run();
    await session("idle", now - 7 * DAY, now + DAY);
    await session("old", now - DAY, now);
    await session("live", now - DAY, now + DAY);

    await runCron();

    const left = await env.DB.prepare(
      "SELECT challenge_hash AS id FROM challenges WHERE challenge_hash LIKE '%-challenge' UNION ALL SELECT token_hash FROM sessions WHERE token_hash IN ('idle', 'old', 'live')",
    ).all<{ id: string }>();
    expect(left.results.map((r) => r.id).sort()).toEqual(["live", "live-challenge"]);
  });
});
