// An account's API keys: create (shown once, with a ready `curl` line), list, read,
// rotate with a grace period, revoke, and usage per day. Every query is bound to the
// signed-in account: another account's key id is 404 exactly like a missing one.
import type { Context } from "hono";
import { Hono } from "hono";
import { parseKeyId } from "../../../src/db/listed-keys.ts";
import { apiOrigins } from "../../../src/mcp-contract.ts";
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
import { newApiKey, withSecret } from "../new-key.ts";
import { bodyOf, clientAddress, stateChange } from "../request.ts";
import { CreateKeyBody, EmptyBody, LabelBody, RotateKeyBody } from "../schemas.ts";
import { signedIn } from "../session.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";

type C = Context<PlatformAppEnv>;

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

/** Under /api (routes/index.ts): every change passes `stateChange` (request.ts) first. */
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
    createdFrom: clientAddress(c),
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
  return c.json(withSecret(apiOrigins(c.env)[0], created, issued.key), 201);
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
    createdFrom: clientAddress(c),
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
  return c.json(
    {
      ...withSecret(apiOrigins(c.env)[0], rotated.created, issued.key),
      previous: rotated.previous,
    },
    201,
  );
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
