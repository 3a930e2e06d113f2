// The WebAuthn ceremonies, through @simplewebauthn/server: options for the browser and
// the checks of what it sends back (origin, RP ID, challenge, type, user presence and
// verification, signature, counter). Challenges are stored by the caller.
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import {
  decodeAttestationObject,
  decodeClientDataJSON,
  isoBase64URL,
  parseAuthenticatorData,
} from "@simplewebauthn/server/helpers";
import { base64url, fromBase64url } from "../../src/encoding.ts";
import { CHALLENGE_TTL_SECONDS, RP_NAME } from "./config.ts";
import type { NewPasskey, Passkey } from "./db/passkeys.ts";
import { PlatformError } from "./errors.ts";

export type { AuthenticationResponseJSON, RegistrationResponseJSON };

/** Who the passkeys are for: the platform's host, and the one origin its pages have. */
export interface RelyingParty {
  /** The RP ID (WebAuthn Level 2 §5.4.2): the platform's host, so passkeys work nowhere else. */
  id: string;
  /** The one origin a ceremony's client data may name (checked in §7.1 and §7.2). */
  origin: string;
}

/** The relying party of PLATFORM_ORIGIN (its host is the RP ID; an IP address cannot be). */
export function relyingParty(platformOrigin: string): RelyingParty {
  const url = new URL(platformOrigin);
  return { id: url.hostname, origin: url.origin };
}

/** The browser's timeout: the challenge's own lifetime. */
const TIMEOUT_MS = CHALLENGE_TTL_SECONDS * 1000;

/**
 * Options for a new passkey (sign-up, add a passkey; WebAuthn Level 2 §5.4): discoverable
 * (`residentKey` required, §5.4.6), so sign-in needs no user name; user verification required
 * (§5.8.6), so the passkey alone is both factors; attestation `none` (§5.4.7), since no
 * authenticator model is refused; the account's passkeys excluded, so one device is not added
 * twice. The user handle is the account id (§5.4.3): random, naming no one (§14.6.1).
 */
export function registrationOptions(
  rp: RelyingParty,
  user: { accountId: string; displayName: string },
  exclude: readonly Pick<Passkey, "credentialId" | "transports">[] = [],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userID: new Uint8Array(new TextEncoder().encode(user.accountId)),
    userName: user.displayName,
    userDisplayName: user.displayName,
    timeout: TIMEOUT_MS,
    attestationType: "none",
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
    excludeCredentials: exclude.map((p) => ({ id: p.credentialId, transports: p.transports })),
  });
}

/**
 * Options for signing in with any passkey of this relying party (an empty `allowCredentials`,
 * WebAuthn Level 2 §5.5: the browser offers the discoverable ones), or, to confirm an action,
 * with one of `allow` (the signed-in account's); user verification required as at registration.
 */
export function authenticationOptions(
  rp: RelyingParty,
  allow?: readonly Pick<Passkey, "credentialId" | "transports">[],
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.id,
    timeout: TIMEOUT_MS,
    userVerification: "required",
    ...(allow
      ? { allowCredentials: allow.map((p) => ({ id: p.credentialId, transports: p.transports })) }
      : {}),
  });
}

/**
 * The challenge a response carries, from the client data the browser signed (WebAuthn Level 2
 * §5.8.1); invalid_challenge if unreadable. The caller looks it up by hash and takes it once.
 */
export function challengeOf(response: { response: { clientDataJSON: string } }): string {
  try {
    const { challenge } = decodeClientDataJSON(response.response.clientDataJSON);
    if (typeof challenge === "string" && challenge !== "") return challenge;
  } catch {
    // falls through to the refusal
  }
  throw new PlatformError(
    "invalid_challenge",
    "The passkey response carries no readable challenge; start again.",
  );
}

type Ceremony = "passkey_rejected" | "sign_in_failed";

/** What a person is told when a passkey's answer fails a check (never the library's text). */
const REFUSALS = {
  origin:
    "The passkey answered for another website, not this one. Use this site's own page to sign in.",
  framed:
    "The passkey was asked for from inside another website's page. Open this site's own page to sign in.",
  verification:
    "Your device did not confirm it was you (with a fingerprint, face, PIN or screen lock). Try again, and confirm when it asks.",
  copied:
    "This passkey reported fewer uses than it had before, which is how a copied passkey looks, so it was refused. Sign in with another passkey or a recovery code, then remove this one on your account page.",
  passkey_rejected: "The new passkey could not be checked. Try again, or use another device.",
  sign_in_failed: "The passkey could not be checked. Try again, or use another passkey.",
} as const;

function refuse(code: Ceremony, reason: keyof typeof REFUSALS): PlatformError {
  return new PlatformError(code, REFUSALS[reason]);
}

