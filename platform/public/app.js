// The platform pages' one script (served from this origin; the CSP allows nothing else).
// Every change is a JSON request to /api from this origin, as the platform requires.
// Passkeys go through @simplewebauthn/browser (vendor/simplewebauthn-browser.js, loaded
// before this file), which turns the server's JSON options into WebAuthn calls and back.

const webauthn = window.SimpleWebAuthnBrowser;
const statusBox = document.getElementById("status");
let statusTimer;

/** Shows a message in the page's live region (read out by screen readers); good news fades. */
function say(message, tone = "error") {
  document.getElementById("status-text").textContent = message;
  statusBox.dataset.tone = tone;
  statusBox.hidden = false;
  clearTimeout(statusTimer);
  if (tone === "ok") {
    statusTimer = setTimeout(() => {
      statusBox.hidden = true;
    }, 6000);
  }
}

/** A JSON request to the platform; its Error object's message when it fails. */
async function api(path, body = {}, method = "POST") {
  const response = await fetch(path, {
    method,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    throw new Error(data?.message ?? `The request failed (HTTP ${response.status}).`);
  }
  return data;
}

/** What to tell a person when a passkey prompt or a request fails. */
function explain(error) {
  if (error?.name === "NotAllowedError" || error?.name === "AbortError") {
    return "The passkey prompt was closed or timed out. Try again when you are ready.";
  }
  if (error?.name === "InvalidStateError") {
    return "This device already holds a passkey for this account.";
  }
  return error?.message || "Something went wrong. Try again.";
}

/** Runs `work` with `button` busy (disabled, aria-busy), reporting any failure. */
async function busy(button, work) {
  if (button) {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
  }
  statusBox.hidden = true;
  try {
    await work();
  } catch (error) {
    say(explain(error));
  } finally {
    if (button) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
    }
  }
}

/** Replaces the elements with these ids by their fresh copies from the server. */
async function refresh(...ids) {
  const response = await fetch(location.href, { credentials: "same-origin" });
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const id of ids) {
    const next = fresh.getElementById(id);
    const current = document.getElementById(id);
    if (next && current) current.replaceWith(document.importNode(next, true));
  }
}

/** Shows a key once, with its ready `curl` line, and moves the focus there. */
function reveal(created) {
  document.getElementById("new-key-value").textContent = created.key;
  document.getElementById("new-key-curl").textContent = created.curl;
  document.getElementById("new-key-page").href = `/keys/${created.id}`;
  const panel = document.getElementById("new-key");
  panel.hidden = false;
  panel.focus();
}

/** Where to go once signed in: back to the page that asked (a consent page), else the keys. */
function afterSignIn(element) {
  const back = element.closest("[data-return]")?.dataset.return;
  return back?.startsWith("/") && !back.startsWith("//") ? back : "/keys";
}

const actions = {
  async "sign-up"(form) {
    const displayName = new FormData(form).get("displayName");
    const optionsJSON = await api("/api/sign-up/options", { displayName });
    await api("/api/sign-up", await webauthn.startRegistration({ optionsJSON }));
    location.assign(afterSignIn(form));
  },
  async "sign-in"(button) {
    const optionsJSON = await api("/api/sign-in/options");
    await api("/api/sign-in", await webauthn.startAuthentication({ optionsJSON }));
    location.assign(afterSignIn(button));
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
  async "create-key"(form) {
    const data = new FormData(form);
    const expires = data.get("expiresInSeconds");
    const created = await api("/api/keys", {
      label: data.get("label"),
      scopes: data.getAll("scopes"),
      expiresInSeconds: expires ? Number(expires) : null,
    });
    form.reset();
    await refresh("keys", "key-count", "create");
    reveal(created);
  },
  async rotate(form) {
    const graceSeconds = Number(new FormData(form).get("graceSeconds"));
    const rotated = await api(`/api/keys/${form.dataset.keyId}/rotate`, { graceSeconds });
    await refresh("facts");
    reveal(rotated);
  },
  async revoke(button) {
    if (!confirm(`Revoke "${button.dataset.label}"? Calls with it will fail within a minute.`)) {
      return;
    }
    await api(`/api/keys/${button.dataset.keyId}/revoke`);
    location.reload();
  },
  async "add-passkey"() {
    const optionsJSON = await api("/api/passkeys/options");
    await api("/api/passkeys", await webauthn.startRegistration({ optionsJSON }));
    await refresh("passkeys");
    say("Passkey added.", "ok");
  },
  async "remove-passkey"(button) {
    if (!confirm("Remove this passkey? It will no longer sign you in.")) return;
    await api(`/api/passkeys/${encodeURIComponent(button.dataset.passkeyId)}`, {}, "DELETE");
    await refresh("passkeys");
    say("Passkey removed.", "ok");
  },
};

document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-action]");
  if (!form || !actions[form.dataset.action]) return;
  event.preventDefault();
  busy(form.querySelector("button[type=submit]"), () => actions[form.dataset.action](form));
});

document.addEventListener("click", (event) => {
  if (event.target.closest("button[data-dismiss]")) {
    statusBox.hidden = true;
    return;
  }
  const copy = event.target.closest("button[data-copy]");
  if (copy) {
    const text = document.getElementById(copy.dataset.copy).textContent;
    navigator.clipboard.writeText(text).then(
      () => {
        const label = copy.textContent;
        copy.textContent = "Copied";
        setTimeout(() => {
          copy.textContent = label;
        }, 2000);
      },
      () => say("Copying failed: select the text and copy it yourself."),
    );
    return;
  }
  const button = event.target.closest("button[data-action]");
  if (button && actions[button.dataset.action]) {
    busy(button, () => actions[button.dataset.action](button));
  }
});

if (!webauthn?.browserSupportsWebAuthn()) {
  for (const element of document.querySelectorAll("[data-needs-webauthn]")) element.disabled = true;
  const notice = document.getElementById("no-webauthn");
  if (notice) notice.hidden = false;
}
