// The JSON the platform's responses give of an account, a passkey and a session: times in
// ISO 8601, never a passkey's public key or a session token's hash.
import { isoTime } from "../../src/clock.ts";
import type { Account } from "./db/accounts.ts";
import type { Passkey } from "./db/passkeys.ts";
import type { ListedSession } from "./db/sessions.ts";
import { authenticatorName } from "./devices.ts";

/** The JSON of an account. */
export function accountJson(a: Pick<Account, "id" | "displayName" | "createdAt">) {
  return { id: a.id, displayName: a.displayName, createdAt: isoTime(a.createdAt) };
}

/** The JSON of a passkey: never its public key. */
export function passkeyJson(p: Passkey) {
  return {
    id: p.credentialId,
    name: p.name,
    authenticator: authenticatorName(p.aaguid),
    transports: p.transports,
    createdAt: isoTime(p.createdAt),
    lastUsedAt: isoTime(p.lastUsedAt),
  };
}

/** The JSON of a signed-in session; `current`: the one this request came with. */
export function sessionJson(s: ListedSession, currentId: string | undefined) {
  return {
    id: s.id,
    browser: s.browser,
    createdAt: isoTime(s.createdAt),
    lastSeenAt: isoTime(s.lastSeenAt),
    current: s.id === currentId,
  };
}
