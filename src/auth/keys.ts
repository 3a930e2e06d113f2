// API key format and hashing, shared by the worker and the `npm run keys` CLI.
// Runs on Web Crypto, which both workerd and Node 24 provide.
import { base64url, sha256Hex } from "../encoding.ts";

/** Every issued key starts with this, so leaked keys are easy to recognise and scan for. */
export const KEY_PREFIX = "psk_";

/** The well-known key that `npm run dev` seeds into the LOCAL database only. */
export const LOCAL_DEV_KEY = "local-dev-key";

/** 32 random bytes = 256 bits of entropy, base64url without padding. */
export function generateApiKey(): string {
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
