// The pages: the front door, the welcome after sign-up, the keys, one key with its usage and the
// account. Pages only read: every change is a JSON request (public/app.js), checked as such.
import type { Context } from "hono";
import { Hono } from "hono";
import { html } from "hono/html";
import { isoTime } from "../../../src/clock.ts";
import { parseKeyId } from "../../../src/db/listed-keys.ts";
import { SCOPE_DESCRIPTIONS, SCOPES } from "../../../src/scopes.ts";
import { KEYS_PAGE_SIZE, MAX_ACTIVE_KEYS, RECOVERY_CODES, UNAVAILABLE_SCOPES } from "../config.ts";
import type { KeysCursor } from "../db/key-pages.ts";
import { keysPage } from "../db/key-pages.ts";
import type { ListedKey } from "../db/keys.ts";
import { findAccountKey, isActiveKey } from "../db/keys.ts";
import { listPasskeys } from "../db/passkeys.ts";
import { countRecoveryCodes } from "../db/recovery-codes.ts";
import { listSessions } from "../db/sessions.ts";
import { keyUsage } from "../db/usage.ts";
import { accountJson, passkeyJson, sessionJson } from "../responses.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";
import { userHandleOf } from "../webauthn.ts";
import type { Html } from "./layout.ts";
import { localPath, page, time } from "./layout.ts";
import { usageSection } from "./usage.ts";

type C = Context<PlatformAppEnv>;

/** Where a key stands at `now` (ms): a word, a CSS class, and when it ends or ended. */
function keyState(key: ListedKey, now: number): { word: string; tone: string; when: Html | "" } {
  if (key.revokedAt !== null) return { word: "Revoked", tone: "off", when: time(key.revokedAt) };
  if (!isActiveKey(key, now)) return { word: "Expired", tone: "off", when: time(key.expiresAt) };
  if (key.replacedBy !== null) {
    return { word: "Replaced", tone: "warn", when: html`stops ${time(key.expiresAt)}` as Html };
  }
  return {
    word: "Active",
    tone: "on",
    when: key.expiresAt === null ? "" : (html`expires ${time(key.expiresAt)}` as Html),
  };
}

const scopeList = (key: ListedKey) =>
  html`<ul class="scopes">${key.scopes.map(
    (s) =>
      html`<li><code>${s}</code>${UNAVAILABLE_SCOPES[s] ? html` <span class="muted">(not yet available)</span>` : ""}</li>`,
  )}</ul>`;

/** Marks a key granted to an MCP client by OAuth (audience /mcp). */
const MCP_BADGE = html` <span class="badge mcp">MCP client</span>`;

/**
 * The panel in which a new key is shown once (filled by app.js after create or rotate),
 * with how an AI agent uses it: the API's MCP server (docs/agents.md).
 */
const newKeyPanel = (
  apiOrigin: string,
) => html`<section id="new-key" class="reveal" hidden tabindex="-1" aria-labelledby="new-key-title">
  <h2 id="new-key-title">Your new key</h2>
  <p><strong>Copy it now.</strong> It is shown only this once; we keep only a hash of it.</p>
  <div class="copyable"><code id="new-key-value" class="secret"></code><button type="button" data-copy="new-key-value">Copy key</button></div>
  <h3>Try it</h3>
  <div class="copyable"><pre><code id="new-key-curl"></code></pre><button type="button" data-copy="new-key-curl">Copy command</button></div>
  <p id="new-key-mcp">For an AI agent: give its MCP client the server <code>${apiOrigin}/mcp</code> and this key in an <code>Authorization: Bearer</code> header. It sees the tools the key's scopes allow, nothing more (the guide: docs/agents.md in the API's repository).</p>
  <p><a id="new-key-page" href="/keys">See the new key's usage and settings</a></p>
</section>`;

/** The panel in which new recovery codes are shown once (filled by app.js). */
const RECOVERY_CODES_PANEL = html`<section id="recovery-codes-panel" class="reveal" hidden tabindex="-1" aria-labelledby="recovery-codes-panel-title">
  <h3 id="recovery-codes-panel-title">Your recovery codes</h3>
  <p><strong>Save them now</strong> in your password manager or on paper: they are shown only this once. Each one signs you in once, if you lose your passkeys.</p>
  <ol id="recovery-codes-list" class="codes"></ol>
  <button type="button" data-copy="recovery-codes-list">Copy codes</button>
</section>`;

