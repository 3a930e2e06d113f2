// The parts of pages that app.js fills or opens: a field's error slot, the rename card, and the
// panels that show a new key or new recovery codes once.
import { html } from "hono/html";
import { SCOPES } from "../../../src/scopes.ts";
import type { Html } from "./layout.ts";

/** A field's error slot: filled by app.js next to the field it is about. */
export const fieldError = (id: string) => html`<p id="${id}-error" class="field-error" hidden></p>`;

/** A card that the rename buttons open (app.js): a field with the current value. */
export function renameForm(what: {
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

/**
 * The panel in which a new key is shown once (filled by app.js after create or rotate), with
 * what its scopes let it do and not (`data-scopes`: all there are) and how an AI agent uses it: the API's MCP server (docs/agents.md).
 */
export const newKeyPanel = (
  apiOrigin: string,
) => html`<section id="new-key" class="reveal" hidden tabindex="-1" aria-labelledby="new-key-title" data-scopes="${SCOPES.join(" ")}">
  <h2 id="new-key-title">Your new key</h2>
  <p><strong>Copy it now.</strong> It is shown only this once; we keep only a hash of it.</p>
  <p id="new-key-scopes"></p>
  <div class="copyable"><code id="new-key-value" class="secret"></code><button type="button" data-copy="new-key-value">Copy key</button></div>
  <h3>Try it</h3>
  <div class="copyable"><pre><code id="new-key-curl"></code></pre><button type="button" data-copy="new-key-curl">Copy command</button></div>
  <p id="new-key-mcp">For an AI agent: give its MCP client the server <code>${apiOrigin}/mcp</code> and this key in an <code>Authorization: Bearer</code> header. It sees the tools the key's scopes allow, nothing more (the guide: docs/agents.md in the API's repository).</p>
  <p><a id="new-key-page" href="/keys">See the new key's usage and settings</a></p>
</section>`;

/** The panel in which new recovery codes are shown once (filled by app.js). */
export const RECOVERY_CODES_PANEL = html`<section id="recovery-codes-panel" class="reveal" hidden tabindex="-1" aria-labelledby="recovery-codes-panel-title">
  <h3 id="recovery-codes-panel-title">Your recovery codes</h3>
  <p><strong>Save them now</strong> in your password manager or on paper: they are shown only this once. Each one signs you in once, if you lose your passkeys.</p>
  <ol id="recovery-codes-list" class="codes"></ol>
  <button type="button" data-copy="recovery-codes-list">Copy codes</button>
</section>`;
