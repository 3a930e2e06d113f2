// The platform pages' one script (served from this origin; the CSP allows nothing else).
// Every change is a JSON request to /api from this origin, as the platform requires; after
// each, the page's <main> is read again from the server, so what it shows is true without a
// reload, and the focus moves to what comes next. Passkeys go through @simplewebauthn/browser
// (vendor/simplewebauthn-browser.js, loaded before this file).

const webauthn = window.SimpleWebAuthnBrowser;
const rpID = location.hostname;

/** A failed request: the platform's Error object ({code, message, status, details}). */
class Refusal extends Error {
  constructor(body, status) {
    super(body?.message ?? `The request failed (HTTP ${status}).`);
    this.code = body?.code;
    this.status = status;
    this.details = Array.isArray(body?.details) ? body.details : [];
  }
}

/** A JSON request to the platform; its Error object as a Refusal when it fails. */
async function api(path, body = {}, method = "POST") {
  const response = await fetch(path, {
    method,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new Refusal(data, response.status);
  return data;
}

/** The session ended (signed out elsewhere, expired): sign in, then come back here. */
function signInAgain() {
  location.assign(`/?next=${encodeURIComponent(location.pathname + location.search)}`);
}

/** Tells screen readers (the page's one live region). */
function announce(message) {
  const region = document.getElementById("announce");
  region.textContent = "";
  setTimeout(() => {
    region.textContent = message;
  }, 50);
}

/**
 * A message in the page's flow, right after `anchor` (never over anything): an error stays
 * until the next action there; good news fades after a few seconds.
 */
function note(anchor, message, tone = "error") {
  const place = anchor.closest(".buttons, form") ?? anchor;
  let box = place.nextElementSibling?.classList.contains("note") ? place.nextElementSibling : null;
  if (!box) {
    box = document.createElement("p");
    box.className = "note";
    place.after(box);
  }
  box.textContent = message;
  box.dataset.tone = tone;
  announce(message);
  if (tone === "ok") setTimeout(() => box.remove(), 6000);
}

function clearNotes(scope) {
  for (const box of scope.querySelectorAll(".note")) box.remove();
  const next = scope.nextElementSibling;
  if (next?.classList.contains("note")) next.remove();
}

/** Shows each refused field's problem next to it, in words, and focuses the first. */
function fieldErrors(form, problems) {
  let first;
  for (const { field, message } of problems) {
    const control = form.querySelector(`[name="${CSS.escape(field)}"]`);
    const holder = control?.closest("fieldset") ?? control;
    const slot = holder && document.getElementById(`${holder.id}-error`);
    if (!slot) continue;
    const noun = holder.dataset.noun;
    slot.textContent = /^[A-Z]/.test(message) || !noun ? message : `${noun} ${message}.`;
    slot.hidden = false;
    holder.setAttribute("aria-invalid", "true");
    first ??= holder.matches("fieldset") ? holder.querySelector("input:not(:disabled)") : holder;
  }
  first?.focus();
  return first !== undefined;
}

function clearFieldErrors(form) {
  for (const slot of form.querySelectorAll(".field-error")) {
    slot.hidden = true;
    slot.textContent = "";
  }
  for (const invalid of form.querySelectorAll("[aria-invalid]")) {
    invalid.removeAttribute("aria-invalid");
  }
}

/** What to tell a person when a passkey prompt or a request fails. */
function explain(error) {
  if (error?.name === "NotAllowedError" || error?.name === "AbortError") {
    return "The passkey prompt was closed or timed out. Try again when you are ready.";
  }
  if (
    error?.name === "InvalidStateError" ||
    error?.code === "ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED"
  ) {
    return "This device already holds a passkey for this account.";
  }
  if (error instanceof Refusal) return error.message;
  return "Something went wrong. Try again.";
}

/**
 * Runs `work` for `control` (a button or form): busy meanwhile, but never disabled, so
 * the focus stays where it was; a failure is shown in place (next to its fields when the
 * server names them), an ended session leads to sign-in.
 */
async function busy(control, work) {
  const button = control.matches("form") ? control.querySelector("button[type=submit]") : control;
  if (button.getAttribute("aria-busy") === "true") return;
  button.setAttribute("aria-busy", "true");
  const form = control.closest("form");
  if (form) clearFieldErrors(form);
  clearNotes(control.closest("li, section, form") ?? control);
  try {
    await work();
  } catch (error) {
    if (error instanceof Refusal && error.code === "unauthorized") return signInAgain();
    if (!(form && error instanceof Refusal && fieldErrors(form, error.details))) {
      note(button, explain(error));
      if (document.activeElement === document.body || !document.contains(button)) button.focus();
    }
  } finally {
    button.removeAttribute("aria-busy");
  }
}

/** Reads `url` again and puts its <main>, title and header in place of this page's. */
async function show(url = location.href) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (new URL(response.url).pathname === "/" && new URL(url, location.href).pathname !== "/") {
    return signInAgain();
  }
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const selector of ["main", "header.top"]) {
    const next = fresh.querySelector(selector);
    const current = document.querySelector(selector);
    if (next && current) current.replaceWith(document.importNode(next, true));
  }
  document.title = fresh.title;
  if (url !== location.href) history.pushState(null, "", url);
  markUnsupported();
}

