// The pages (docs/platform.md, "Pages"): each reads what it shows and hands it to its view in
// pages/. Pages only read: every change is a JSON request (public/app.js), checked as such.
import type { Context } from "hono";
import { Hono } from "hono";
import { parseKeyId } from "../../../src/db/listed-keys.ts";
import { KEYS_PAGE_SIZE } from "../config.ts";
import type { KeysCursor } from "../db/key-pages.ts";
import { keysPage } from "../db/key-pages.ts";
import { findAccountKey } from "../db/keys.ts";
import { listPasskeys } from "../db/passkeys.ts";
import { countRecoveryCodes } from "../db/recovery-codes.ts";
import { listSessions } from "../db/sessions.ts";
import { keyUsage } from "../db/usage.ts";
import { accountPage } from "../pages/account.ts";
import { keyPage } from "../pages/key.ts";
import { keyListPage } from "../pages/keys.ts";
import { localPath, notFoundPage } from "../pages/layout.ts";
import { startPage, welcomePage } from "../pages/start.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";

type C = Context<PlatformAppEnv>;

/** Where a page that needs a session sends a browser without one: sign in, then back here. */
function toSignIn(c: C) {
  const url = new URL(c.req.url);
  return c.redirect(`/?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
}

/**
 * Where a page of the keys list starts: `before` or `after` a key id; anything else is the newest.
 */
function keysCursor(c: C): KeysCursor {
  const before = parseKeyId(c.req.query("before"));
  if (before !== undefined) return { before };
  const after = parseKeyId(c.req.query("after"));
  return after === undefined ? undefined : { after };
}

/** At the origin's root, last in the route table: its `*` is the 404 page of every other GET. */
export const pageRoutes = new Hono<PlatformAppEnv>();

pageRoutes.get("/", (c) => {
  const next = localPath(c.req.query("next"));
  if (c.var.account) return c.redirect(next ?? "/keys", 303);
  return startPage(c, { next, deleted: c.req.query("deleted") !== undefined });
});

pageRoutes.get("/welcome", async (c) => {
  const account = c.var.account;
  if (!account) return toSignIn(c);
  // Where sign-up was asked from (a consent page), else the keys.
  const next = localPath(c.req.query("next"));
  const [passkeys, codes] = await Promise.all([
    listPasskeys(c.env.DB, account.id),
    countRecoveryCodes(c.env.DB, account.id),
  ]);
  return welcomePage(c, { account, passkeys, codes, next });
});

pageRoutes.get("/keys", async (c) => {
  const account = c.var.account;
  if (!account) return toSignIn(c);
  const showEnded = c.req.query("show") === "ended";
  const cursor = keysCursor(c);
  const list = await keysPage(c.env.DB, account.id, {
    cursor,
    limit: KEYS_PAGE_SIZE,
    filter: showEnded ? "ended" : "active",
    now: nowOf(c),
  });
  return keyListPage(c, { account, list, showEnded, cursor });
});

pageRoutes.get("/keys/:id", async (c) => {
  const account = c.var.account;
  if (!account) return toSignIn(c);
  const id = parseKeyId(c.req.param("id"));
  const key = id === undefined ? null : await findAccountKey(c.env.DB, account.id, id);
  if (!key) return notFoundPage(c);
  const successor =
    key.replacedBy === null ? null : await findAccountKey(c.env.DB, account.id, key.replacedBy);
  const usage = await keyUsage(c.env.DB, key.id, nowOf(c));
  return keyPage(c, { account, key, successor, usage });
});

pageRoutes.get("/account", async (c) => {
  const account = c.var.account;
  if (!account) return toSignIn(c);
  const [passkeys, codes, sessions] = await Promise.all([
    listPasskeys(c.env.DB, account.id),
    countRecoveryCodes(c.env.DB, account.id),
    listSessions(c.env.DB, account.id, nowOf(c)),
  ]);
  return accountPage(c, { account, passkeys, codes, sessions });
});

pageRoutes.get("*", (c) => notFoundPage(c));
