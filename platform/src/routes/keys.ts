// An account's API keys: create (shown once, with a ready `curl` line), list, read,
// rotate with a grace period, revoke, and usage per day. Every query is bound to the
// signed-in account: another account's key id is 404 exactly like a missing one.
import type { Context } from "hono";
import { Hono } from "hono";
import { displayPrefix, hashApiKey, issueApiKey, tagSecrets } from "../../../src/auth/keys.ts";
import { parseKeyId } from "../../../src/db/listed-keys.ts";
import type { Scope } from "../../../src/scopes.ts";
import { DEFAULT_GRACE_SECONDS, KEYS_PAGE_SIZE, MAX_ACTIVE_KEYS } from "../config.ts";
import { pageAccountKeys } from "../db/key-pages.ts";
import type { ListedKey } from "../db/keys.ts";
import {
  createAccountKey,
  findAccountKey,
  isActiveKey,
  relabelAccountKey,
  revokeAccountKey,
  rotateAccountKey,
} from "../db/keys.ts";
import { keyUsage } from "../db/usage.ts";
import { PlatformError } from "../errors.ts";
import { keyChangesLimited } from "../limits.ts";
import { mcpCurlLine } from "../oauth/clients.ts";
import { bodyOf, stateChange } from "../request.ts";
import { CreateKeyBody, EmptyBody, LabelBody, RotateKeyBody } from "../schemas.ts";
import { signedIn } from "../session.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";

type C = Context<PlatformAppEnv>;

/** A new key, tagged with the environment's current tag secret, and its stored form. */
export async function newApiKey(env: Env) {
  const [secret] = tagSecrets(env);
  if (secret === undefined) throw new Error("API_KEY_TAG_SECRET is not set: no key can be issued");
  const key = await issueApiKey(secret);
  return { key, keyHash: await hashApiKey(key), prefix: displayPrefix(key) };
}

/** A first call with the key, to paste into a terminal: the first operation its scopes allow. */
export function curlLine(apiOrigin: string, key: string, scopes: readonly Scope[]): string {
  const auth = `-H "Authorization: Bearer ${key}"`;
  if (scopes.includes("pets:read")) return `curl ${auth} ${apiOrigin}/v1/pets`;
  if (scopes.includes("pets:write")) {
    return `curl ${auth} -H "Content-Type: application/json" -d '{"name":"Rex","categoryId":1}' ${apiOrigin}/v1/pets`;
  }
  return `curl ${auth} ${apiOrigin}/v1/store/orders`;
}

/** What the create and rotate answers add to the listed key: the key itself, once. */
function withSecret(c: C, listed: ListedKey, key: string) {
  const curl = listed.audience
    ? mcpCurlLine(c.env.API_ORIGIN, key)
    : curlLine(c.env.API_ORIGIN, key, listed.scopes);
  return { ...listed, key, curl };
}

/** The key of the path's id, if the signed-in account has it; else 404 like a missing id. */
async function ownKey(c: C): Promise<ListedKey> {
  const account = signedIn(c);
  const id = parseKeyId(c.req.param("id"));
  const key = id === undefined ? null : await findAccountKey(c.env.DB, account.id, id);
  if (!key) throw notFound();
  return key;
}

const notFound = () => new PlatformError("not_found", "No such key.");

/** The `before` of a page of keys: a key id, or none for the newest. */
function olderThan(before: string | undefined): number | undefined {
  if (before === undefined) return undefined;
  const id = parseKeyId(before);
  if (id !== undefined) return id;
  const message = "must be a key id: the one the Link header's next page names";
  throw new PlatformError("validation_failed", `Query parameter "before" ${message}.`, {
    details: [{ field: "before", message }],
  });
}

export const keyRoutes = new Hono<PlatformAppEnv>();

keyRoutes.get("/keys", async (c) => {
  const account = signedIn(c);
  const before = olderThan(c.req.query("before"));
  const { keys, more } = await pageAccountKeys(c.env.DB, account.id, {
    cursor: before === undefined ? undefined : { before },
    limit: KEYS_PAGE_SIZE,
    now: nowOf(c),
  });
  const last = keys.at(-1);
  if (more && last) c.header("Link", `</api/keys?before=${last.id}>; rel="next"`);
  return c.json(keys);
});

keyRoutes.post("/keys", stateChange, async (c) => {
  const account = signedIn(c);
  const body = bodyOf(c, CreateKeyBody);
  const now = nowOf(c);
  const issued = await newApiKey(c.env);
  const created = await createAccountKey(c.env.DB, {
    ...issued,
    accountId: account.id,
    label: body.label,
    scopes: body.scopes,
    now,
    expiresAt: body.expiresInSeconds == null ? null : now + body.expiresInSeconds,
  });
  if (!created) {
    throw (
      (await keyChangesLimited(c, account.id)) ??
      new PlatformError(
        "key_limit_reached",
        `An account may have ${MAX_ACTIVE_KEYS} active keys; revoke one before creating another.`,
      )
    );
  }
  c.header("Location", `/api/keys/${created.id}`);
  return c.json(withSecret(c, created, issued.key), 201);
});

keyRoutes.get("/keys/:id", async (c) => c.json(await ownKey(c)));

keyRoutes.post("/keys/:id/rotate", stateChange, async (c) => {
  const account = signedIn(c);
  const { graceSeconds = DEFAULT_GRACE_SECONDS } = bodyOf(c, RotateKeyBody);
  const old = await ownKey(c);
  const issued = await newApiKey(c.env);
  const rotated = await rotateAccountKey(c.env.DB, {
    ...issued,
    accountId: account.id,
    oldId: old.id,
    now: nowOf(c),
    graceSeconds,
  });
  if (!rotated) {
    if (old.replacedBy !== null) {
      throw new PlatformError(
        "key_not_active",
        "This key has been replaced already; rotate the key that replaced it instead.",
      );
    }
    const limited = await keyChangesLimited(c, account.id);
    if (limited) throw limited;
    throw isActiveKey(old, c.var.clock())
      ? new PlatformError(
          "key_limit_reached",
          `The account has ${MAX_ACTIVE_KEYS} active keys, and a grace period keeps the old key working beside the new one: revoke another key first, or rotate with graceSeconds 0.`,
        )
      : new PlatformError(
          "key_not_active",
          "This key is revoked or expired; create a new one instead.",
        );
  }
  c.header("Location", `/api/keys/${rotated.created.id}`);
  return c.json({ ...withSecret(c, rotated.created, issued.key), previous: rotated.previous }, 201);
});

keyRoutes.post("/keys/:id/label", stateChange, async (c) => {
  const account = signedIn(c);
  const { label } = bodyOf(c, LabelBody);
  const id = parseKeyId(c.req.param("id"));
  const key = id === undefined ? null : await relabelAccountKey(c.env.DB, account.id, id, label);
  if (!key) throw notFound();
  return c.json(key);
});

keyRoutes.post("/keys/:id/revoke", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  const id = parseKeyId(c.req.param("id"));
  const key = id === undefined ? null : await revokeAccountKey(c.env.DB, account.id, id, nowOf(c));
  if (!key) throw notFound();
  return c.json(key);
});

keyRoutes.get("/keys/:id/usage", async (c) => {
  const key = await ownKey(c);
  return c.json({ keyId: key.id, ...(await keyUsage(c.env.DB, key.id, nowOf(c))) });
});
