// The keys page: the account's active or ended keys, 50 a page with links that keep the filter,
// and the form that creates a key (shown once in the new key's panel).
import type { Context } from "hono";
import { html } from "hono/html";
import { apiOrigins } from "../../../src/mcp-contract.ts";
import { SCOPE_DESCRIPTIONS, SCOPES } from "../../../src/scopes.ts";
import { MAX_ACTIVE_KEYS, UNAVAILABLE_SCOPES } from "../config.ts";
import type { Account } from "../db/accounts.ts";
import type { KeysCursor, KeysPage } from "../db/key-pages.ts";
import type { ListedKey } from "../db/keys.ts";
import { isActiveKey } from "../db/keys.ts";
import type { PlatformAppEnv } from "../types.ts";
import { fieldError, newKeyPanel } from "./forms.ts";
import type { Html } from "./layout.ts";
import { page, time } from "./layout.ts";

type C = Context<PlatformAppEnv>;

/** Where a key stands at `now` (ms): a word, a CSS class, and when it ends or ended. */
export function keyState(
  key: ListedKey,
  now: number,
): { word: string; tone: string; when: Html | "" } {
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

/** A key's scopes, those whose operation is not available yet marked so. */
const scopeList = (key: ListedKey) =>
  html`<ul class="scopes">${key.scopes.map(
    (s) =>
      html`<li><code>${s}</code>${UNAVAILABLE_SCOPES[s] ? html` <span class="muted">(not yet available)</span>` : ""}</li>`,
  )}</ul>`;

/** Marks a key granted to an MCP client by OAuth (audience /mcp). */
export const MCP_BADGE = html` <span class="badge mcp">MCP client</span>`;

/** What the keys page shows: a page of the account's keys, active or ended, from `cursor`. */
interface KeyListView {
  account: Account;
  list: KeysPage;
  showEnded: boolean;
  cursor: KeysCursor;
}

/**
 * The keys page; the filter is the query's (`?show=ended`), the cursor `before` or `after` a key
 * id.
 */
export function keyListPage(c: C, view: KeyListView) {
  const { list } = view;
  const total = list.active + list.ended;
  return page(c, {
    title: "API keys",
    account: view.account,
    body: html`<div class="page-head">
  <h1 id="keys-heading" tabindex="-1">API keys</h1>
  <div class="head-side">
    <p id="key-count" class="muted">${list.active} of ${MAX_ACTIVE_KEYS} active keys</p>
    ${total > 0 ? html`<a class="button" href="#create">Create a key</a>` : ""}
  </div>
</div>
${newKeyPanel(apiOrigins(c.env)[0])}
${keyList(view, c.var.clock())}
${createKeyCard(list.active >= MAX_ACTIVE_KEYS)}` as Html,
  });
}

/** The list's address with `at` (a cursor), keeping the filter. */
function listUrl(showEnded: boolean, at: Record<string, number> = {}) {
  const query = new URLSearchParams({ ...(showEnded ? { show: "ended" } : {}), ...at });
  return `/keys${query.size > 0 ? `?${query}` : ""}#keys`;
}

/** One key's row: its label and prefix, scopes, times and where it stands at `now` (ms). */
function keyRow(key: KeysPage["keys"][number], now: number) {
  const state = keyState(key, now);
  return html`<tr>
  <th scope="row" data-label="Key"><a href="/keys/${key.id}">${key.label}</a>${key.audience ? MCP_BADGE : ""}<br><code class="muted">${key.prefix}…</code></th>
  <td data-label="Scopes">${scopeList(key)}</td>
  <td data-label="Created">${time(key.createdAt)}</td>
  <td data-label="Last used">${time(key.lastUsedAt)}</td>
  <td data-label="Status"><span class="badge ${state.tone}">${state.word}</span>${state.when ? html` <span class="when">${state.when}</span>` : ""}${key.replacedBy !== null && key.successorPrefix !== null ? html`<br><span class="when">by <a href="/keys/${key.replacedBy}">${key.successorPrefix}…</a></span>` : ""}</td>
</tr>`;
}

/** The tabs (active, ended), and the page's keys or why there are none. */
function keyList(view: KeyListView, now: number) {
  const { list, showEnded, cursor } = view;
  const which = showEnded ? "ended" : "active";
  const total = list.active + list.ended;
  const tab = (ended: boolean, text: string, n: number) =>
    html`<a class="tab" href="/keys${ended ? "?show=ended" : ""}" ${ended === showEnded ? html`aria-current="page"` : ""}>${text} <span class="count">${n}</span></a>`;
  return html`<section id="keys" aria-labelledby="keys-title">
  <h2 id="keys-title" class="visually-hidden">Your keys</h2>
  <nav class="tabs" aria-label="Which keys">${tab(false, "Active", list.active)}${tab(true, "Ended", list.ended)}</nav>
  ${
    list.keys.length === 0 && cursor !== undefined
      ? html`<p class="muted">No ${which} keys here any more: <a href="${listUrl(showEnded)}">see the newest ones</a>.</p>`
      : list.keys.length === 0
        ? html`<p class="muted">${showEnded ? "No ended keys: revoked and expired keys are listed here." : total === 0 ? "No keys yet: create your first one below." : "No active keys: create one below."}</p>`
        : html`<table class="keys">
  <caption class="visually-hidden">${showEnded ? "Ended keys" : "Active keys"}</caption>
  <thead><tr><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th></tr></thead>
  <tbody>${list.keys.map((key) => keyRow(key, now))}</tbody>
</table>${pager(view)}`
  }
</section>` as Html;
}

/** Links to the newer and older keys of the filter, when there are any. */
function pager({ list, showEnded }: KeyListView) {
  const which = showEnded ? "ended" : "active";
  const first = list.keys[0];
  const last = list.keys.at(-1);
  return list.newer || list.older
    ? html`<nav class="pager" aria-label="Pages of ${which} keys">${list.newer && first ? html`<a href="${listUrl(showEnded, { after: first.id })}" rel="prev">Newer ${which} keys</a>` : ""}${list.older && last ? html`<a href="${listUrl(showEnded, { before: last.id })}" rel="next">Older ${which} keys</a>` : ""}</nav>`
    : "";
}

/** The form that creates a key; its button is off while the account is at its key limit. */
function createKeyCard(full: boolean) {
  return html`<section id="create" class="card" aria-labelledby="create-title">
  <h2 id="create-title">Create a key</h2>
  <form data-action="create-key" class="stack" novalidate>
    <div class="field">
      <label for="label">Label</label>
      <input id="label" name="label" required maxlength="100" data-noun="The label" aria-describedby="label-hint label-error">
      <p id="label-hint" class="hint">What the key is for, such as "storefront web".</p>
      ${fieldError("label")}
    </div>
    <fieldset id="scopes" data-noun="What it may do" aria-describedby="scopes-hint scopes-error">
      <legend>What it may do</legend>
      <p id="scopes-hint" class="hint">Only what you tick, for good: a key's scopes cannot change later, and a rotation keeps them.</p>
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
</section>` as Html;
}
