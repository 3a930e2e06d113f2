// The pages: the front door (sign up, sign in), the keys, one key with its usage, and the
// account with its passkeys. Pages only read; every change goes through the JSON
// endpoints (public/app.js), so every change passes the same Origin and JSON checks.
import type { Context } from "hono";
import { Hono } from "hono";
import { html } from "hono/html";
import { parseKeyId } from "../../../scripts/key-statements.ts";
import { SCOPE_DESCRIPTIONS, SCOPES } from "../../../src/scopes.ts";
import { MAX_ACTIVE_KEYS, USAGE_DAYS } from "../config.ts";
import { listPasskeys } from "../db/accounts.ts";
import type { ListedKey } from "../db/keys.ts";
import { findAccountKey, isActiveKey, keyUsage, listAccountKeys, OUTCOMES } from "../db/keys.ts";
import { mcpKeyIds } from "../oauth/store.ts";
import { accountJson, passkeyJson } from "../routes/account.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";
import { calls, OUTCOME_NAMES, totalOf, usageChart } from "./chart.ts";
import type { Html } from "./layout.ts";
import { page, time } from "./layout.ts";

type C = Context<PlatformAppEnv>;

/** Where a key stands at `now` (ms), as a word and a CSS class. */
function keyState(key: ListedKey, now: number): { word: string; tone: string } {
  if (isActiveKey(key, now)) return { word: "Active", tone: "on" };
  return { word: key.revokedAt !== null ? "Revoked" : "Expired", tone: "off" };
}
const scopeList = (key: ListedKey) =>
  html`<ul class="scopes">${key.scopes.map((s) => html`<li><code>${s}</code></li>`)}</ul>`;

/** Marks a key granted to an MCP client by OAuth (audience /mcp). */
const MCP_BADGE = html` <span class="badge mcp">MCP client</span>`;

/** The panel in which a new key is shown once (filled by app.js after create or rotate). */
const NEW_KEY_PANEL = html`<section id="new-key" class="reveal" hidden tabindex="-1" aria-labelledby="new-key-title">
  <h2 id="new-key-title">Your new key</h2>
  <p><strong>Copy it now.</strong> It is shown only this once; we keep only a hash of it.</p>
  <div class="copyable"><code id="new-key-value" class="secret"></code><button type="button" data-copy="new-key-value">Copy key</button></div>
  <h3>Try it</h3>
  <div class="copyable"><pre><code id="new-key-curl"></code></pre><button type="button" data-copy="new-key-curl">Copy command</button></div>
  <p><a id="new-key-page" href="/keys">See the new key's usage and settings</a></p>
</section>`;

/** How people know the ways a passkey reaches the browser (WebAuthn's transport names). */
const TRANSPORTS: Record<string, string> = {
  internal: "this device",
  hybrid: "phone or tablet",
  usb: "USB security key",
  nfc: "NFC security key",
  ble: "Bluetooth security key",
  "smart-card": "smart card",
};

function notFoundPage(c: C) {
  return page(c, {
    title: "Not found",
    account: c.var.account,
    status: 404,
    body: html`<h1>Not found</h1><p>There is no such page here. <a href="/">Back to the start</a>.</p>` as Html,
  });
}

export const pageRoutes = new Hono<PlatformAppEnv>();

pageRoutes.get("/", (c) => {
  if (c.var.account) return c.redirect("/keys", 303);
  return page(c, {
    title: "Get an API key",
    account: undefined,
    body: html`<section class="hero">
  <h1>Get a key for the Pet Store API</h1>
  <p>Create an account with a passkey (your device's screen lock, a security key or your password manager), create a key, and make your first call a minute from now. No password, no e-mail.</p>
</section>
<p id="no-webauthn" class="notice" hidden>This browser cannot use passkeys. Try a current version of Chrome, Edge, Firefox or Safari.</p>
<div class="columns">
  <section class="card" aria-labelledby="sign-up-title">
    <h2 id="sign-up-title">New here?</h2>
    <form data-action="sign-up" class="stack">
      <div class="field">
        <label for="display-name">Your name, or your team's</label>
        <input id="display-name" name="displayName" required maxlength="64" autocomplete="nickname" aria-describedby="display-name-hint">
        <p id="display-name-hint" class="hint">Your passkey is saved under this name. 1 to 64 characters.</p>
      </div>
      <button type="submit" class="primary" data-needs-webauthn>Create account with a passkey</button>
    </form>
  </section>
  <section class="card" aria-labelledby="sign-in-title">
    <h2 id="sign-in-title">Have an account?</h2>
    <p>Sign in with the passkey you created here.</p>
    <button type="button" data-action="sign-in" data-needs-webauthn>Sign in with a passkey</button>
  </section>
</div>` as Html,
  });
});

