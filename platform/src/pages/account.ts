// The account page: after a recovery, the card that secures the account; its facts, passkeys
// (rename, remove, add), recovery codes, the sessions signed in (each ended on its own, or all),
// and deletion, confirmed with a passkey.
import type { Context } from "hono";
import { html } from "hono/html";
import { isoTime } from "../../../src/clock.ts";
import { RECOVERY_CODES } from "../config.ts";
import type { Account } from "../db/accounts.ts";
import type { Passkey } from "../db/passkeys.ts";
import type { ListedSession, SessionRecord } from "../db/sessions.ts";
import { accountJson, passkeyJson, sessionJson } from "../responses.ts";
import type { PlatformAppEnv } from "../types.ts";
import { userHandleOf } from "../webauthn.ts";
import { fieldError, RECOVERY_CODES_PANEL, renameForm } from "./forms.ts";
import type { Html } from "./layout.ts";
import { page, time } from "./layout.ts";

/**
 * The account page: its passkeys, recovery codes and sessions as the database holds them now;
 * first, in a recovery session, the card that secures the account.
 */
export function accountPage(
  c: Context<PlatformAppEnv>,
  view: { account: Account; passkeys: Passkey[]; codes: number; sessions: ListedSession[] },
) {
  const { account } = view;
  const session = c.var.session;
  return page(c, {
    title: "Account",
    account,
    body: html`<h1>Account</h1>
${session?.recovery ? secureSection(view.passkeys, view.sessions, session) : ""}
<dl class="facts">
  <div><dt>Name</dt><dd>${account.displayName}</dd></div>
  <div><dt>Account id</dt><dd><code>${account.id}</code></dd></div>
  <div><dt>Created</dt><dd>${time(accountJson(account).createdAt)}</dd></div>
</dl>
${passkeysSection(account, view.passkeys)}
${recoverySection(view.codes)}
${sessionsSection(view.sessions, c.var.session?.id)}
${DELETE_SECTION}` as Html,
  });
}

/** The account's passkeys, each renamed and removed in place (never the only one); add one. */
function passkeysSection(account: Account, stored: Passkey[]) {
  const passkeys = stored.map(passkeyJson);
  const only = passkeys.length === 1;
  return html`<section id="passkeys" class="card" aria-labelledby="passkeys-title" data-user-id="${userHandleOf(account.id)}" data-user-name="${account.displayName}" data-credential-ids="${passkeys.map((p) => p.id).join(" ")}">
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
</section>` as Html;
}

/**
 * After a recovery (GitHub and Google ask the same): a passkey on this device first, then in one
 * step the passkeys made before the code (ticked: none of them signed in) removed and every other
 * session ended; or everything kept.
 */
