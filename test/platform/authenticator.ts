// A software passkey authenticator for the tests, made of WebCrypto keys (ECDSA P-256,
// COSE algorithm ES256) and CBOR from cbor2: it returns the platform's WebAuthn options
// the way a browser and a platform authenticator do (W3C WebAuthn Level 3, sections 6.1
// "Authenticator Data", 6.5.4 "attestation object", 5.8.1 "client data"), "none"
// attestation. Every field can be falsified to attack the server's checks.
import { encode } from "cbor2";
import { base64url } from "../../src/encoding.ts";

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;
const FLAG_ATTESTED_CREDENTIAL = 0x40;
const COSE_ES256 = -7;

/** What a test may falsify in a ceremony; by default everything is what a browser sends. */
export interface Forgery {
  /** The page's origin in the client data (default: the platform's own). */
  origin?: string;
  /** The RP ID whose SHA-256 begins the authenticator data (default: the options' one). */
  rpId?: string;
  /** The client data's type (default: webauthn.create / webauthn.get). */
  type?: string;
  /** The challenge the client data carries (default: the options' one). */
  challenge?: string;
  /** Whether the authenticator says it verified the user (default: yes). */
  userVerified?: boolean;
  /** The signature counter to report (default: one more than last time). */
  counter?: number;
  /** The user handle to send at sign-in (default: the one registered). */
  userHandle?: string;
  /** The client data's `crossOrigin`: the ceremony ran in a frame of another origin (default: no). */
  crossOrigin?: boolean;
}

interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}

interface RequestOptions {
  challenge: string;
  rpId?: string;
}

const utf8 = new TextEncoder();

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  // Node's TextEncoder types its output over ArrayBufferLike; it is an ArrayBuffer.
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function uint32(n: number): Uint8Array {
  return new Uint8Array([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
}

/** WebCrypto's ECDSA signature (r || s) as the DER SEQUENCE that WebAuthn carries. */
function derSignature(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i++;
    const trimmed = bytes.slice(i);
    const body = (trimmed[0] ?? 0) & 0x80 ? concat(new Uint8Array([0]), trimmed) : trimmed;
    return concat(new Uint8Array([0x02, body.length]), body);
  };
  const half = raw.length / 2;
  const sequence = concat(integer(raw.slice(0, half)), integer(raw.slice(half)));
  return concat(new Uint8Array([0x30, sequence.length]), sequence);
}

export class SoftwareAuthenticator {
  private readonly rawId = crypto.getRandomValues(new Uint8Array(16));
  readonly credentialId = base64url(this.rawId);
  counter = 0;
  /** The user handle (base64url) the last registration stored with the credential. */
  userHandle: string | undefined;

  private readonly keys: CryptoKeyPair;
  private readonly origin: string;
  private readonly aaguid: Uint8Array;

  private constructor(keys: CryptoKeyPair, origin: string, aaguid: Uint8Array) {
    this.keys = keys;
    this.origin = origin;
    this.aaguid = aaguid;
  }

  /**
   * A new authenticator holding one new ES256 key, used from `origin`; its model's AAGUID
   * (`xxxxxxxx-xxxx-...`, default all zeros: a model that keeps it to itself).
   */
  static async create(origin: string, aaguid?: string): Promise<SoftwareAuthenticator> {
    const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const bytes = new Uint8Array(16);
    const hex = (aaguid ?? "").replaceAll("-", "");
    for (let i = 0; i < hex.length / 2; i++)
      bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
    return new SoftwareAuthenticator(keys, origin, bytes);
  }

  private clientData(type: string, challenge: string, forgery: Forgery): Uint8Array {
    return utf8.encode(
      JSON.stringify({
        type: forgery.type ?? type,
        challenge: forgery.challenge ?? challenge,
        origin: forgery.origin ?? this.origin,
        crossOrigin: forgery.crossOrigin ?? false,
      }),
    );
  }

  private async authData(rpId: string, forgery: Forgery, extra = new Uint8Array()) {
    const flags =
      FLAG_USER_PRESENT |
      (forgery.userVerified === false ? 0 : FLAG_USER_VERIFIED) |
      (extra.length > 0 ? FLAG_ATTESTED_CREDENTIAL : 0);
    return concat(
      await sha256(utf8.encode(forgery.rpId ?? rpId)),
      new Uint8Array([flags]),
      uint32(forgery.counter ?? this.counter),
      extra,
    );
  }

  /** navigator.credentials.create(), as @simplewebauthn/browser's JSON. */
  async register(options: CreationOptions, forgery: Forgery = {}) {
    const raw = new Uint8Array(
      (await crypto.subtle.exportKey("raw", this.keys.publicKey)) as ArrayBuffer,
    );
    const coseKey = encode(
      new Map<number, unknown>([
        [1, 2], // kty: EC2
        [3, COSE_ES256], // alg
        [-1, 1], // crv: P-256
        [-2, raw.slice(1, 33)], // x
        [-3, raw.slice(33, 65)], // y
      ]),
    );
    const id = this.rawId;
    const attested = concat(this.aaguid, new Uint8Array([0, id.length]), id, coseKey);
    const authData = await this.authData(options.rp.id ?? "", forgery, attested);
    this.userHandle = options.user.id;
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      response: {
        clientDataJSON: base64url(this.clientData("webauthn.create", options.challenge, forgery)),
        attestationObject: base64url(encode({ fmt: "none", attStmt: {}, authData })),
        transports: ["internal", "hybrid"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** navigator.credentials.get(), as @simplewebauthn/browser's JSON; counts one use. */
  async authenticate(options: RequestOptions, forgery: Forgery = {}) {
    if (forgery.counter === undefined) this.counter++;
    const authData = await this.authData(options.rpId ?? "", forgery);
    const clientData = this.clientData("webauthn.get", options.challenge, forgery);
    const signed = concat(authData, await sha256(clientData));
    const signature = new Uint8Array(
      await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, this.keys.privateKey, signed),
    );
    const userHandle = forgery.userHandle ?? this.userHandle;
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      response: {
        clientDataJSON: base64url(clientData),
        authenticatorData: base64url(authData),
        signature: base64url(derSignature(signature)),
        ...(userHandle === undefined ? {} : { userHandle }),
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }
}
