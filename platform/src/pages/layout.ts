// The frame of every page and the small pieces pages share. Everything is built with
// Hono's `html` helper, which escapes every interpolated value (names and labels people
// typed included); `raw` is never given anything a person typed.
import type { Context } from "hono";
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { apiOrigins } from "../../../src/mcp-contract.ts";
import type { Account } from "../db/accounts.ts";
import type { PlatformAppEnv } from "../types.ts";

/** What Hono's `html` helper makes: HTML whose every interpolated value was escaped. */
export type Html = HtmlEscapedString;

/** The page's own files: served by Workers static assets from this origin (public/). */
const PAGE_ASSETS = {
  icon: "/favicon.svg",
  style: "/style.css",
  webauthn: "/vendor/simplewebauthn-browser.js",
  script: "/app.js",
} as const;

const dateTime = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "medium",
  timeStyle: "short",
  timeZone: "UTC",
});

/** An instant as people read it, in UTC, in a <time> element; `none` when there is none. */
export function time(iso: string | null, none = "Never"): Html {
  if (iso === null) return html`<span class="muted">${none}</span>` as Html;
  return html`<time datetime="${iso}">${dateTime.format(new Date(iso))} UTC</time>` as Html;
}

/** A path of this site to come back to after signing in (`/keys/12`), or undefined. */
export function localPath(value: string | undefined): string | undefined {
  return value && /^\/(?![/\\])[^\s]*$/.test(value) && value.length <= 2048 ? value : undefined;
}

/**
 * A whole page: the frame (navigation, the recovery banner of a recovery session, which the
 * account page's own card replaces) around `body`.
 */
export function page(
  c: Context<PlatformAppEnv>,
  view: { title: string; account: Account | undefined; body: Html; status?: 200 | 400 | 404 },
): Response | Promise<Response> {
  const nav = view.account
    ? html`<nav aria-label="Main">
        <a href="/keys" ${c.req.path.startsWith("/keys") ? html`aria-current="page"` : ""}>Keys</a>
        <a href="/account" ${c.req.path === "/account" ? html`aria-current="page"` : ""}>Account</a>
        <a href="${apiOrigins(c.env)[0]}/v1/docs">API reference</a>
        <button type="button" class="link" data-action="sign-out">Sign out</button>
      </nav>`
    : html`<nav aria-label="Main"><a href="${apiOrigins(c.env)[0]}/v1/docs">API reference</a></nav>`;
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${view.title} · Pet Store API developers</title>
<link rel="icon" href="${PAGE_ASSETS.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${PAGE_ASSETS.style}">
<script src="${PAGE_ASSETS.webauthn}" defer></script>
<script src="${PAGE_ASSETS.script}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/">Pet Store API <span>developers</span></a>
  ${nav}
</header>
<main id="main" tabindex="-1">
${
  c.var.session?.recovery && c.req.path !== "/account"
    ? html`<section id="recovery-banner" class="notice stack" aria-labelledby="recovery-banner-title">
  <h2 id="recovery-banner-title">Secure your account</h2>
  <p>You signed in with a recovery code: add a passkey on this device, then remove the passkey you lost and sign out everywhere else.</p>
  <p><a class="button primary" href="/account#secure">Secure it on the account page</a></p>
</section>`
    : ""
}
${view.body}
</main>
<p id="announce" class="visually-hidden" role="status" aria-live="polite"></p>
</body>
</html>`;
  return c.html(document, view.status ?? 200);
}

/** The page of a path with no page (404). */
export function notFoundPage(c: Context<PlatformAppEnv>) {
  return page(c, {
    title: "Not found",
    account: c.var.account,
    status: 404,
    body: html`<h1>Not found</h1><p>There is no such page here. <a href="/">Back to the start</a>.</p>` as Html,
  });
}
