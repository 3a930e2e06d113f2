// The platform's documented constants (docs/platform.md). Changing one changes the platform.
import type { Scope } from "../../src/scopes.ts";

/** The relying party's name, which authenticators show beside the passkey. */
export const RP_NAME = "Pet Store API";

/** A WebAuthn challenge is accepted once, within this many seconds of being issued. */
export const CHALLENGE_TTL_SECONDS = 5 * 60;
/**
 * Open challenges a client address (no session) and a session may hold; a new one ends the oldest.
 */
export const OPEN_CHALLENGES = { address: 10, session: 3 } as const;

/** The session cookie: `__Host-` binds it to this host, over HTTPS, for every path. */
export const SESSION_COOKIE = "__Host-session";
/** A session ends this long after its last use... */
export const SESSION_IDLE_SECONDS = 7 * 24 * 3600;
/** ...and this long after its sign-in, whatever its use. */
export const SESSION_MAX_SECONDS = 30 * 24 * 3600;
/** A session's last use is written at most this often, so idle expiry is exact to this. */
export const SESSION_TOUCH_SECONDS = 5 * 60;

/** Passkeys an account may hold (each one is a row and a key to check at every sign-in). */
export const MAX_PASSKEYS = 20;

/** Keys an account may hold that are neither revoked nor expired. */
export const MAX_ACTIVE_KEYS = 10;
/** Keys in one response of `GET /api/keys`; `Link: rel="next"` leads to older ones. */
export const KEYS_PAGE_SIZE = 50;
/** Keys an account may create or rotate in any hour (each is a new row and a new secret). */
export const MAX_KEY_CHANGES_PER_HOUR = 20;
/** A rotated key keeps working this long unless the rotation names another grace. */
export const DEFAULT_GRACE_SECONDS = 24 * 3600;
/** The longest grace a rotation may give the old key... */
export const MAX_GRACE_SECONDS = 30 * 24 * 3600;
/** ...and the longest expiry a new key may be given (a year and a day). */
export const MAX_EXPIRY_SECONDS = 366 * 24 * 3600;

/** The usage chart and its JSON cover this many UTC days, today included... */
export const USAGE_DAYS = 30;
/** ...and, hour by hour, this many hours, the current one included. */
export const USAGE_HOURS = 24;

/** A display name's length in characters (the name rules otherwise, src/pets/names.ts). */
export const DISPLAY_NAME_MAX = 64;
/** A key label's and a passkey name's length in characters, as a pet's name. */
export const LABEL_MAX = 100;

/** A registered OAuth client is purged this long after registering unless a grant made it a key. */
export const CLIENT_UNGRANTED_DAYS = 30;
/** The holder decides within this many seconds of opening the consent page. */
export const CONSENT_SECONDS = 10 * 60;
/** An authorization code is redeemed within this many seconds of the holder's Allow, once. */
export const CODE_SECONDS = 60;
/**
 * The lifetimes the consent page offers a client's key, in seconds (null: until revoked); the first
 * is preselected.
 */
export const KEY_LIFETIMES: ReadonlyArray<[seconds: number | null, words: string]> = [
  [30 * 86400, "In 30 days"],
  [7 * 86400, "In 7 days"],
  [90 * 86400, "In 90 days"],
  [365 * 86400, "In a year"],
  [null, "Never (until you revoke it)"],
];

/** Seconds a client over a sign-up or failed sign-in limit is told to wait (the window). */
export const LIMIT_RETRY_AFTER_SECONDS = 60;

/** Recovery codes an account gets at a time, each signing in once. */
export const RECOVERY_CODES = 10;

/**
 * Scopes a key may carry whose operations are not served yet (the API's listOrders
 * responds with 501 until its contract is published): the pages say so beside them.
 */
export const UNAVAILABLE_SCOPES: Partial<Record<Scope, string>> = {
  "orders:read":
    "Not yet available: GET /v1/store/orders responds with 501 until its contract is published.",
};