/** A field's error slot: filled by app.js next to the field it is about. */
const fieldError = (id: string) => html`<p id="${id}-error" class="field-error" hidden></p>`;

/** Where a page that needs a session sends a browser without one: sign in, then back here. */
function toSignIn(c: C) {
  const url = new URL(c.req.url);
  return c.redirect(`/?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
}

function notFoundPage(c: C) {
  return page(c, {
    title: "Not found",
    account: c.var.account,
    status: 404,
    body: html`<h1>Not found</h1><p>There is no such page here. <a href="/">Back to the start</a>.</p>` as Html,
  });
}

/** A card that the rename buttons open (app.js): a field with the current value. */
function renameForm(what: {
  action: string;
  id: string;
  field: string;
  label: string;
  value: string;
  max: number;
  data: Html;
}) {
  return html`<form data-action="${what.action}" ${what.data} id="${what.id}" class="rename" hidden>
  <div class="field">
    <label for="${what.id}-field">${what.label}</label>
    <input id="${what.id}-field" name="${what.field}" value="${what.value}" required maxlength="${what.max}" data-noun="${what.label}" aria-describedby="${what.id}-field-error">
    ${fieldError(`${what.id}-field`)}
  </div>
  <div class="buttons"><button type="submit" class="primary">Save</button><button type="button" data-cancel="${what.id}">Cancel</button></div>
</form>`;
}

export const pageRoutes = new Hono<PlatformAppEnv>();

pageRoutes.get("/", (c) => {
  const next = localPath(c.req.query("next"));
  if (c.var.account) return c.redirect(next ?? "/keys", 303);
  const notice =
    c.req.query("deleted") !== undefined
      ? html`<p id="notice" class="notice" tabindex="-1">Your account is deleted. Its keys stop working within a minute.</p>`
      : next
        ? html`<p id="notice" class="notice" tabindex="-1">Your session has ended. Sign in, and you will be back where you were.</p>`
        : "";
  return page(c, {
    title: "Get an API key",
    account: undefined,
    body: html`${notice}<section class="hero">
  <h1>Get a key for the Pet Store API</h1>
  <p>Create an account with a passkey (your device's screen lock, a security key or your password manager), create a key, and make your first call a minute from now. No password, no e-mail.</p>
</section>
<p id="no-webauthn" class="notice" hidden>This browser cannot use passkeys. Try a current version of Chrome, Edge, Firefox or Safari.</p>
<div class="columns" data-next="${next ?? "/keys"}">
  <section class="card" aria-labelledby="sign-up-title">
    <h2 id="sign-up-title">New here?</h2>
    <form data-action="sign-up" class="stack" novalidate>
      <div class="field">
        <label for="display-name">Your name, or your team's</label>
        <input id="display-name" name="displayName" required maxlength="64" autocomplete="nickname" data-noun="Your name" aria-describedby="display-name-hint display-name-error">
        <p id="display-name-hint" class="hint">Your passkey is saved under this name. 1 to 64 characters.</p>
        ${fieldError("display-name")}
      </div>
      <button type="submit" class="primary" data-needs-webauthn>Create account with a passkey</button>
    </form>
  </section>
  <section class="card" aria-labelledby="sign-in-title">
    <h2 id="sign-in-title">Have an account?</h2>
    <form data-action="sign-in" class="stack" novalidate>
      <div class="field">
        <label for="passkey-field">Your passkey</label>
        <input id="passkey-field" name="passkey" autocomplete="username webauthn" aria-describedby="passkey-field-hint">
        <p id="passkey-field-hint" class="hint">Your browser may offer your passkey here; or press the button.</p>
      </div>
      <button type="submit" data-needs-webauthn>Sign in with a passkey</button>
    </form>
    <details id="recover" class="recover">
      <summary>Lost your passkeys? Use a recovery code</summary>
      <form data-action="recover" class="stack" novalidate>
        <div class="field">
          <label for="recovery-code">Recovery code</label>
          <input id="recovery-code" name="code" required maxlength="64" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" data-noun="The recovery code" aria-describedby="recovery-code-hint recovery-code-error">
          <p id="recovery-code-hint" class="hint">One of the codes you saved, such as 7KQ4-M2ZD-9XWB-H3TR. Each works once.</p>
          ${fieldError("recovery-code")}
        </div>
        <button type="submit">Sign in with the code</button>
      </form>
    </details>
  </section>
</div>` as Html,
  });
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
  return page(c, {
    title: "Welcome",
    account,
    body: html`<h1 id="welcome-title" tabindex="-1">Your account is ready</h1>
<p class="lead">Two steps keep you from being locked out if you lose this device. Both take a moment; you can also do them later on your account page.</p>
<ol class="steps">
  <li id="second-passkey" class="card">
    <h2 id="second-passkey-title" tabindex="-1">Add a second passkey</h2>
    ${
      passkeys.length > 1
        ? html`<p class="done">Done: you have ${passkeys.length} passkeys (${passkeys.map((p) => p.name).join(", ")}).</p>`
        : html`<p>On another device, a security key, or a password manager you use elsewhere. Either passkey then signs you in.</p>
    <button type="button" class="primary" data-action="add-passkey" data-needs-webauthn>Add another passkey</button>`
    }
  </li>
  <li id="recovery" class="card">
    <h2 id="recovery-title" tabindex="-1">Save recovery codes</h2>
    ${
      codes > 0
        ? html`<p class="done">Done: you have ${codes} of ${RECOVERY_CODES} recovery codes left.</p>`
        : html`<p>${RECOVERY_CODES} codes, each of which signs you in once if you lose your passkeys. Keep them somewhere safe.</p>
    <button type="button" data-action="create-recovery-codes" data-has-codes="0">Create recovery codes</button>`
    }
    ${RECOVERY_CODES_PANEL}
  </li>
</ol>
<p><a class="button primary" href="${next ?? "/keys"}">${next ? "Continue where you were" : "Continue to your keys"}</a></p>` as Html,
  });
});

/** Where a page of the keys list starts: `before` or `after` a key id; anything else is the newest. */
function keysCursor(c: C): KeysCursor {
  const before = parseKeyId(c.req.query("before"));
  if (before !== undefined) return { before };
  const after = parseKeyId(c.req.query("after"));
  return after === undefined ? undefined : { after };
}

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
  const now = c.var.clock();
  const full = list.active >= MAX_ACTIVE_KEYS;
  const rows = list.keys.map((key) => {
    const state = keyState(key, now);
    return html`<tr>
  <th scope="row" data-label="Key"><a href="/keys/${key.id}">${key.label}</a>${key.audience ? MCP_BADGE : ""}<br><code class="muted">${key.prefix}…</code></th>
  <td data-label="Scopes">${scopeList(key)}</td>
  <td data-label="Created">${time(key.createdAt)}</td>
  <td data-label="Last used">${time(key.lastUsedAt)}</td>
  <td data-label="Status"><span class="badge ${state.tone}">${state.word}</span>${state.when ? html` <span class="when">${state.when}</span>` : ""}${key.replacedBy !== null && key.successorPrefix !== null ? html`<br><span class="when">by <a href="/keys/${key.replacedBy}">${key.successorPrefix}…</a></span>` : ""}</td>
</tr>`;
  });
  const which = showEnded ? "ended" : "active";
  const listUrl = (at: Record<string, number> = {}) => {
    const query = new URLSearchParams({ ...(showEnded ? { show: "ended" } : {}), ...at });
    return `/keys${query.size > 0 ? `?${query}` : ""}#keys`;
  };
  const tab = (ended: boolean, text: string, n: number) =>
    html`<a class="tab" href="/keys${ended ? "?show=ended" : ""}" ${ended === showEnded ? html`aria-current="page"` : ""}>${text} <span class="count">${n}</span></a>`;
  const first = list.keys[0];
  const last = list.keys.at(-1);
  const pager =
    list.newer || list.older
      ? html`<nav class="pager" aria-label="Pages of ${which} keys">${list.newer && first ? html`<a href="${listUrl({ after: first.id })}" rel="prev">Newer ${which} keys</a>` : ""}${list.older && last ? html`<a href="${listUrl({ before: last.id })}" rel="next">Older ${which} keys</a>` : ""}</nav>`
      : "";
  const total = list.active + list.ended;
  return page(c, {
    title: "API keys",
    account,
    body: html`<div class="page-head">
  <h1 id="keys-heading" tabindex="-1">API keys</h1>
  <div class="head-side">
    <p id="key-count" class="muted">${list.active} of ${MAX_ACTIVE_KEYS} active keys</p>
    ${total > 0 ? html`<a class="button" href="#create">Create a key</a>` : ""}
  </div>
</div>
${newKeyPanel(c.env.API_ORIGIN)}
<section id="keys" aria-labelledby="keys-title">
  <h2 id="keys-title" class="visually-hidden">Your keys</h2>
  <nav class="tabs" aria-label="Which keys">${tab(false, "Active", list.active)}${tab(true, "Ended", list.ended)}</nav>
  ${
    list.keys.length === 0 && cursor !== undefined
      ? html`<p class="muted">No ${which} keys here any more: <a href="${listUrl()}">see the newest ones</a>.</p>`
      : list.keys.length === 0
        ? html`<p class="muted">${showEnded ? "No ended keys: revoked and expired keys are listed here." : total === 0 ? "No keys yet: create your first one below." : "No active keys: create one below."}</p>`
        : html`<table class="keys">
  <caption class="visually-hidden">${showEnded ? "Ended keys" : "Active keys"}</caption>
  <thead><tr><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th></tr></thead>
  <tbody>${rows}</tbody>
</table>${pager}`
  }
</section>
<section id="create" class="card" aria-labelledby="create-title">
  <h2 id="create-title">Create a key</h2>
  <form data-action="create-key" class="stack" novalidate>
    <div class="field">
      <label for="label">Label</label>
      <input id="label" name="label" required maxlength="100" data-noun="The label" aria-describedby="label-hint label-error">
      <p id="label-hint" class="hint">What the key is for, such as "storefront web".</p>
      ${fieldError("label")}
    </div>
    <fieldset id="scopes" data-noun="What it may do" aria-describedby="scopes-error">
      <legend>What it may do</legend>
      ${SCOPES.map((scope) => {
        const unavailable = UNAVAILABLE_SCOPES[scope];
        return html`<label class="check"><input type="checkbox" name="scopes" value="${scope}" ${scope === "pets:read" ? "checked" : ""} ${unavailable ? html`disabled aria-describedby="scope-${scope.replace(":", "-")}-note"` : ""}><span><code>${scope}</code> ${SCOPE_DESCRIPTIONS[scope]}${unavailable ? html` <span id="scope-${scope.replace(":", "-")}-note" class="hint">${unavailable}</span>` : ""}</span></label>`;
      })}
      ${fieldError("scopes")}
    </fieldset>
    <div class="field">
      <label for="expires">Expires</label>
      <select id="expires" name="expiresInSeconds">
        <option value="">Never</option>
        <option value="604800">In 7 days</option>
        <option value="2592000">In 30 days</option>
        <option value="7776000">In 90 days</option>
        <option value="31536000">In a year</option>
      </select>
    </div>
    <button type="submit" class="primary" ${full ? html`disabled aria-describedby="key-limit"` : ""}>Create key</button>
    ${full ? html`<p id="key-limit" class="hint">You have ${MAX_ACTIVE_KEYS} active keys, the most an account may have: revoke one to create another.</p>` : ""}
  </form>
</section>` as Html,
  });
});

