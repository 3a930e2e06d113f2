// The issued key format (src/auth/keys.ts) at its edges: exactly `psk_`, 43 and 22 base64url
// characters, nothing before or after; anything else is invalid before its tag is checked.
import { expect, it } from "vitest";
import { displayPrefix, issueApiKey, keyFormat } from "../src/auth/keys.ts";

const SECRET = "key-format secret";

it("a valid key with anything before or after it, or a character outside base64url, is invalid", async () => {
  const key = await issueApiKey(SECRET);
  expect(await keyFormat(key, [SECRET], "production")).toBe("tagged");
  for (const token of [
    `x${key}`,
    ` ${key}`,
    `psk_${key}`,
    `${key}A`,
    `${key}\n`,
    `${key.slice(0, 20)}.${key.slice(21)}`,
    `${key.slice(0, 50)}=${key.slice(51)}`,
    `PSK_${key.slice(4)}`,
  ]) {
    expect(await keyFormat(token, [SECRET], "production"), token).toBe("invalid");
    // Without a secret to check tags with, only the shape decides.
    expect(await keyFormat(token, [], "production"), token).toBe("invalid");
  }
  expect(await keyFormat(key, [], "production")).toBe("unchecked");
});

it("every base64url character is accepted in both parts", async () => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const body = `psk_${alphabet.slice(0, 43)}`;
  const tag = alphabet.slice(42, 64);
  expect(await keyFormat(`${body}${tag}`, [], "production")).toBe("unchecked");
  expect(
    await keyFormat(`psk_${alphabet.slice(21, 64)}${alphabet.slice(0, 22)}`, [], "local"),
  ).toBe("unchecked");
});

it("what `keys list` shows of a key is its prefix and 6 random characters, nothing of the rest", async () => {
  const key = await issueApiKey(SECRET);
  expect(displayPrefix(key)).toBe(key.slice(0, 10));
  expect(displayPrefix(key)).toMatch(/^psk_[A-Za-z0-9_-]{6}$/);
});
