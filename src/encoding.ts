// Byte encodings, digests and MACs on Web Crypto (workerd and Node 24 alike).

const encoder = new TextEncoder();

export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The decoded text, or undefined when `text` is not unpadded base64url. */
export function fromBase64url(text: string): string | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    return atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return undefined;
  }
}

export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Each byte's two hex digits. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

export async function sha256Hex(text: string): Promise<string> {
  let hex = "";
  for (const b of await sha256(text)) hex += HEX[b];
  return hex;
}

/** Imported HMAC keys by secret: an import costs more than the MAC of a short text. */
const hmacKeys = new Map<string, Promise<CryptoKey>>();

/** The first `bytes` bytes of HMAC-SHA-256 over `text` keyed by `secret`, base64url. */
export async function hmacBase64url(secret: string, text: string, bytes: number): Promise<string> {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    hmacKeys.set(secret, key);
  }
  const mac = await crypto.subtle.sign("HMAC", await key, encoder.encode(text));
  return base64url(new Uint8Array(mac, 0, bytes));
}

/**
 * Whether two MACs are equal, in time that depends on their length only, not on where
 * they differ (Node has no `crypto.subtle.timingSafeEqual`, workerd's is not standard).
 */
export function sameMac(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