function secureSection(stored: Passkey[], sessions: ListedSession[], session: SessionRecord) {
  const added = stored.filter((p) => p.createdAt >= session.createdAt).map(passkeyJson);
  const before = stored.filter((p) => p.createdAt < session.createdAt).map(passkeyJson);
  const others = sessions.filter((s) => s.id !== session.id);
  const steps =
    added.length === 0
      ? html`<li><p><strong>Add a passkey on this device</strong>, so you can sign in again without a code.</p>
      <button type="button" class="primary" data-action="add-passkey" data-needs-webauthn>Add a passkey</button></li>
    <li><p class="muted">Then remove the passkey you lost and sign out everywhere else, in one step.</p></li>`
      : html`<li><p><span class="done">Done:</span> you added ${added.map((p, i) => html`${i > 0 ? ", " : ""}“${p.name}”`)}.</p></li>
    <li><form data-action="secure-account" class="stack" novalidate>
      <fieldset id="lost-passkeys" aria-describedby="lost-passkeys-hint lost-passkeys-error">
        <legend>Passkeys to remove</legend>
        <p id="lost-passkeys-hint" class="hint">${before.length === 0 ? "None is left from before the code." : "Those made before you used the code. Untick any you still hold."}</p>
        ${before.map((p) => html`<label class="check"><input type="checkbox" name="removePasskeys" value="${p.id}" checked><span>${p.name} <span class="muted">added ${time(p.createdAt)} · last sign-in ${time(p.lastUsedAt, "none yet")}</span></span></label>`)}
        ${fieldError("lost-passkeys")}
      </fieldset>
      ${
        others.length === 0
          ? html`<p>No other browser is signed in.</p>`
          : html`<p>And ${others.length === 1 ? "this session ends" : html`these ${others.length} sessions end`}:</p>
      <ul class="others">${others.map((s) => html`<li>${s.browser ?? "Unknown browser"} <span class="muted">signed in ${time(isoTime(s.createdAt))} · last seen ${time(isoTime(s.lastSeenAt))}</span></li>`)}</ul>`
      }
      <div class="buttons"><button type="submit" class="primary">Remove the ticked passkeys and sign out everywhere else</button><button type="button" data-action="keep-account">Keep everything as it is</button></div>
    </form></li>`;
  return html`<section id="secure" class="card notice" aria-labelledby="secure-title">
  <h2 id="secure-title" tabindex="-1">Secure your account</h2>
  <p>You signed in with a recovery code. A passkey you lost, or a browser still signed in, can reach the account until you end it.</p>
  <ol class="secure-steps">${steps}</ol>
</section>` as Html;
}

/** How many recovery codes are left, and the button that makes new ones. */
function recoverySection(codes: number) {
  return html`<section id="recovery" class="card" aria-labelledby="recovery-title">
  <h2 id="recovery-title" tabindex="-1">Recovery codes</h2>
  <p>${
    codes === 0
      ? html`<strong>You have no recovery codes.</strong> If you lose your passkeys, a code is the only way back in.`
      : html`You have <strong>${codes} of ${RECOVERY_CODES}</strong> codes left; each signs you in once if you lose your passkeys.`
  }</p>
  <button type="button" data-action="create-recovery-codes" data-has-codes="${codes}">${codes === 0 ? "Create recovery codes" : "Replace them with new codes"}</button>
  ${RECOVERY_CODES_PANEL}
</section>` as Html;
}

/** The sessions signed in, this browser's marked; each ends on its own, or all at once. */
function sessionsSection(sessions: ListedSession[], currentId: string | undefined) {
  return html`<section id="sessions" class="card" aria-labelledby="sessions-title">
  <h2 id="sessions-title" tabindex="-1">Where you are signed in</h2>
  <ul class="items">${sessions.map((s) => {
    const session = sessionJson(s, currentId);
    return html`<li data-session-id="${s.id}">
    <div class="item-main"><strong>${s.browser ?? "Unknown browser"}</strong>${session.current ? html` <span class="badge on">This browser</span>` : ""}<br>
    <span class="muted">Signed in ${time(session.createdAt)} · ${session.current ? "active now" : html`last seen ${time(session.lastSeenAt)}`}</span></div>
    <button type="button" data-action="end-session" data-session-id="${s.id}" ${session.current ? html`data-current` : ""}>${session.current ? "Sign out" : "Sign out there"}<span class="visually-hidden">: ${s.browser ?? "Unknown browser"}, signed in ${isoTime(s.createdAt)}</span></button>
  </li>`;
  })}</ul>
  <p>Signing out everywhere ends every session above, this one too.</p>
  <button type="button" data-action="sign-out-everywhere">Sign out everywhere</button>
</section>` as Html;
}

/** Deletion, which the script confirms with one of the account's passkeys. */
const DELETE_SECTION = html`<section id="delete" class="card danger-zone" aria-labelledby="delete-title">
  <h2 id="delete-title">Delete the account</h2>
  <p>Your keys stop working within a minute; your passkeys, sessions, recovery codes, key labels and name are erased. The calls your keys made stay counted, without any of them. You confirm with one of your passkeys.</p>
  <button type="button" class="danger" data-action="delete-account" data-needs-webauthn>Delete the account</button>
</section>`;
