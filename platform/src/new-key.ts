// A new API key: issued under the environment's current tag secret (docs/keys.md), stored as its
// hash, and shown once with a first call to paste (`/v1` for a key, `/mcp` for an MCP client's).
import { displayPrefix, hashApiKey, issueApiKey, tagSecrets } from "../../src/auth/keys.ts";
import type { Scope } from "../../src/scopes.ts";
import type { ListedKey } from "./db/keys.ts";

/** A new key, tagged with the environment's current tag secret, and its stored form. */
export async function newApiKey(env: Env) {
  const [secret] = tagSecrets(env);
  if (secret === undefined) throw new Error("API_KEY_TAG_SECRET is not set: no key can be issued");
  const key = await issueApiKey(secret);
  return { key, keyHash: await hashApiKey(key), prefix: displayPrefix(key) };
}

/** A first call with the key, to paste into a terminal: the first operation its scopes allow. */
function curlLine(apiOrigin: string, key: string, scopes: readonly Scope[]): string {
  const auth = `-H "Authorization: Bearer ${key}"`;
  if (scopes.includes("pets:read")) return `curl ${auth} ${apiOrigin}/v1/pets`;
  if (scopes.includes("pets:write")) {
    return `curl ${auth} -H "Content-Type: application/json" -d '{"name":"Rex","categoryId":1}' ${apiOrigin}/v1/pets`;
  }
  return `curl ${auth} ${apiOrigin}/v1/store/orders`;
}

/** What the create and rotate responses add to the listed key: the key itself, once. */
export function withSecret(apiOrigin: string, listed: ListedKey, key: string) {
  const curl = listed.audience
    ? mcpCurlLine(apiOrigin, key)
    : curlLine(apiOrigin, key, listed.scopes);
  return { ...listed, key, curl };
}

/** A first call with a key granted to an MCP client: the tools it may call, at /mcp. */
function mcpCurlLine(apiOrigin: string, key: string): string {
  return `curl -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' ${apiOrigin}/mcp`;
}