pageRoutes.get("/keys", async (c) => {
  const account = c.var.account;
  if (!account) return c.redirect("/", 303);
  const keys = await listAccountKeys(c.env.DB, account.id);
  const mcp = await mcpKeyIds(c.env.DB, account.id);
  const now = c.var.clock();
  const active = keys.filter((k) => isActiveKey(k, now)).length;
  const full = active >= MAX_ACTIVE_KEYS;
  const rows = keys.map((key) => {
    const state = keyState(key, now);
    return html`<tr>
  <th scope="row" data-label="Label"><a href="/keys/${key.id}">${key.label}</a>${mcp.has(key.id) ? MCP_BADGE : ""}</th>
  <td data-label="Key"><code>${key.prefix}…</code></td>
  <td data-label="Scopes">${scopeList(key)}</td>
  <td data-label="Created">${time(key.createdAt)}</td>
  <td data-label="Expires">${time(key.expiresAt)}</td>
  <td data-label="Last used">${time(key.lastUsedAt)}</td>
  <td data-label="Status"><span class="badge ${state.tone}">${state.word}</span></td>
</tr>`;
  });
  return page(c, {
    title: "API keys",
    account,
    body: html`<div class="page-head">
  <h1>API keys</h1>
  <div class="head-side">
    <p id="key-count" class="muted">${active} of ${MAX_ACTIVE_KEYS} active keys</p>
    ${keys.length > 0 ? html`<a class="button" href="#create">Create a key</a>` : ""}
  </div>
</div>
${NEW_KEY_PANEL}
<section id="keys" aria-labelledby="keys-title">
  <h2 id="keys-title">Your keys</h2>
  ${
    keys.length === 0
      ? html`<p class="muted">No keys yet: create your first one below.</p>`
      : html`<table class="keys">
  <thead><tr><th scope="col">Label</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Status</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
  }
</section>
<section id="create" class="card" aria-labelledby="create-title">
  <h2 id="create-title">Create a key</h2>
  <form data-action="create-key" class="stack">
    <div class="field">
      <label for="label">Label</label>
      <input id="label" name="label" required maxlength="100" aria-describedby="label-hint">
      <p id="label-hint" class="hint">What the key is for, such as "storefront web".</p>
    </div>
    <fieldset>
      <legend>What it may do</legend>
      ${SCOPES.map(
        (scope) =>
          html`<label class="check"><input type="checkbox" name="scopes" value="${scope}" ${scope === "pets:read" ? "checked" : ""}><span><code>${scope}</code> ${SCOPE_DESCRIPTIONS[scope]}</span></label>`,
      )}
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
  if (!account) return c.redirect("/", 303);
  const id = parseKeyId(c.req.param("id"));
  const key = id === undefined ? null : await findAccountKey(c.env.DB, account.id, id);
  if (!key) return notFoundPage(c);
  const now = c.var.clock();
  const state = keyState(key, now);
  const { days, totals } = await keyUsage(c.env.DB, key.id, nowOf(c));
  const all = OUTCOMES.reduce((sum, o) => sum + totals[o], 0);
  const n = (value: number) => value.toLocaleString("en-US");
  return page(c, {
    title: key.label,
    account,
    body: html`<p class="back"><a href="/keys">All keys</a></p>
<div class="title-row">
  <h1>${key.label}</h1>
  <span class="badge ${state.tone}">${state.word}</span>
</div>
${NEW_KEY_PANEL}
<section id="facts" aria-label="Key details">
  <dl class="facts">
    <div><dt>Key</dt><dd><code>${key.prefix}…</code></dd></div>
    <div><dt>Scopes</dt><dd>${scopeList(key)}</dd></div>
    ${(await mcpKeyIds(c.env.DB, account.id)).has(key.id) ? html`<div><dt>Works at</dt><dd>${MCP_BADGE} the MCP server alone (<code>${c.env.API_ORIGIN}/mcp</code>): granted to this client by OAuth</dd></div>` : ""}
    <div><dt>Created</dt><dd>${time(key.createdAt)}</dd></div>
    <div><dt>Expires</dt><dd>${time(key.expiresAt)}</dd></div>
    <div><dt>Last used</dt><dd>${time(key.lastUsedAt)}</dd></div>
    ${key.revokedAt ? html`<div><dt>Revoked</dt><dd>${time(key.revokedAt)}</dd></div>` : ""}
  </dl>
</section>
<section aria-labelledby="usage-title">
  <h2 id="usage-title">Calls in the last ${USAGE_DAYS} days</h2>
  <p class="muted">${calls(all)}, counted by the API per UTC day; the latest calls can take a minute or more to appear.</p>
  ${usageChart(days)}
  <ul class="legend">${OUTCOMES.map((o) => html`<li><span class="swatch ${o}" aria-hidden="true"></span>${OUTCOME_NAMES[o].name} (${OUTCOME_NAMES[o].statuses}): <strong>${n(totals[o])}</strong></li>`)}</ul>
  <details>
    <summary>Day by day</summary>
    <table class="usage">
      <thead><tr><th scope="col">Day (UTC)</th>${OUTCOMES.map((o) => html`<th scope="col">${OUTCOME_NAMES[o].name}</th>`)}<th scope="col">All</th></tr></thead>
      <tbody>${[...days].reverse().map((d) => html`<tr><th scope="row">${d.date}</th>${OUTCOMES.map((o) => html`<td>${n(d[o])}</td>`)}<td>${n(totalOf(d))}</td></tr>`)}</tbody>
    </table>
  </details>
</section>
${
  state.tone === "on"
    ? html`<section class="card" aria-labelledby="manage-title">
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
  <div class="stack revoke">
    <p>Revoking stops the key for good: calls with it fail within a minute.</p>
    <button type="button" class="danger" data-action="revoke" data-key-id="${key.id}" data-label="${key.label}">Revoke key</button>
  </div>
</section>`
    : ""
}` as Html,
  });
});

pageRoutes.get("/account", async (c) => {
  const account = c.var.account;
  if (!account) return c.redirect("/", 303);
  const passkeys = (await listPasskeys(c.env.DB, account.id)).map(passkeyJson);
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
<section id="passkeys" class="card" aria-labelledby="passkeys-title">
  <h2 id="passkeys-title">Passkeys</h2>
  <p>Any of these signs you in. Add one on each device you use, so losing one device does not lock you out.</p>
  <ul class="passkeys">${passkeys.map(
    (p, i) => html`<li>
    <div><strong>Passkey ${i + 1}</strong>${p.transports.length > 0 ? html` <span class="muted">(${p.transports.map((t) => TRANSPORTS[t] ?? t).join(", ")})</span>` : ""}<br>
    <span class="muted">Added ${time(p.createdAt)} · last sign-in ${time(p.lastUsedAt, "none yet")}</span></div>
    <button type="button" data-action="remove-passkey" data-passkey-id="${p.id}" ${only ? html`disabled aria-describedby="only-passkey"` : ""}>Remove</button>
  </li>`,
  )}</ul>
  ${only ? html`<p id="only-passkey" class="hint">Your only passkey cannot be removed: add another first.</p>` : ""}
  <button type="button" class="primary" data-action="add-passkey" data-needs-webauthn>Add a passkey</button>
</section>
<section class="card" aria-labelledby="sessions-title">
  <h2 id="sessions-title">Signed-in devices</h2>
  <p>Signs you out here and on every other device and browser.</p>
  <button type="button" data-action="sign-out-everywhere">Sign out everywhere</button>
</section>` as Html,
  });
});

pageRoutes.get("*", (c) => notFoundPage(c));