/** Moves the focus to `selector` (made focusable if need be). */
function focusOn(selector) {
  const target = document.querySelector(selector);
  if (!target) return;
  if (!target.matches("a, button, input, select, textarea, [tabindex]")) target.tabIndex = -1;
  target.focus();
}

/**
 * Shows a key once, with what its scopes let it do and not, its ready `curl` line, and moves the
 * focus there.
 */
function reveal(created) {
  const panel = document.getElementById("new-key");
  const lacks = panel.dataset.scopes.split(" ").filter((s) => !created.scopes.includes(s));
  document.getElementById("new-key-value").textContent = created.key;
  document.getElementById("new-key-scopes").textContent =
    `It may use ${created.scopes.join(", ")}` +
    (lacks.length === 0
      ? "."
      : `, not ${lacks.join(" or ")}: a call that needs ${lacks.length > 1 ? "them" : "it"} is refused (403). Its page says what each scope allows.`);
  document.getElementById("new-key-curl").textContent = created.curl;
  document.getElementById("new-key-page").href = `/keys/${created.id}`;
  panel.hidden = false;
  panel.focus();
}

/** Tells the browser which passkeys the account still has (WebAuthn signal API), if it can. */
async function signalPasskeys(section, ids) {
  if (!section?.dataset.userId) return;
  await webauthn
    .sendSignal({
      signalName: "allAcceptedCredentials",
      rpID,
      userID: section.dataset.userId,
      allAcceptedCredentialIDs: ids,
    })
    .catch(() => {});
}

/** Where to go after signing in: the page the person came from, or the keys. */
function afterSignIn() {
  return document.querySelector("[data-next]")?.dataset.next ?? "/keys";
}

/** The account page after securing it: read again, the browser told, the passkeys next. */
async function secured(message, removed) {
  await show();
  const section = document.getElementById("passkeys");
  if (removed) signalPasskeys(section, section.dataset.credentialIds.split(" ").filter(Boolean));
  focusOn("#passkeys-title");
  note(section.querySelector(".items"), message, "ok");
}

let autofill; // the options of the passkey request the browser's autofill holds

async function finishSignIn(optionsJSON, useBrowserAutofill = false) {
  const answer = await webauthn.startAuthentication({ optionsJSON, useBrowserAutofill });
  autofill = undefined;
  try {
    await api("/api/sign-in", answer);
  } catch (error) {
    if (error instanceof Refusal && error.code === "unknown_passkey") {
      webauthn
        .sendSignal({ signalName: "unknownCredential", rpID, credentialID: answer.id })
        .catch(() => {});
    }
    throw error;
  }
  location.assign(afterSignIn());
}

/**
 * Sign-in offers passkeys in the browser's autofill (conditional mediation) where it can.
 * The browser may drop that request at any time (another prompt, a resize): only what the
 * platform refuses is worth saying.
 */
async function offerAutofill() {
  if (!document.getElementById("passkey-field")) return;
  if (!(await webauthn.browserSupportsWebAuthnAutofill().catch(() => false))) return;
  try {
    autofill = await api("/api/sign-in/options");
    await finishSignIn(autofill, true);
  } catch (error) {
    const button = document.querySelector("form[data-action=sign-in] button");
    if (error instanceof Refusal && button) note(button, explain(error));
  }
}

