// What a bearer token is before any lookup, in the worker (keys.ts holds the formats,
// shared with the CLI; this part uses workerd's crypto.subtle.timingSafeEqual).
import { LOCAL_DEV_KEY, LOCAL_KEY_TAG_SECRET, TAGGED_KEY, tagOf, UNTAGGED_KEY } from "./keys.ts";

const encoder = new TextEncoder();

/**
 * What a bearer token is, before any lookup:
 * - `tagged`: a key whose tag one of `secrets` made (it may be new: the primary may be asked);
 * - `untagged`: a key of the format issued before tags, or a tagged one while the
 *   environment has no secret to check it with (looked up on a replica only);
 * - `local-dev`: the local development key, in the local environment;
 * - `invalid`: anything else, refused without a lookup.
 * `secrets` is empty when the environment has no tag secret.
 */
export async function keyFormat(
  token: string,
  secrets: readonly string[],
  environment: string,
): Promise<"tagged" | "untagged" | "local-dev" | "invalid"> {
  if (token === LOCAL_DEV_KEY) return environment === "local" ? "local-dev" : "invalid";
  if (UNTAGGED_KEY.test(token)) return "untagged";
  const parts = TAGGED_KEY.exec(token);
  if (!parts) return "invalid";
  if (secrets.length === 0) return "untagged";
  const [, body, tag] = parts as unknown as [string, string, string];
  const sent = encoder.encode(tag);
  for (const secret of secrets) {
    const expected = encoder.encode(await tagOf(body, secret));
    if (crypto.subtle.timingSafeEqual(sent, expected)) return "tagged";
  }
  return "invalid";
}

/**
 * The tag secrets `env` accepts, current first: API_KEY_TAG_SECRET and, during a rotation
 * of the secret, API_KEY_TAG_SECRET_PREVIOUS. Locally, without a secret, the public local
 * one. Empty when a deployed environment has none (a deployment mistake wrangler refuses;
 * keys then still work, looked up on a replica only).
 */
export function tagSecrets(env: Env): string[] {
  const { API_KEY_TAG_SECRET: current, API_KEY_TAG_SECRET_PREVIOUS: previous } = env as Env & {
    API_KEY_TAG_SECRET?: string;
    API_KEY_TAG_SECRET_PREVIOUS?: string;
  };
  const secrets = [current, previous].filter((s): s is string => typeof s === "string" && s !== "");
  if (secrets.length === 0 && env.ENVIRONMENT === "local") return [LOCAL_KEY_TAG_SECRET];
  return secrets;
}
