// One key's page: where it stands, its successor after a rotation, its details and usage, and
// the cards that rename, rotate and revoke it.
import type { Context } from "hono";
import { html } from "hono/html";
import { apiOrigins } from "../../../src/mcp-contract.ts";
import { SCOPE_DESCRIPTIONS, SCOPES } from "../../../src/scopes.ts";
import { UNAVAILABLE_SCOPES } from "../config.ts";
import type { Account } from "../db/accounts.ts";
import type { ListedKey } from "../db/keys.ts";
import type { KeyUsage } from "../db/usage.ts";
import type { PlatformAppEnv } from "../types.ts";
import { newKeyPanel, renameForm } from "./forms.ts";
import { keyState, MCP_BADGE } from "./keys.ts";
import type { Html } from "./layout.ts";
import { page, time } from "./layout.ts";
import { usageSection } from "./usage.ts";

/** The key's page; `successor`: the key a rotation replaced it by, if any. */
export function keyPage(
  c: Context<PlatformAppEnv>,
  view: { account: Account; key: ListedKey; successor: ListedKey | null; usage: KeyUsage },
) {
  const { account, key, successor, usage } = view;
  const state = keyState(key, c.var.clock());
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
${newKeyPanel(apiOrigins(c.env)[0])}
<section id="facts" aria-label="Key details">
  <dl class="facts">
    <div><dt>Key</dt><dd><code>${key.prefix}…</code></dd></div>
    ${key.audience ? html`<div><dt>Works at</dt><dd>${MCP_BADGE} the MCP server alone (<code>${apiOrigins(c.env)[0]}/mcp</code>): granted to this client by OAuth</dd></div>` : ""}
    <div><dt>Created</dt><dd>${time(key.createdAt)}</dd></div>
    <div><dt>${key.replacedBy !== null && state.tone !== "off" ? "Stops" : "Expires"}</dt><dd>${time(key.expiresAt)}</dd></div>
    <div><dt>Last used</dt><dd>${time(key.lastUsedAt)}</dd></div>
    ${key.revokedAt ? html`<div><dt>Revoked</dt><dd>${time(key.revokedAt)}</dd></div>` : ""}
  </dl>
</section>
${scopesSection(key, state.tone === "off")}
${usageSection(usage)}
${manageCard(key, state.tone)}` as Html,
  });
}

/**
 * What the key may do and may not, scope by scope, and how to get a key that may do more: its
 * scopes are fixed when it is made (a rotation keeps them).
 */
function scopesSection(key: ListedKey, ended: boolean) {
  const lacks = SCOPES.filter((s) => !key.scopes.includes(s));
  const more = lacks.filter((s) => !UNAVAILABLE_SCOPES[s]);
  const line = (scope: (typeof SCOPES)[number], may: boolean) =>
    html`<li class="${may ? "may" : "may-not"}"><strong>${may ? "May" : "May not"}</strong> <code>${scope}</code> ${SCOPE_DESCRIPTIONS[scope]}${UNAVAILABLE_SCOPES[scope] ? html` <span class="muted">(not yet available)</span>` : ""}</li>`;
  return html`<section id="may" aria-labelledby="may-title">
  <h2 id="may-title">What it may do</h2>
  <ul class="may-list">${key.scopes.map((s) => line(s, true))}${lacks.map((s) => line(s, false))}</ul>
  ${
    lacks.length === 0
      ? ""
      : html`<p>A call that needs a scope it lacks is refused: 403 <code>insufficient_scope</code>, naming the scope.${
          ended || more.length === 0
            ? ""
            : html` A key's scopes are fixed when it is made, and a rotation keeps them: for one that may do more, <a href="/keys#create">create a key</a> with ${more.map((s, i) => html`${i > 0 ? " and " : ""}<code>${s}</code>`)}.`
        }</p>`
  }
</section>`;
}

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