pageRoutes.get("/keys/:id", async (c) => {
  const account = c.var.account;
  if (!account) return toSignIn(c);
  const id = parseKeyId(c.req.param("id"));
  const key = id === undefined ? null : await findAccountKey(c.env.DB, account.id, id);
  if (!key) return notFoundPage(c);
  const now = c.var.clock();
  const state = keyState(key, now);
  const successor =
    key.replacedBy === null ? null : await findAccountKey(c.env.DB, account.id, key.replacedBy);
  const usage = await keyUsage(c.env.DB, key.id, nowOf(c));
  return page(c, {
    title: key.label,
    account,
    body: html`<p class="back"><a href="/keys">All keys</a></p>
<div class="title-row">
  <h1 id="key-title" tabindex="-1">${key.label}</h1>
  <span class="badge ${state.tone}">${state.word}</span>
  <button type="button" class="link" data-open="rename-key" aria-expanded="false" aria-controls="rename-key">Rename<span class="visually-hidden"> this key</span></button>
</div>
${renameForm({ action: "rename-key", id: "rename-key", field: "label", label: "Label", value: key.label, max: 100, data: html`data-key-id="${key.id}"` as Html })}
${
  successor && state.tone !== "off"
    ? html`<p id="replaced" class="notice">Replaced by <a href="/keys/${successor.id}">${successor.label} (<code>${successor.prefix}…</code>)</a>; this key stops at ${time(key.expiresAt)}.</p>`
    : successor
      ? html`<p id="replaced" class="muted">Replaced by <a href="/keys/${successor.id}">${successor.label} (<code>${successor.prefix}…</code>)</a>.</p>`
      : ""
}
${newKeyPanel(c.env.API_ORIGIN)}
<section id="facts" aria-label="Key details">
  <dl class="facts">
    <div><dt>Key</dt><dd><code>${key.prefix}…</code></dd></div>
    <div><dt>Scopes</dt><dd>${scopeList(key)}</dd></div>
    ${key.audience ? html`<div><dt>Works at</dt><dd>${MCP_BADGE} the MCP server alone (<code>${c.env.API_ORIGIN}/mcp</code>): granted to this client by OAuth</dd></div>` : ""}
    <div><dt>Created</dt><dd>${time(key.createdAt)}</dd></div>
    <div><dt>${key.replacedBy !== null && state.tone !== "off" ? "Stops" : "Expires"}</dt><dd>${time(key.expiresAt)}</dd></div>
    <div><dt>Last used</dt><dd>${time(key.lastUsedAt)}</dd></div>
    ${key.revokedAt ? html`<div><dt>Revoked</dt><dd>${time(key.revokedAt)}</dd></div>` : ""}
  </dl>
</section>
${usageSection(usage)}
${manageCard(key, state.tone)}` as Html,
  });
});

