// Unit tests of the JSON body reader's own logic (src/http/json-body.ts); the
// HTTP behaviour it produces is in create-validation.test.ts.
import { describe, expect, it } from "vitest";
import { inspectJson, isIntegerLexeme, parseJsonBody } from "../src/http/json-body.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("isIntegerLexeme", () => {
  it.each(["0", "-0", "1", "-1", "1.0", "1.000", "10e-1", "1.5e1", "1e3", "0.0e-7", "120E-1"])(
    "%s is an integer as written",
    (lexeme) => {
      expect(isIntegerLexeme(lexeme)).toBe(true);
    },
  );

  it.each(["1.5", "1.0000000000000001", "15e-1", "1e-1", "1e-999999", "9007199254740990.9", "x"])(
    "%s is not",
    (lexeme) => {
      expect(isIntegerLexeme(lexeme)).toBe(false);
    },
  );
});

describe("inspectJson", () => {
  it("finds a repeated key at any depth, not the same key in sibling objects", () => {
    expect(inspectJson('{"a":1,"a":2}').problem).toBe('repeats the key "a"');
    expect(inspectJson('{"o":{"a":1,"\\u0061":2}}').problem).toBe('repeats the key "a"');
    expect(inspectJson('[{"a":1},{"a":2}]').problem).toBeUndefined();
    expect(inspectJson('{"a":"\\"a\\"","b":{"a":1}}').problem).toBeUndefined();
  });

  it("counts nesting of objects and arrays together", () => {
    expect(inspectJson(`${"[".repeat(32)}${"]".repeat(32)}`).problem).toBeUndefined();
    expect(inspectJson(`${"[".repeat(33)}${"]".repeat(33)}`).problem).toMatch(/deeper than 32/);
    expect(inspectJson(`${'{"a":'.repeat(33)}1${"}".repeat(33)}`).problem).toMatch(/deeper/);
  });

  it("flags numbers JSON.parse rounds to an integer, and only those", () => {
    expect(inspectJson('{"n":1.0000000000000001}').roundedNumber).toBe(true);
    expect(inspectJson('{"n":[1,2,1e-400]}').roundedNumber).toBe(true);
    expect(inspectJson('{"n":1.0,"m":1.5,"k":-2e3}').roundedNumber).toBe(false);
    // Digits inside strings are not numbers.
    expect(inspectJson('{"n":"1.0000000000000001"}').roundedNumber).toBe(false);
  });
});

describe("parseJsonBody", () => {
  // Its refusals (empty, not JSON, a repeated key, not UTF-8) are create-validation's invalid_json rows.
  it("keeps values exactly (1.0 as 1), and makes a number JSON.parse rounds to an integer NaN", () => {
    const text = '{"a":1.0,"b":"x","c":[true,null],"d":1.0000000000000001,"e":2,"f":1.5}';
    expect(parseJsonBody(bytes(text))).toEqual({
      a: 1,
      b: "x",
      c: [true, null],
      d: NaN,
      e: 2,
      f: 1.5,
    });
  });
});
