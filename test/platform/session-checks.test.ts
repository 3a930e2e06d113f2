// The session check of every request (platform/src/session.ts, loadSession) where the
// lifecycle tests of sessions.test.ts do not reach: a live session of an account disabled
// behind the command's back, and how often a session's last use is written (5 minutes).
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { sha256Hex } from "../../src/encoding.ts";
import {
  count,
  expectError,
  movableClock,
  platformWith,
  send,
  setSession,
  signIn,
  signUp,
} from "./helpers.ts";

const DAY = 86_400;
const TOUCH = 5 * 60;

/** The stored last use of the session whose token is `token` (unix seconds). */
async function lastSeen(token: string): Promise<number | undefined> {
  const row = await env.DB.prepare("SELECT last_seen_at FROM sessions WHERE token_hash = ?1")
    .bind(await sha256Hex(token))
    .first<{ last_seen_at: number }>();
  return row?.last_seen_at;
}

it("a session still stored for a disabled account is refused and ended, and does not come back when the account is enabled", async () => {
  const { session, account } = await signUp();
  expect((await send("/api/account", { session })).status).toBe(200);
  // Disabled without its sessions ended (as a sign-in racing the disable command leaves one).
  await env.DB.prepare("UPDATE accounts SET disabled_at = unixepoch() WHERE id = ?1")
    .bind(account.id)
    .run();
  expect(await count("sessions", "account_id = ?1", account.id)).toBe(1);
  const refused = await send("/api/account", { session });
  await expectError(refused, 401, "unauthorized", /Sign in/);
  expect(setSession(refused).header).toMatch(/^__Host-session=;.*Max-Age=0/i);
  expect(await count("sessions", "account_id = ?1", account.id)).toBe(0);
  await env.DB.prepare("UPDATE accounts SET disabled_at = NULL WHERE id = ?1")
    .bind(account.id)
    .run();
  await expectError(await send("/api/account", { session }), 401, "unauthorized");
  const page = await send("/keys", { session });
  expect([page.status, page.headers.get("Location")]).toEqual([303, "/?next=%2Fkeys"]);
});

it("a session's use is written once 5 minutes have passed since the last one written, not sooner; idle expiry counts from it", async () => {
  const clock = movableClock();
  const fetch = platformWith({ clock });
  const { session } = await signUp({ fetch });
  const signedUp = await lastSeen(session);
  expect(signedUp).toBe(Math.floor(clock.now / 1000));
  const use = async () => {
    const response = await fetch("/api/account", { session });
    expect(response.status).toBe(200);
    expect(setSession(response).header).toBe("");
  };
  clock.advance(TOUCH - 1);
  await use();
  expect(await lastSeen(session)).toBe(signedUp);
  clock.advance(1);
  await use();
  expect(await lastSeen(session)).toBe((signedUp ?? 0) + TOUCH);
  clock.advance(TOUCH - 1);
  await use();
  expect(await lastSeen(session)).toBe((signedUp ?? 0) + TOUCH);
  // 7 days after the last use written, the session ends: the later unwritten one does not count.
  clock.advance(7 * DAY - (TOUCH - 1));
  await expectError(await fetch("/api/account", { session }), 401, "unauthorized");
});

it("a passkey's sign-up and sign-in start ordinary sessions: only a recovery code's asks for a new passkey", async () => {
  const recoveryOf = async (token: string) =>
    (
      await env.DB.prepare("SELECT recovery FROM sessions WHERE token_hash = ?1")
        .bind(await sha256Hex(token))
        .first<{ recovery: number }>()
    )?.recovery;
  const { session, authenticator } = await signUp();
  expect(await recoveryOf(session)).toBe(0);
  const signedIn = await signIn(authenticator);
  expect(signedIn.status).toBe(200);
  const { token } = setSession(signedIn);
  expect(token).toBeTruthy();
  expect(await recoveryOf(token as string)).toBe(0);
  const keys = await send("/keys", { session: token as string });
  expect([keys.status, keys.headers.get("Location")]).toEqual([200, null]);
});