/** Rotate and revoke an active key; a replaced one only stops (it was rotated already). */
function manageCard(key: ListedKey, tone: string) {
  if (tone === "off") return "";
  const revoke = html`<div class="stack revoke">
    <p>${key.replacedBy === null ? "Revoking stops the key for good: calls with it fail within a minute." : "Stop it now instead of at the end of its grace period: calls with it fail within a minute."}</p>
    <button type="button" class="danger" data-action="revoke" data-key-id="${key.id}" data-label="${key.label}">${key.replacedBy === null ? "Revoke key" : "Stop it now"}</button>
  </div>`;
  if (key.replacedBy !== null) {
    return html`<section class="card" aria-labelledby="manage-title">
  <h2 id="manage-title">Stop this key</h2>
  ${revoke}
</section>`;
  }
  return html`<section class="card" aria-labelledby="manage-title">
  <h2 id="manage-title">Rotate or revoke</h2>
  <form data-action="rotate" data-key-id="${key.id}" class="stack">
    <p>Rotating makes a new key with the same label and scopes; the old one keeps working for the time you choose, so you can swap it without downtime.</p>
    <div class="field">
      <label for="grace">Keep the old key working for</label>
      <select id="grace" name="graceSeconds">
        <option value="0">No time: stop it now</option>
        <option value="3600">1 hour</option>
        <option value="86400" selected>24 hours</option>
        <option value="604800">7 days</option>
      </select>
    </div>
    <button type="submit">Rotate key</button>
  </form>
  ${revoke}
</section>`;
}

