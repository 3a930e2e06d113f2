// Unit tests of the JSON body reader's own logic (src/http/json-body.ts); the
// HTTP behaviour it produces is in create-validation.test.ts.
import { describe, expect, it } from "vitest";
import { inspectJson, parseJsonBody } from "../src/http/json-body.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("inspectJson", () => {
  it("finds a repeated key at any depth, not the same key in sibling objects", () => {
    expect(inspectJson('{"a":1,"a":2}')).toBe('repeats the key "a"');
    expect(inspectJson('{"o":{"a":1,"\\u0061":2}}')).toBe('repeats the key "a"');
    expect(inspectJson('[{"a":1},{"a":2}]')).toBeUndefined();
    expect(inspectJson('{"a":"\\"a\\"","b":{"a":1}}')).toBeUndefined();
  });

  it("counts nesting of objects and arrays together", () => {
    expect(inspectJson(`${"[".repeat(32)}${"]".repeat(32)}`)).toBeUndefined();
    expect(inspectJson(`${"[".repeat(33)}${"]".repeat(33)}`)).toMatch(/deeper than 32/);
    expect(inspectJson(`${'{"a":'.repeat(33)}1${"}".repeat(33)}`)).toMatch(/deeper/);
  });
});

describe("parseJsonBody", () => {
  // Its refusals (empty, not JSON, a repeated key, not UTF-8) are create-validation's invalid_json rows.
  it("gives the values JSON.parse reads: 1.0 is 1, and a number is an IEEE 754 double", () => {
    const text = '{"a":1.0,"b":"x","c":[true,null],"d":1.0000000000000001,"e":2,"f":1.5}';
    expect(parseJsonBody(bytes(text))).toEqual({
      a: 1,
      b: "x",
      c: [true, null],
      d: 1,
      e: 2,
      f: 1.5,
    });
  });
});
