// Unit tests of the JSON body reader's own logic (src/http/json-body.ts); the
// HTTP behaviour it produces is in create-validation.test.ts.
import { describe, expect, it } from "vitest";
import { ApiError } from "../src/errors.ts";
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
  it("keeps values exactly, including 1.0 as 1", () => {
    expect(parseJsonBody(bytes('{"a":1.0,"b":"x","c":[true,null]}'))).toEqual({
      a: 1,
      b: "x",
      c: [true, null],
    });
  });

  it("turns a number rounded to an integer into NaN, so integer fields refuse it", () => {
    const value = parseJsonBody(bytes('{"a":1.0000000000000001,"b":2,"c":1.5}')) as Record<
      string,
      number
    >;
    expect(value.a).toBeNaN();
    expect(value.b).toBe(2);
    expect(value.c).toBe(1.5);
  });

  it.each([
    ["", /empty/],
    ["{", /not valid JSON/],
    ['{"a":1,"a":1}', /repeats the key "a"/],
    [new Uint8Array([0x7b, 0xff, 0x7d]), /UTF-8/],
  ])("refuses %j as invalid_json", (text, message) => {
    const body = typeof text === "string" ? bytes(text) : text;
    expect(() => parseJsonBody(body)).toThrow(
      expect.objectContaining({
        constructor: ApiError,
        code: "invalid_json",
        message: expect.stringMatching(message),
      }),
    );
  });
});
