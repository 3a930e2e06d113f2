// API key formats and hashing, shared by the worker and the `npm run keys` CLI.
// Runs on Web Crypto, which both workerd and Node 24 provide.
//
// A key is `psk_` + 43 base64url characters (32 random bytes) + a 22-character tag:
// the first 16 bytes of HMAC-SHA-256 over the key's first 47 characters, keyed by the
// environment's tag secret (API_KEY_TAG_SECRET). Only the holder of the secret can make
// a key that passes the tag, so the worker refuses any other token without a lookup,
// and may look a key with a valid tag up on the D1 primary when a lagging replica does
// not have it yet (a key created seconds ago). Keys issued before the tag (`psk_` + 43)
// keep working; they can only be looked up on a replica. docs/keys.md has the whole story.
import { base64url, sha256Hex } from "../encoding.ts";

/** Every issued key starts with this, so leaked keys are easy to recognise and scan for. */
export const KEY_PREFIX = "psk_";

/** The well-known key that `npm run dev` seeds into the LOCAL database only. */
export const LOCAL_DEV_KEY = "local-dev-key";

/**
 * The tag secret of local development and the tests (ENVIRONMENT "local"), used when no
 * API_KEY_TAG_SECRET is set. Public on purpose, like `local-dev-key`: it protects nothing
 * but a local database. Staging and production must have their own secret
 * (`wrangler secret put API_KEY_TAG_SECRET --env ...`); wrangler refuses to deploy without it.
 */
export const LOCAL_KEY_TAG_SECRET = "local-only API key tag secret; not a credential";

/** A key issued before tags: `psk_` + 43 base64url characters. */
export const UNTAGGED_KEY = /^psk_[A-Za-z0-9_-]{43}$/;
/** A tagged key: the same 47 characters (the tagged body), then a 22-character tag. */
export const TAGGED_KEY = /^(psk_[A-Za-z0-9_-]{43})([A-Za-z0-9_-]{22})$/;
const TAG_BYTES = 16;

const encoder = new TextEncoder();
const hmacKeys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    hmacKeys.set(secret, key);
  }
  return key;
}

/** The tag of a key whose first 47 characters are `body`, under `secret`. */
export async function tagOf(body: string, secret: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(body));
  return base64url(new Uint8Array(mac, 0, TAG_BYTES));
}

/** A new key, tagged with `secret` (the environment's API_KEY_TAG_SECRET). */
export async function issueApiKey(secret: string): Promise<string> {
  const body = `${KEY_PREFIX}${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
  return `${body}${await tagOf(body, secret)}`;
}

/** A key in the format issued before tags. Nothing issues these any more; tests make them. */
export function untaggedApiKey(): string {
  return `${KEY_PREFIX}${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** Lower-case hex SHA-256 of the key: the only form in which a key is stored. */
export async function hashApiKey(key: string): Promise<string> {
  return sha256Hex(key);
}

/** What a person sees in `keys list`: enough to recognise a key, useless to an attacker. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}