const actions = {
  async "sign-up"(form) {
    const field = form.elements.displayName;
    if (!field.value.trim()) {
      fieldErrors(form, [{ field: "displayName", message: "Enter your name, or your team's." }]);
      return;
    }
    const optionsJSON = await api("/api/sign-up/options", { displayName: field.value });
    await api("/api/sign-up", await webauthn.startRegistration({ optionsJSON }));
    const next = afterSignIn();
    location.assign(next === "/keys" ? "/welcome" : `/welcome?next=${encodeURIComponent(next)}`);
  },
  async "sign-in"() {
    // The challenge the autofill holds serves the button too (the library cancels the one).
    const optionsJSON = autofill ?? (await api("/api/sign-in/options"));
    autofill = undefined;
    await finishSignIn(optionsJSON);
  },
  async recover(form) {
    const field = form.elements.code;
    if (!field.value.trim()) {
      fieldErrors(form, [{ field: "code", message: "Enter one of your recovery codes." }]);
      return;
    }
    await api("/api/sign-in/recovery", { code: field.value });
    location.assign("/account#secure");
  },
  // An OAuth client's consent (pages/consent.ts): the holder's decision, then back to the client.
  async allow(form) {
    const data = new FormData(form);
    const expires = data.get("expiresInSeconds");
    const { redirectTo } = await api(`/api/oauth/grants/${form.dataset.grantId}/allow`, {
      scopes: data.getAll("scopes"),
      expiresInSeconds: expires ? Number(expires) : null,
    });
    location.assign(redirectTo);
  },
  async deny(button) {
    const { redirectTo } = await api(`/api/oauth/grants/${button.dataset.grantId}/deny`);
    location.assign(redirectTo);
  },
  async "sign-out"() {
    await api("/api/sign-out");
    location.assign("/");
  },
  async "sign-out-everywhere"() {
    await api("/api/sign-out-everywhere");
    location.assign("/");
  },
  async "end-session"(button) {
    await api(`/api/sessions/${encodeURIComponent(button.dataset.sessionId)}/end`);
    if (button.hasAttribute("data-current")) return location.assign("/");
    await show();
    focusOn("#sessions-title");
    note(document.querySelector("#sessions .items"), "Signed out there.", "ok");
  },
  async "create-key"(form) {
    const data = new FormData(form);
    const problems = [];
    if (!String(data.get("label")).trim()) {
      problems.push({ field: "label", message: "Give the key a label, such as “storefront web”." });
    }
    if (data.getAll("scopes").length === 0) {
      problems.push({ field: "scopes", message: "Choose at least one thing the key may do." });
    }
    if (problems.length > 0) {
      fieldErrors(form, problems);
      return;
    }
    const expires = data.get("expiresInSeconds");
    const created = await api("/api/keys", {
      label: data.get("label"),
      scopes: data.getAll("scopes"),
      expiresInSeconds: expires ? Number(expires) : null,
    });
    await show("/keys");
    reveal(created);
  },
  async rotate(form) {
    const graceSeconds = Number(new FormData(form).get("graceSeconds"));
    const rotated = await api(`/api/keys/${form.dataset.keyId}/rotate`, { graceSeconds });
    await show(`/keys/${rotated.id}`);
    reveal(rotated);
  },
  async revoke(button) {
    if (
      !confirm(`Stop "${button.dataset.label}" for good? Calls with it will fail within a minute.`)
    ) {
      return;
    }
    await api(`/api/keys/${button.dataset.keyId}/revoke`);
    await show();
    focusOn("#key-title");
    note(
      document.querySelector(".title-row"),
      "Revoked: calls with it fail within a minute.",
      "ok",
    );
  },
  async "rename-key"(form) {
    const label = form.elements.label.value;
    await api(`/api/keys/${form.dataset.keyId}/label`, { label });
    await show();
    focusOn("#key-title");
    note(document.querySelector(".title-row"), "Label saved.", "ok");
  },
  async "add-passkey"() {
    const optionsJSON = await api("/api/passkeys/options");
    const added = await api("/api/passkeys", await webauthn.startRegistration({ optionsJSON }));
    await show();
    const item = `[data-passkey-id="${CSS.escape(added.id)}"]`;
    if (document.getElementById("secure")) {
      // After a recovery, the next step: the lost passkeys and the other sessions.
      focusOn("#secure-title");
      announce(`Passkey added as “${added.name}”. Next: remove what you lost.`);
    } else if (document.querySelector(item)) {
      focusOn(`${item} [data-open]`);
      note(
        document.querySelector(`${item} .buttons`),
        `Added as “${added.name}”; rename it if you like.`,
        "ok",
      );
    } else {
      focusOn("#second-passkey-title, #passkeys-title");
      announce(`Passkey added as “${added.name}”.`);
    }
  },
  async "rename-passkey"(form) {
    const id = form.dataset.passkeyId;
    await api(`/api/passkeys/${encodeURIComponent(id)}/name`, { name: form.elements.name.value });
    await show();
    const item = `[data-passkey-id="${CSS.escape(id)}"]`;
    focusOn(`${item} [data-open]`);
    note(document.querySelector(`${item} .buttons`), "Name saved.", "ok");
  },
  async "remove-passkey"(button) {
    if (!confirm(`Remove the passkey “${button.dataset.name}”? It will no longer sign you in.`))
      return;
    await api(`/api/passkeys/${encodeURIComponent(button.dataset.passkeyId)}`, {}, "DELETE");
    await show();
    const section = document.getElementById("passkeys");
    signalPasskeys(section, section.dataset.credentialIds.split(" ").filter(Boolean));
    focusOn("#passkeys-title");
    note(section.querySelector(".items"), `Removed “${button.dataset.name}”.`, "ok");
  },
  // After a recovery (pages/account.ts): the ticked passkeys removed and the other sessions
  // ended in one step, or everything kept; either way the page stops asking.
  async "secure-account"(form) {
    const removePasskeys = new FormData(form).getAll("removePasskeys");
    const done = await api("/api/account/secure", { removePasskeys, endOtherSessions: true });
    const keys = done.removedPasskeys.length;
    const sessions = done.endedSessions;
    await secured(
      `Removed ${keys} passkey${keys === 1 ? "" : "s"} and signed out ${sessions} other session${sessions === 1 ? "" : "s"}.`,
      keys > 0,
    );
  },
  async "keep-account"() {
    await api("/api/account/secure", { removePasskeys: [], endOtherSessions: false });
    await secured("Kept everything as it was.", false);
  },
  async "create-recovery-codes"(button) {
    if (
      Number(button.dataset.hasCodes) > 0 &&
      !confirm("Make 10 new recovery codes? The codes you have now stop working.")
    ) {
      return;
    }
    const { codes } = await api("/api/recovery-codes");
    await show();
    const list = document.getElementById("recovery-codes-list");
    list.replaceChildren(
      ...codes.map((code) => {
        const item = document.createElement("li");
        item.textContent = code;
        return item;
      }),
    );
    const panel = document.getElementById("recovery-codes-panel");
    panel.hidden = false;
    panel.focus();
  },
  async "delete-account"() {
    if (
      !confirm(
        "Delete the account? Its keys stop working within a minute, and its passkeys, sessions, recovery codes, key labels and name are erased. This cannot be undone.",
      )
    ) {
      return;
    }
    const section = document.getElementById("passkeys");
    const optionsJSON = await api("/api/account/delete/options");
    const passkey = await webauthn.startAuthentication({ optionsJSON });
    await api("/api/account/delete", { passkey });
    await signalPasskeys(section, []);
    location.assign("/?deleted");
  },
};

