// API keys for every program that makes or checks them (the worker, the CLI, the platform):
// `psk_` + 32 random bytes + a tag keyed by API_KEY_TAG_SECRET (docs/keys.md "The key format").
import { base64url, hmacBase64url, sameMac, sha256Hex } from "../encoding.ts";

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

/** An issued key: the tagged body (`psk_` and the random part), then the tag. */
const ISSUED_KEY = /^(psk_[A-Za-z0-9_-]{43})([A-Za-z0-9_-]{22})$/;
const TAG_BYTES = 16;

/** The tag of a key whose first 47 characters are `body`, under `secret`. */
function tagOf(body: string, secret: string): Promise<string> {
  return hmacBase64url(secret, body, TAG_BYTES);
}

/** A new key, tagged with `secret` (the first of the environment's `tagSecrets`). */
export async function issueApiKey(secret: string): Promise<string> {
  const body = `${KEY_PREFIX}${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
  return `${body}${await tagOf(body, secret)}`;
}

/** Lower-case hex SHA-256 of the key: the only form in which a key is stored. */
export function hashApiKey(key: string): Promise<string> {
  return sha256Hex(key);
}

/** What a person sees in `keys list`: enough to recognise a key, useless to an attacker. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

/** Where the tag secrets come from: a worker's `env`, or the CLI's `process.env`. */
export interface TagSecretSource {
  ENVIRONMENT?: string | undefined;
  API_KEY_TAG_SECRET?: string | undefined;
  API_KEY_TAG_SECRET_PREVIOUS?: string | undefined;
}

/**
 * The tag secrets `env` accepts, the one to issue keys with first: API_KEY_TAG_SECRET and,
 * while the secret is rotated, API_KEY_TAG_SECRET_PREVIOUS. Locally (ENVIRONMENT "local")
 * without a secret, the public local one. Empty when a deployed environment has none (a
 * deployment mistake wrangler refuses to make).
 */
export function tagSecrets(env: TagSecretSource): string[] {
  const { API_KEY_TAG_SECRET: current, API_KEY_TAG_SECRET_PREVIOUS: previous } = env;
  if (current) return previous ? [current, previous] : [current];
  return env.ENVIRONMENT === "local" ? [LOCAL_KEY_TAG_SECRET] : [];
}

/**
 * What a bearer token is, before any lookup:
 * - `tagged`: an issued key whose tag one of `secrets` made (it may be seconds old);
 * - `unchecked`: `local-dev-key` in the local environment, or a key of the issued shape
 *   where the environment has no secret to check its tag with: it can only be a key that
 *   exists already;
 * - `invalid`: anything else, refused without a lookup.
 */
export async function keyFormat(
  token: string,
  secrets: readonly string[],
  environment: string,
): Promise<"tagged" | "unchecked" | "invalid"> {
  if (token === LOCAL_DEV_KEY) return environment === "local" ? "unchecked" : "invalid";
  const [, body, tag] = ISSUED_KEY.exec(token) ?? [];
  if (body === undefined || tag === undefined) return "invalid";
  if (secrets.length === 0) return "unchecked";
  for (const secret of secrets) {
    if (sameMac(tag, await tagOf(body, secret))) return "tagged";
  }
  return "invalid";
}
