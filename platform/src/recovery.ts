// Recovery codes (docs/platform.md, "Recovery"): 16 characters of Crockford's base32
// (80 random bits), shown as four groups of four, stored only as the SHA-256 of their
// normal form. A person may type them in any case, with or without dashes and spaces.
import { sha256Hex } from "../../src/encoding.ts";
import { RECOVERY_CODES } from "./config.ts";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** RECOVERY_CODES new codes, as shown: `XXXX-XXXX-XXXX-XXXX`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = crypto.getRandomValues(new Uint8Array(10));
    let bits = 0n;
    for (const byte of bytes) bits = (bits << 8n) | BigInt(byte);
    let code = "";
    for (let i = 0; i < 16; i++) code += ALPHABET[Number((bits >> BigInt(75 - i * 5)) & 31n)];
    return code.match(/.{4}/g)?.join("-") ?? code;
  });
}

/** The normal form of a typed code (Crockford's reading: O is 0, I and L are 1), or null. */
export function normalRecoveryCode(typed: string): string | null {
  const code = typed.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
  return code.length === 16 && [...code].every((c) => ALPHABET.includes(c)) ? code : null;
}

/** What is stored of a code: the SHA-256 of its normal form. */
export function recoveryCodeHash(code: string): Promise<string> {
  return sha256Hex(normalRecoveryCode(code) ?? code);
}
