// The key module runs in Node too (the key CLI and the developer platform's tools use it
// there), where Web Crypto has no timingSafeEqual: a key issued here passes the worker's
// format check here, and nothing else does.
import { expect, it } from "vitest";
import {
  displayPrefix,
  hashApiKey,
  issueApiKey,
  KEY_PREFIX,
  keyFormat,
  LOCAL_KEY_TAG_SECRET,
  tagSecrets,
} from "../../src/auth/keys.ts";

it("issues, checks and hashes keys in Node", async () => {
  const [secret = ""] = tagSecrets({ ENVIRONMENT: "local" });
  expect(secret).toBe(LOCAL_KEY_TAG_SECRET);
  const key = await issueApiKey(secret);
  expect(key.startsWith(KEY_PREFIX)).toBe(true);
  expect(displayPrefix(key)).toBe(key.slice(0, 10));
  expect(await keyFormat(key, [secret], "production")).toBe("tagged");
  const altered = `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`;
  expect(await keyFormat(altered, [secret], "production")).toBe("invalid");
  expect(await keyFormat(key, ["another secret"], "production")).toBe("invalid");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  expect(await hashApiKey(key)).toBe(Buffer.from(digest).toString("hex"));
});