pageRoutes.get("/account", async (c) => {
  const account = c.var.account;
  if (!account) return toSignIn(c);
  const [stored, codes, sessions] = await Promise.all([
    listPasskeys(c.env.DB, account.id),
    countRecoveryCodes(c.env.DB, account.id),
    listSessions(c.env.DB, account.id, nowOf(c)),
  ]);
  const passkeys = stored.map(passkeyJson);
  const only = passkeys.length === 1;
  return page(c, {
    title: "Account",
    account,
    body: html`<h1>Account</h1>
<dl class="facts">
  <div><dt>Name</dt><dd>${account.displayName}</dd></div>
  <div><dt>Account id</dt><dd><code>${account.id}</code></dd></div>
  <div><dt>Created</dt><dd>${time(accountJson(account).createdAt)}</dd></div>
</dl>
<section id="passkeys" class="card" aria-labelledby="passkeys-title" data-user-id="${userHandleOf(account.id)}" data-user-name="${account.displayName}" data-credential-ids="${passkeys.map((p) => p.id).join(" ")}">
  <h2 id="passkeys-title" tabindex="-1">Passkeys</h2>
  <p>Any of these signs you in. Add one on each device you use, so losing one device does not lock you out.</p>
  <ul class="items passkeys">${passkeys.map(
    (p, i) => html`<li data-passkey-id="${p.id}">
    <div class="item-main"><strong class="item-name">${p.name}</strong><br>
    <span class="muted">${p.authenticator && p.authenticator !== p.name ? html`${p.authenticator} · ` : ""}added ${time(p.createdAt)} · last sign-in ${time(p.lastUsedAt, "none yet")}</span></div>
    <div class="buttons">
      <button type="button" data-open="rename-passkey-${i}" aria-expanded="false" aria-controls="rename-passkey-${i}">Rename<span class="visually-hidden"> ${p.name}</span></button>
      <button type="button" data-action="remove-passkey" data-passkey-id="${p.id}" data-name="${p.name}" ${only ? html`disabled aria-describedby="only-passkey"` : ""}>Remove<span class="visually-hidden"> ${p.name}</span></button>
    </div>
    ${renameForm({ action: "rename-passkey", id: `rename-passkey-${i}`, field: "name", label: "Passkey name", value: p.name, max: 100, data: html`data-passkey-id="${p.id}"` as Html })}
  </li>`,
  )}</ul>
  ${only ? html`<p id="only-passkey" class="hint">Your only passkey cannot be removed: add another first.</p>` : ""}
  <button type="button" class="primary" data-action="add-passkey" data-needs-webauthn>Add a passkey</button>
</section>
<section id="recovery" class="card" aria-labelledby="recovery-title">
  <h2 id="recovery-title" tabindex="-1">Recovery codes</h2>
  <p>${
    codes === 0
      ? html`<strong>You have no recovery codes.</strong> If you lose your passkeys, a code is the only way back in.`
      : html`You have <strong>${codes} of ${RECOVERY_CODES}</strong> codes left; each signs you in once if you lose your passkeys.`
  }</p>
  <button type="button" data-action="create-recovery-codes" data-has-codes="${codes}">${codes === 0 ? "Create recovery codes" : "Replace them with new codes"}</button>
  ${RECOVERY_CODES_PANEL}
</section>
<section id="sessions" class="card" aria-labelledby="sessions-title">
  <h2 id="sessions-title" tabindex="-1">Where you are signed in</h2>
  <ul class="items">${sessions.map((s) => {
    const session = sessionJson(s, c.var.session?.id);
    return html`<li data-session-id="${s.id}">
    <div class="item-main"><strong>${s.browser ?? "Unknown browser"}</strong>${session.current ? html` <span class="badge on">This browser</span>` : ""}<br>
    <span class="muted">Signed in ${time(session.createdAt)} · ${session.current ? "active now" : html`last seen ${time(session.lastSeenAt)}`}</span></div>
    <button type="button" data-action="end-session" data-session-id="${s.id}" ${session.current ? html`data-current` : ""}>${session.current ? "Sign out" : "Sign out there"}<span class="visually-hidden">: ${s.browser ?? "Unknown browser"}, signed in ${isoTime(s.createdAt)}</span></button>
  </li>`;
  })}</ul>
  <p>Signing out everywhere ends every session above, this one too.</p>
  <button type="button" data-action="sign-out-everywhere">Sign out everywhere</button>
</section>
<section id="delete" class="card danger-zone" aria-labelledby="delete-title">
  <h2 id="delete-title">Delete the account</h2>
  <p>Your keys stop working within a minute; your passkeys, sessions, recovery codes, key labels and name are erased. The calls your keys made stay counted, without any of them. You confirm with one of your passkeys.</p>
  <button type="button" class="danger" data-action="delete-account" data-needs-webauthn>Delete the account</button>
</section>` as Html,
  });
});

pageRoutes.get("*", (c) => notFoundPage(c));