document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-action]");
  if (!form || !actions[form.dataset.action]) return;
  event.preventDefault();
  busy(form, () => actions[form.dataset.action](form));
});

document.addEventListener("input", (event) => {
  const holder = event.target.closest("[aria-invalid]");
  if (!holder) return;
  holder.removeAttribute("aria-invalid");
  const slot = document.getElementById(`${holder.id}-error`);
  if (slot) slot.hidden = true;
});

/** Opens or closes an inline form (rename) and moves the focus into it or back. */
function toggle(id, open) {
  const form = document.getElementById(id);
  const opener = document.querySelector(`[data-open="${CSS.escape(id)}"]`);
  form.hidden = !open;
  opener?.setAttribute("aria-expanded", String(open));
  if (open) {
    const field = form.querySelector("input");
    field.focus();
    field.select();
  } else {
    clearFieldErrors(form);
    opener?.focus();
  }
}

document.addEventListener("keydown", (event) => {
  const form = event.target.closest?.("form.rename");
  if (event.key === "Escape" && form) toggle(form.id, false);
});

document.addEventListener("click", (event) => {
  const opener = event.target.closest("[data-open]");
  if (opener) {
    toggle(opener.dataset.open, opener.getAttribute("aria-expanded") !== "true");
    return;
  }
  const cancel = event.target.closest("[data-cancel]");
  if (cancel) {
    toggle(cancel.dataset.cancel, false);
    return;
  }
  const copy = event.target.closest("button[data-copy]");
  if (copy) {
    const source = document.getElementById(copy.dataset.copy);
    const text = source.matches("ol")
      ? [...source.children].map((item) => item.textContent).join("\n")
      : source.textContent;
    navigator.clipboard.writeText(text).then(
      () => {
        const label = copy.textContent;
        copy.textContent = "Copied";
        announce("Copied.");
        setTimeout(() => {
          copy.textContent = label;
        }, 2000);
      },
      () => note(copy, "Copying failed: select the text and copy it yourself."),
    );
    return;
  }
  const button = event.target.closest("button[data-action]");
  if (button && actions[button.dataset.action] && !button.disabled) {
    busy(button, () => actions[button.dataset.action](button));
  }
});

// Back and forward after a page was replaced in place: read the page of that address.
window.addEventListener("popstate", () => location.reload());

/** Without WebAuthn, the passkey buttons are off and the page says why. */
function markUnsupported() {
  if (webauthn?.browserSupportsWebAuthn()) return;
  for (const element of document.querySelectorAll("[data-needs-webauthn]")) element.disabled = true;
  const notice = document.getElementById("no-webauthn");
  if (notice) notice.hidden = false;
}

markUnsupported();
document.getElementById("notice")?.focus();
if (location.hash === "#secure") {
  // The browser's own scroll to the fragment moves the focus to the viewport (HTML's focusing
  // steps for an unfocusable target, run until the page has loaded): the heading after that.
  addEventListener("load", () => setTimeout(() => focusOn("#secure-title")), { once: true });
}
if (webauthn?.browserSupportsWebAuthn()) offerAutofill();
