// The start page (sign-up, sign-in, a recovery code) and the welcome after sign-up, which asks
// for a second passkey and recovery codes.
import type { Context } from "hono";
import { html } from "hono/html";
import { RECOVERY_CODES } from "../config.ts";
import type { Account } from "../db/accounts.ts";
import type { Passkey } from "../db/passkeys.ts";
import type { PlatformAppEnv } from "../types.ts";
import { fieldError, RECOVERY_CODES_PANEL } from "./forms.ts";
import type { Html } from "./layout.ts";
import { page } from "./layout.ts";

type C = Context<PlatformAppEnv>;

/** A new account: a display name, then a passkey. */
const SIGN_UP_CARD = html`<section class="card" aria-labelledby="sign-up-title">
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
  </section>`;

/** Sign-in with a passkey (offered in the autofill too), or a recovery code. */
const SIGN_IN_CARD = html`<section class="card" aria-labelledby="sign-in-title">
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
  </section>`;

/**
 * Signed out: sign up or in, then on to `next` (a path of this site) or the keys; a notice when
 * the account was just deleted, or when a session ended on the way to `next`.
 */
export function startPage(c: C, view: { next: string | undefined; deleted: boolean }) {
  const { next } = view;
  const notice = view.deleted
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
  ${SIGN_UP_CARD}
  ${SIGN_IN_CARD}
</div>` as Html,
  });
}

/** Right after sign-up: a second passkey and recovery codes, each marked done once there. */
export function welcomePage(
  c: C,
  view: { account: Account; passkeys: Passkey[]; codes: number; next: string | undefined },
) {
  const { account, passkeys, codes, next } = view;
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
}
