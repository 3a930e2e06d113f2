// The consent page of an OAuth authorization (docs/platform.md, "Connecting agents"), signed in
// or out, and the page that says why a request cannot go on. Allow and Deny send JSON (app.js).
import type { Context } from "hono";
import { html } from "hono/html";
import type { Scope } from "../../../src/scopes.ts";
import { SCOPE_DESCRIPTIONS } from "../../../src/scopes.ts";
import { KEY_LIFETIMES, MAX_ACTIVE_KEYS } from "../config.ts";
import type { Client } from "../oauth/clients.ts";
import type { PlatformAppEnv } from "../types.ts";
import type { Html } from "./layout.ts";
import { page } from "./layout.ts";

type C = Context<PlatformAppEnv>;

/** The order the page lists scopes in: reading before writing. */
const READS_FIRST: readonly Scope[] = ["pets:read", "orders:read", "pets:write"];

/** What the consent and sign-in pages show of an authorization request. */
export interface ConsentView {
  client: Client;
  /** Where the client will be sent back, as people read it. */
  host: string;
  /** Shown in full: the holder sees exactly where the code goes. */
  redirectUri: string;
}

function clientFacts(view: ConsentView): Html {
  return html`<dl class="facts">
  <div><dt>Client</dt><dd>${view.client.name}</dd></div>
  <div><dt>From</dt><dd>${view.host}</dd></div>
  <div><dt>Sends you back to</dt><dd><code>${view.redirectUri}</code></dd></div>
</dl>
${
  view.client.kind === "registered"
    ? html`<p class="notice">This client registered itself: its name is its own claim. Allow it only if you have just asked it to connect.</p>`
    : ""
}` as Html;
}

/** Signed out: the client, then a passkey sign-in (or a new account) that returns here. */
export function signInToConsent(c: C, view: ConsentView): Response | Promise<Response> {
  const here = new URL(c.req.url);
  return page(c, {
    title: `Connect ${view.client.name}`,
    account: undefined,
    body: html`<section class="card" aria-labelledby="consent-title" data-next="${here.pathname}${here.search}">
  <h1 id="consent-title">Connect ${view.client.name} to the Pet Store API</h1>
  <p><strong>${view.client.name}</strong> asks to use the Pet Store API on your behalf. Sign in with your passkey; you then choose what it may do.</p>
  ${clientFacts(view)}
  <p id="no-webauthn" class="notice" hidden>This browser cannot use passkeys. Try a current version of Chrome, Edge, Firefox or Safari.</p>
  <button type="button" class="primary" data-action="sign-in" data-needs-webauthn>Sign in with a passkey</button>
  <details>
    <summary>No account yet?</summary>
    <form data-action="sign-up" class="stack">
      <div class="field">
        <label for="display-name">Your name, or your team's</label>
        <input id="display-name" name="displayName" required maxlength="64" autocomplete="nickname">
      </div>
      <button type="submit" data-needs-webauthn>Create account with a passkey</button>
    </form>
  </details>
</section>` as Html,
  });
}

/**
 * Signed in: what the client asks, every scope it asked ticked (the holder may untick any, so
 * one click grants what the client needs: a step-up after a 403 is one Allow), Allow and Deny.
 */
export function consentPage(
  c: C,
  view: ConsentView & { grantId: string; requestedScopes: readonly Scope[]; atKeyLimit: boolean },
): Response | Promise<Response> {
  const asked = READS_FIRST.filter((s) => view.requestedScopes.includes(s));
  return page(c, {
    title: `Allow ${view.client.name}?`,
    account: c.var.account,
    body: html`<section class="card" aria-labelledby="consent-title">
  <h1 id="consent-title">Allow ${view.client.name} to use the Pet Store API as you?</h1>
  ${clientFacts(view)}
  <form data-action="allow" data-grant-id="${view.grantId}" class="stack">
    <fieldset>
      <legend>What it may do</legend>
      ${asked.map(
        (scope) =>
          html`<label class="check"><input type="checkbox" name="scopes" value="${scope}" checked><span><code>${scope}</code> ${SCOPE_DESCRIPTIONS[scope]}</span></label>`,
      )}
    </fieldset>
    <div class="field">
      <label for="expires">Its access ends</label>
      <select id="expires" name="expiresInSeconds">
        ${KEY_LIFETIMES.map(([seconds, words]) => html`<option value="${seconds ?? ""}">${words}</option>`)}
      </select>
    </div>
    <p class="hint">It gets a key of your account that works only through the MCP server, listed under your keys as "${view.client.name}" with its usage; you can revoke it there at any time.</p>
    ${
      view.atKeyLimit
        ? html`<p id="key-limit" class="notice">You have ${MAX_ACTIVE_KEYS} active keys, the most an account may have: revoke one under <a href="/keys">Keys</a>, then reload this page.</p>`
        : ""
    }
    <div class="actions">
      <button type="submit" class="primary" ${view.atKeyLimit ? html`disabled aria-describedby="key-limit"` : ""}>Allow</button>
      <button type="button" data-action="deny" data-grant-id="${view.grantId}">Deny</button>
    </div>
  </form>
</section>` as Html,
  });
}

/** An authorization request that cannot go on: why, and the way back when there is a safe one. */
export function authorizationErrorPage(
  c: C,
  problem: { message: string; back?: { href: string; name: string } },
): Response | Promise<Response> {
  return page(c, {
    title: "Cannot connect",
    account: c.var.account,
    status: 400,
    body: html`<section class="card" aria-labelledby="error-title">
  <h1 id="error-title">This connection cannot go on</h1>
  <p>${problem.message}</p>
  ${problem.back ? html`<p><a href="${problem.back.href}">Return to ${problem.back.name}</a></p>` : html`<p>Nothing was granted. Return to the app that sent you here.</p>`}
</section>` as Html,
  });
}
