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
import { decodeClientDataJSON } from "@simplewebauthn/server/helpers";
import { base64url, fromBase64url } from "../../src/encoding.ts";
import { CHALLENGE_TTL_SECONDS, RP_NAME } from "./config.ts";
import type { NewPasskey, Passkey } from "./db/accounts.ts";
import { PlatformError } from "./errors.ts";

export type { AuthenticationResponseJSON, RegistrationResponseJSON };

/** Who the passkeys are for: the platform's host, and the one origin its pages have. */
export interface RelyingParty {
  id: string;
  origin: string;
}

/** The relying party of PLATFORM_ORIGIN (its host is the RP ID; an IP address cannot be). */
export function relyingParty(platformOrigin: string): RelyingParty {
  const url = new URL(platformOrigin);
  return { id: url.hostname, origin: url.origin };
}

/** The browser's timeout: the challenge's own lifetime. */
const TIMEOUT_MS = CHALLENGE_TTL_SECONDS * 1000;

/** Options for a new discoverable passkey with user verification (sign-up, add a passkey). */
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

/** Options for signing in with any passkey of this relying party (a discoverable one). */
export function authenticationOptions(
  rp: RelyingParty,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.id,
    timeout: TIMEOUT_MS,
    userVerification: "required",
  });
}

/** The challenge a response answers, as the browser signed it; invalid_challenge if unreadable. */
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

/**
 * Refuses a ceremony run in a frame of another origin (`clientData.crossOrigin: true`): the
 * platform's pages are never framed (`frame-ancestors 'none'`), so such a response came
 * from a page that embedded the ceremony. The library does not check it.
 */
function refuseCrossOrigin(response: { response: { clientDataJSON: string } }, code: RefusalCode) {
  const { crossOrigin } = decodeClientDataJSON(response.response.clientDataJSON);
  if (crossOrigin === true) {
    throw rejected(code, new Error("it was made in a frame of another origin (crossOrigin: true)"));
  }
}

/** A checked registration: the new passkey's row (without its account and time). */
export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  challenge: string,
): Promise<Omit<NewPasskey, "accountId" | "createdAt">> {
  refuseCrossOrigin(response, "passkey_rejected");
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
  } catch (err) {
    throw rejected("passkey_rejected", err);
  }
  if (!result.verified) throw rejected("passkey_rejected", undefined);
  const { credential } = result.registrationInfo;
  return {
    credentialId: credential.id,
    publicKey: credential.publicKey,
    counter: credential.counter,
    transports: (response.response.transports ?? []).filter((t) => /^[a-z-]{1,32}$/.test(t)),
  };
}

/** A checked sign-in with `passkey`: the authenticator's new counter. */
export async function verifyAuthentication(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  challenge: string,
  passkey: Passkey,
): Promise<number> {
  refuseCrossOrigin(response, "sign_in_failed");
  let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      expectedType: "webauthn.get",
      requireUserVerification: true,
      credential: {
        id: passkey.credentialId,
        publicKey: passkey.publicKey,
        counter: passkey.counter,
      },
    });
  } catch (err) {
    throw rejected("sign_in_failed", err);
  }
  if (!result.verified) throw rejected("sign_in_failed", undefined);
  return result.authenticationInfo.newCounter;
}

/**
 * The refusal of a response that failed a check. The library's reason (a wrong origin,
 * RP ID, type or counter; no user verification) is in the message: it tells the person's
 * own browser what went wrong, and nothing about anyone else.
 */
type RefusalCode = "passkey_rejected" | "sign_in_failed";

function rejected(code: RefusalCode, err: unknown): PlatformError {
  const reason = err instanceof Error ? `: ${err.message.slice(0, 200)}` : "";
  return new PlatformError(
    code,
    code === "sign_in_failed"
      ? `The passkey could not be verified${reason}.`
      : `The new passkey could not be verified${reason}.`,
  );
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
