// The name rules (src/pets/names.ts, the API's pet names) on everything a person names on the
// platform: display names, key labels (new and edited) and passkey names. Each hostile
// name is refused with 400 naming its field, and nothing is stored.
import { describe, expect, it } from "vitest";
import { count, expectError, send, signUp } from "./helpers.ts";

/** Names the rules refuse, with the words of the refusal. */
const REFUSED: [string, string, RegExp][] = [
  [
    "a lone combining mark (U+0301)",
    "\u0301",
    /needs a letter, number, punctuation mark or symbol/,
  ],
  ["a private-use character (U+E000)", "\ue000", /needs a letter/],
  ["an unassigned code point (U+0378)", "Ada\u0378", /unassigned code points or noncharacters/],
  ["a noncharacter (U+FFFE)", "\ufffeAda", /unassigned code points or noncharacters/],
  ["a noncharacter (U+FFFF)", "Ada\uffff", /unassigned code points or noncharacters/],
  ["only white space", " \u3000 ", /must not be blank/],
  ["a right-to-left override", "Ada\u202eevil", /bidirectional control/],
  ["a control character", "Ada\nshop", /control characters/],
  ["a lone surrogate", "Ada\ud800", /lone surrogates/],
];

describe("display names", () => {
  it.each(REFUSED)(
    "refuses %s at sign-up, before a challenge is stored",
    async (_what, name, words) => {
      const before = await count("challenges", "1 = 1");
      const response = await send("/api/sign-up/options", { json: { displayName: name } });
      const body = await expectError(response, 400, "validation_failed", words);
      expect(body.details).toEqual([{ field: "displayName", message: expect.any(String) }]);
      expect(await count("challenges", "1 = 1")).toBe(before);
    },
  );

  it("takes a name of 64 characters with a combining mark on a letter, and refuses 65", async () => {
    const ok = await send("/api/sign-up/options", {
      json: { displayName: `e\u0301${"a".repeat(62)}` },
    });
    expect(ok.status).toBe(200);
    const long = await send("/api/sign-up/options", { json: { displayName: "a".repeat(65) } });
    await expectError(long, 400, "validation_failed", /1 to 64 characters/);
  });
});

describe("key labels", () => {
  it.each(REFUSED)("refuses %s for a new key, which is not made", async (_what, label, words) => {
    const { session, account } = await signUp();
    const response = await send("/api/keys", { json: { label, scopes: ["pets:read"] }, session });
    const body = await expectError(response, 400, "validation_failed", words);
    expect(body.details).toEqual([{ field: "label", message: expect.any(String) }]);
    expect(await count("api_keys", "account_id = ?1", account.id)).toBe(0);
  });
});