/**
 * The checks a person can act on, made before the library's (which makes them again): the
 * origin the browser saw (WebAuthn Level 2 §7.1, §7.2), a frame of another origin
 * (`CollectedClientData.crossOrigin`, §5.8.1) and user verification (the UV flag, §6.1).
 * Anything else the library refuses gets the general words.
 */
function precheck(
  code: Ceremony,
  rp: RelyingParty,
  response: { response: { clientDataJSON: string } },
  authData: Uint8Array<ArrayBuffer> | undefined,
): void {
  let clientData: { origin: unknown; crossOrigin?: unknown };
  try {
    clientData = decodeClientDataJSON(response.response.clientDataJSON);
  } catch {
    throw refuse(code, code);
  }
  if (clientData.origin !== rp.origin) throw refuse(code, "origin");
  // The platform's pages are never framed (frame-ancestors 'none'): a ceremony run in a frame
  // of another origin came from a page that embedded it. The library does not check it.
  if (clientData.crossOrigin === true) throw refuse(code, "framed");
  if (!authData) return;
  let uv: boolean;
  try {
    uv = parseAuthenticatorData(authData).flags.uv;
  } catch {
    throw refuse(code, code);
  }
  if (!uv) throw refuse(code, "verification");
}

/** The authenticator data of a registration's attestation object, if it can be read. */
function registrationAuthData(attestationObject: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const decoded = decodeAttestationObject(isoBase64URL.toBuffer(attestationObject));
    return new Uint8Array(decoded.get("authData"));
  } catch {
    return undefined;
  }
}

/**
 * A checked registration (WebAuthn Level 2 §7.1, by @simplewebauthn/server: challenge, origin,
 * RP ID, type, user presence and verification, attestation): the new passkey's row, without its
 * account, time and name. Transports and the AAGUID are kept only in their expected shapes.
 */
export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  challenge: string,
): Promise<Omit<NewPasskey, "accountId" | "createdAt" | "name">> {
  precheck(
    "passkey_rejected",
    rp,
    response,
    registrationAuthData(response.response.attestationObject),
  );
  let result: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      expectedType: "webauthn.create",
      requireUserPresence: true,
      requireUserVerification: true,
    });
  } catch {
    throw refuse("passkey_rejected", "passkey_rejected");
  }
  if (!result.verified) throw refuse("passkey_rejected", "passkey_rejected");
  const { credential, aaguid } = result.registrationInfo;
  return {
    credentialId: credential.id,
    publicKey: credential.publicKey,
    counter: credential.counter,
    transports: (response.response.transports ?? []).filter((t) => /^[a-z-]{1,32}$/.test(t)),
    aaguid: /^[0-9a-f-]{36}$/i.test(aaguid) ? aaguid.toLowerCase() : null,
  };
}

/**
 * A checked assertion with `passkey` (WebAuthn Level 2 §7.2): the authenticator's new counter.
 * The counter is compared here, after the signature, as §6.1.1 says: if either is non-zero the
 * new one must be greater, else the passkey may have been copied and is refused.
 */
export async function verifyAuthentication(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  challenge: string,
  passkey: Passkey,
): Promise<number> {
  let authData: Uint8Array<ArrayBuffer> | undefined;
  try {
    authData = new Uint8Array(isoBase64URL.toBuffer(response.response.authenticatorData));
  } catch {
    authData = undefined;
  }
  precheck("sign_in_failed", rp, response, authData);
  let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      expectedType: "webauthn.get",
      requireUserVerification: true,
      // The counter is ours to compare, after the signature: see below.
      credential: { id: passkey.credentialId, publicKey: passkey.publicKey, counter: 0 },
    });
  } catch {
    throw refuse("sign_in_failed", "sign_in_failed");
  }
  if (!result.verified) throw refuse("sign_in_failed", "sign_in_failed");
  // A signed counter that did not grow (one that stays 0, as synced passkeys keep it, may).
  const { newCounter } = result.authenticationInfo;
  if ((newCounter > 0 || passkey.counter > 0) && newCounter <= passkey.counter) {
    throw refuse("sign_in_failed", "copied");
  }
  return newCounter;
}

/**
 * The user handle of an account (base64url of its id's bytes), as the WebAuthn signal API wants it.
 */
export function userHandleOf(accountId: string): string {
  return base64url(new TextEncoder().encode(accountId));
}

/** A random id with a readable prefix: `acct_` + 22 base64url characters (128 bits). */
export function randomId(prefix: string): string {
  return `${prefix}${base64url(crypto.getRandomValues(new Uint8Array(16)))}`;
}

/**
 * The account id a response's user handle names: base64url of the id's bytes, which are
 * ASCII (randomId), so the decoded byte string is the id itself.
 */
export function accountIdOfUserHandle(userHandle: string | undefined): string | undefined {
  return userHandle === undefined ? undefined : fromBase64url(userHandle);
}
