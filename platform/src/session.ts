// Sessions (docs/platform.md, "Sessions"): a random token in the `__Host-session` cookie,
// stored only as its SHA-256, ended at its idle or absolute expiry, at sign-out and when its
// account is disabled.
import type { Context } from "hono";
import { deleteCookie, getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { serialize } from "hono/utils/cookie";
import { base64url, sha256Hex } from "../../src/encoding.ts";
import {
  SESSION_COOKIE,
  SESSION_IDLE_SECONDS,
  SESSION_MAX_SECONDS,
  SESSION_TOUCH_SECONDS,
} from "./config.ts";
import type { Account } from "./db/accounts.ts";
import type { NewSession } from "./db/sessions.ts";
import { endSession, findSession, startSession, touchSession } from "./db/sessions.ts";
import { browserName } from "./devices.ts";
import { PlatformError } from "./errors.ts";
import { nowOf } from "./time.ts";
import type { PlatformAppEnv } from "./types.ts";

type PlatformContext = Context<PlatformAppEnv>;

/**
 * The cookie's attributes: `HttpOnly` (no script reads it), `Secure` and `Path=/` (which the
 * `__Host-` prefix requires, with no Domain: this host alone), `SameSite=Strict` (no other
 * site's request carries it, the first defence against CSRF; request.ts is the second).
 */
const COOKIE = { httpOnly: true, secure: true, sameSite: "Strict", path: "/" } as const;

/** What the browser presented as its session token, hashed (undefined: no cookie). */
async function presentedHash(c: PlatformContext): Promise<string | undefined> {
  const token = getCookie(c, SESSION_COOKIE);
  return token ? sha256Hex(token) : undefined;
}

/**
 * A new session for the account: a new random token every time (never one the browser
 * brought), the row to store (its hash), and the hash of the session the browser
 * presented, which the caller ends in the same transaction.
 */
export async function newSession(
  c: PlatformContext,
  accountId: string,
  recovery = false,
): Promise<{ token: string; session: NewSession; replaced: string | undefined }> {
  const token = newSessionToken();
  const now = nowOf(c);
  return {
    token,
    session: {
      tokenHash: await sha256Hex(token),
      id: base64url(crypto.getRandomValues(new Uint8Array(16))),
      accountId,
      createdAt: now,
      expiresAt: now + SESSION_MAX_SECONDS,
      browser: browserName(c.req.header("User-Agent")),
      recovery,
    },
    replaced: await presentedHash(c),
  };
}

/**
 * Signs the account in: a new session, the presented one ended, the cookie set. A
 * session of a recovery code asks to secure the account (routes/account.ts).
 */
export async function signIn(c: PlatformContext, accountId: string, recovery = false) {
  const { token, session, replaced } = await newSession(c, accountId, recovery);
  await startSession(c.env.DB, session, replaced);
  setSessionCookie(c, token);
}

/** A new session token: 32 random bytes, base64url. */
function newSessionToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Sets the session cookie, replacing any Set-Cookie of this response (an ended session's clearing).
 */
export function setSessionCookie(c: PlatformContext, token: string): void {
  c.header(
    "Set-Cookie",
    serialize(SESSION_COOKIE, token, { ...COOKIE, maxAge: SESSION_MAX_SECONDS }),
  );
}

/** Clears the session cookie (sign-out, an ended or invalid session). */
export function clearSessionCookie(c: PlatformContext): void {
  deleteCookie(c, SESSION_COOKIE, COOKIE);
}

/** Ends the session the browser presented (sign-out), and clears its cookie. */
export async function signOut(c: PlatformContext): Promise<void> {
  const hash = await presentedHash(c);
  if (hash) await endSession(c.env.DB, hash);
  clearSessionCookie(c);
}

/**
 * Finds the account of the presented session, if the session is valid: known, not past
 * its absolute or idle expiry, its account not disabled. A session that is not valid ends
 * (its row is deleted: a disabled account's sessions do not come back when it is enabled)
 * and its cookie is cleared. Records the use at most every
 * SESSION_TOUCH_SECONDS.
 */
export const loadSession = createMiddleware<PlatformAppEnv>(async (c, next) => {
  c.set("account", undefined);
  c.set("session", undefined);
  const hash = await presentedHash(c);
  if (hash) {
    const session = await findSession(c.env.DB, hash);
    const now = nowOf(c);
    const valid =
      session !== null &&
      now < session.expiresAt &&
      now < session.lastSeenAt + SESSION_IDLE_SECONDS &&
      session.account.disabledAt === null;
    if (valid) {
      if (now - session.lastSeenAt >= SESSION_TOUCH_SECONDS)
        await touchSession(c.env.DB, hash, now);
      c.set("account", session.account);
      c.set("session", session);
    } else {
      if (session) await endSession(c.env.DB, hash);
      clearSessionCookie(c);
    }
  }
  await next();
});

/** The signed-in account, or 401 for a JSON endpoint. */
export function signedIn(c: PlatformContext): Account {
  const account = c.var.account;
  if (!account) {
    throw new PlatformError("unauthorized", "Sign in first: this needs a session.");
  }
  return account;
}
