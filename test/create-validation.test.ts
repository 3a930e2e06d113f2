// createPet's body: what is accepted and returned exactly as sent, and what is refused,
// checked in the order size (413) -> media type (415) -> JSON (400 invalid_json) ->
// validation (400 validation_failed). Every refusal goes through the worker and through
// the real app over a recorded D1 (refusalChecker): no statement may run, no pet appear.
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError } from "./helpers.ts";
import {
  expectCreated,
  postOptions,
  type RefusalChecker,
  refusalChecker,
  SQL_PAYLOADS,
} from "./support/requests.ts";

type Body = BodyInit | null | (() => BodyInit);
type Headers = Record<string, string>;

let key: string;
let checker: RefusalChecker;
beforeAll(async () => {
  checker = await refusalChecker("create-validation");
  key = checker.key;
});

const encoder = new TextEncoder();
const MAX = 9007199254740991;
const JSON_TYPE: Headers = { "Content-Type": "application/json" };
const REX = '{"name":"Rex","categoryId":7}';
const oversized = `{"name":"Rex","categoryId":1,"pad":"${"x".repeat(17_000)}"}`;
/** `text` padded with spaces to `bytes` bytes (ASCII text). */
const padded = (text: string, bytes: number) => text + " ".repeat(bytes - text.length);

/**
 * A body delivered in chunks, with no Content-Length (Transfer-Encoding: chunked on the
 * wire); `seen` counts the reads and notes a cancel.
 */
function chunked(text: string, chunkSize = 1000, seen = { reads: 0, cancelled: false }) {
  const bytes = encoder.encode(text);
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const start = seen.reads++ * chunkSize;
      if (start >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(start, start + chunkSize));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
}

const typed = (type: string): Headers => ({ "Content-Type": type });
const coded = (coding: string): Headers => ({ ...JSON_TYPE, "Content-Encoding": coding });
const postPet = (json: unknown) => call("/v1/pets", { method: "POST", key, json });

function refused(body: Body, status: number, code: string, message?: RegExp, headers = JSON_TYPE) {
  return checker.expectRefused("/v1/pets", status, code, message, postOptions(key, body, headers));
}

const invalid = (body: string, message: RegExp) => refused(body, 400, "validation_failed", message);

/** Creates the pet, then reads it back through the Location it was given. */
async function expectRoundTrip(
  response: Response,
  expected: { name: string; categoryId: number; status?: string },
) {
  const pet = await expectCreated(response, { status: "available", ...expected });
  const fetched = await call(response.headers.get("Location") ?? "", { key });
  expect(fetched.status).toBe(200);
  expect(await fetched.json()).toEqual(pet);
}

describe("accepted", () => {
  it.each([
    typed("APPLICATION/JSON"),
    typed("Application/Json; charset=utf-8"),
    typed("application/json;charset=UTF-8"),
    typed("application/json ; charset=utf-8"),
    coded("identity"),
    coded("Identity"),
    coded(""),
  ])("a body with the headers %j", async (headers) => {
    const response = await call("/v1/pets", postOptions(key, REX, headers)());
    await expectCreated(response, { name: "Rex", categoryId: 7, status: "available" });
  });

  it.each<[string, Body]>([
    ["exactly 16,384 bytes", padded(REX, 16_384)],
    ["exactly 16,384 bytes, chunked", () => chunked(padded(REX, 16_384), 1500)],
  ])("a body of %s", async (_what, body) => {
    const response = await call("/v1/pets", postOptions(key, body)());
    await expectCreated(response, { name: "Rex", categoryId: 7, status: "available" });
  });

  it.each<[string, { name: string; categoryId: number; status?: string }]>([
    ['{"name":"\\ud83d\\udc15 Rex","categoryId":1}', { name: "🐕 Rex", categoryId: 1 }],
    ['{"name":"name","categoryId":1,"status":"available"}', { name: "name", categoryId: 1 }],
    ['{"status":"sold","categoryId":77,"name":"O"}', { name: "O", categoryId: 77, status: "sold" }],
    ['{"name":"Num","categoryId":1.0}', { name: "Num", categoryId: 1 }],
    ['{"name":"Num","categoryId":1e0}', { name: "Num", categoryId: 1 }],
    ['{"name":"Num","categoryId":1E2}', { name: "Num", categoryId: 100 }],
    ['{"name":"Num","categoryId":10.000}', { name: "Num", categoryId: 10 }],
    ['{"name":"Num","categoryId":9007199254740991.0}', { name: "Num", categoryId: MAX }],
    // A number is the IEEE 754 double a JSON parser reads, as every JavaScript client sends it.
    ['{"name":"Num","categoryId":1.0000000000000001}', { name: "Num", categoryId: 1 }],
    ['{"name":"Num","categoryId":9007199254740990.9}', { name: "Num", categoryId: MAX }],
  ])("the JSON text %s, read as %j", async (text, expected) => {
    await expectRoundTrip(await call("/v1/pets", postOptions(key, text)()), expected);
  });

  it.each([
    ["a single character", "R"],
    ["100 BMP characters", "é".repeat(100)],
    ["100 astral characters (200 UTF-16 units)", "😀".repeat(100)],
    ["100 code points in 50 graphemes", "e\u0301".repeat(50)],
    ["mixed scripts", "Rex 犬 🐕 Ünïcödé"],
    ["surrounding white space, kept as sent", "  Rex  "],
    ["an ideographic space next to a letter", "\u3000R"],
    ["decomposed characters, not normalised", "Rene\u0301e"],
    ["a no-break space between letters (U+00A0, just after the C1 controls)", "a\u00a0b"],
    ["JSON-looking text", '{"name":"x"}'],
    ["a ZWJ emoji sequence", "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}"],
    ["Arabic letters", "\u0631\u0643\u0633"],
    ["a braille letter beside the braille blank", "\u2800\u2801"],
    ["the object replacement character beside a letter", "x\ufffc"],
    ["a zero-width space between letters", "Re\u200bx"],
    ["an emoji with its variation selector", "\u2764\ufe0f"],
    ["a combining mark on a letter", "e\u0301"],
    ["a private-use character beside a letter", "Rex\ue000"],
    ["a digit alone", "7"],
    ["a punctuation mark alone", "?"],
    ["a symbol alone", "\u20ac"],
  ])("the name %s, returned exactly", async (_what, name) => {
    await expectRoundTrip(await postPet({ name, categoryId: 3 }), { name, categoryId: 3 });
  });

  it.each([1, 2, 12, 2 ** 31, 2 ** 32 + 1, MAX])("the categoryId %d", async (categoryId) => {
    await expectRoundTrip(await postPet({ name: "Cat", categoryId }), { name: "Cat", categoryId });
  });

  it.each(["available", "pending", "sold"])("the status %s", async (status) => {
    const pet = { name: "St", categoryId: 4, status };
    await expectRoundTrip(await postPet(pet), pet);
  });
});

describe("413: a body over 16,384 bytes, refused first", () => {
  it.each<[string, Body, Headers]>([
    ["without Content-Type", encoder.encode(oversized), {}],
    ["with the wrong media type", oversized, typed("text/plain")],
    ["that is not even JSON", `{${"[".repeat(17_000)}`, JSON_TYPE],
    ["one byte over", padded(REX, 16_385), JSON_TYPE],
    ["of 8,200 two-byte characters", `{"p":"${"é".repeat(8_200)}"}`, JSON_TYPE],
    ["labelled gzip (size before coding)", oversized, coded("gzip")],
    ["chunked", () => chunked(oversized), JSON_TYPE],
    ["chunked, without Content-Type", () => chunked(oversized), {}],
    ["chunked, one byte over", () => chunked(padded(REX, 16_385), 4096), JSON_TYPE],
  ])("%s", async (_what, body, headers) => {
    await refused(body, 413, "payload_too_large", /16384 bytes/, headers);
  });

  it("stops reading an endless body soon after the cap instead of buffering it", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024).fill(0x20));
      },
    });
    const response = await checker.app.fetch("/v1/pets", postOptions(key, endless)());
    await expectError(response, 413, "payload_too_large", /16384 bytes/);
    expect(pulled).toBeLessThan(40);
  });

  it("reads a body a little over the cap to its end before the 413, so the sender reads the response", async () => {
    const seen = { reads: 0, cancelled: false };
    const body = chunked(oversized, 1000, seen);
    const response = await checker.app.fetch("/v1/pets", postOptions(key, body)());
    await expectError(response, 413, "payload_too_large", /16384 bytes/);
    expect(seen).toEqual({ reads: Math.ceil(oversized.length / 1000) + 1, cancelled: false });
  });
});

describe("415: any media type but JSON, any content coding but identity", () => {
  it.each([
    "text/plain",
    "application/x-www-form-urlencoded",
    "application/jsonx",
    "application/json-patch+json",
    "text/json",
    "application/problem+json",
    "multipart/form-data; boundary=x",
  ])("Content-Type %s", async (type) => {
    await refused(REX, 415, "unsupported_media_type", /Content-Type/, typed(type));
  });

  it.each([
    "application/json; charset=utf-16",
    "application/json; charset=UTF-16LE",
    "application/json; charset=iso-8859-1",
    'application/json; charset="us-ascii"',
  ])(
    "Content-Type %s, the body in UTF-16: 415, as JSON is UTF-8 (RFC 8259), not a 400 about its bytes",
    async (type) => {
      const utf16 = new Uint8Array(
        new Uint16Array([0xfeff, ...[...REX].map((c) => c.charCodeAt(0))]).buffer,
      );
      await refused(utf16, 415, "unsupported_media_type", /UTF-8/, typed(type));
    },
  );

  it.each(["gzip", "GZIP", "br", "deflate", "identity, gzip", "x-custom"])(
    "plain JSON labelled Content-Encoding: %s",
    async (coding) => {
      await refused(REX, 415, "unsupported_media_type", /Content-Encoding/, coded(coding));
    },
  );

  const gzip = () => new Blob([REX]).stream().pipeThrough(new CompressionStream("gzip"));
  it.each<[string, Body, Headers, RegExp]>([
    ["valid JSON without Content-Type", encoder.encode(REX), {}, /Content-Type: application\/json/],
    ["no body, no Content-Type", null, {}, /Content-Type/],
    ["text/plain, before the JSON syntax", "{not json", typed("text/plain"), /Content-Type/],
    ["text/plain, before validation", '{"name":""}', typed("text/plain"), /Content-Type/],
    ["a gzip body (not a 400 about UTF-8)", gzip, coded("gzip"), /Content-Encoding.*gzip/],
  ])("%s", async (_what, body, headers, message) => {
    await refused(body, 415, "unsupported_media_type", message, headers);
  });
});

describe("400 invalid_json", () => {
  const notJson = /not valid JSON/;
  const deep = /nests deeper than 32 levels/;
  it.each<[string, Body, RegExp]>([
    ["{not json", "{not json", notJson],
    ["an unclosed object", '{"name":"Rex","categoryId":1', notJson],
    ["a trailing comma", '{"name":"Rex",}', notJson],
    ["single quotes", "{'name':'Rex'}", notJson],
    ["NaN", '{"name":"Rex","categoryId":NaN}', notJson],
    ["a leading zero", '{"name":"Rex","categoryId":01}', notJson],
    ["two values", `${REX} {}`, notJson],
    ["an empty body", "", /empty/],
    ["only white space", "   \n", /empty/],
    ["bytes not UTF-8", new Uint8Array([...encoder.encode('{"name":"'), 0xff, 34, 125]), /UTF-8/],
    ["arrays 33 deep in a field", `{"x":${"[".repeat(33)}${"]".repeat(33)}}`, deep],
    ["arrays 8,000 deep", `${"[".repeat(8_000)}${"]".repeat(8_000)}`, deep],
    ["objects 2,000 deep", `${'{"a":'.repeat(2_000)}1${"}".repeat(2_000)}`, deep],
    ["unbalanced deep nesting", "[".repeat(16_000), notJson],
  ])("%s", async (_what, body, message) => {
    await refused(body, 400, "invalid_json", message);
  });

  it.each([
    ["name", '{"name":"A","name":"B","categoryId":1}'],
    ["categoryId", '{"name":"A","categoryId":1,"categoryId":1}'],
    ["status", '{"name":"A","categoryId":1,"status":"sold","status":"sold"}'],
    ["name", '{"name":"A","n\\u0061me":"B","categoryId":1}'],
    ["__proto__", '{"name":"A","categoryId":1,"__proto__":1,"__proto__":2}'],
    ["b", '{"name":"A","categoryId":1,"x":{"b":1,"b":2}}'],
  ])("a body repeating the key %s: %s", async (field, text) => {
    await refused(text, 400, "invalid_json", new RegExp(`repeats the key "${field}"`));
  });

  it("is checked before the Idempotency-Key header", async () => {
    await refused("{oops", 400, "invalid_json", notJson, { ...JSON_TYPE, "Idempotency-Key": "" });
  });
});

describe("400 validation_failed, naming the field", () => {
  const length = /"name".*1 to 100 characters/;
  const control = /"name" must not contain control characters/;
  const bidi = /"name" must not contain bidirectional control characters/;
  const blank = /"name" must not be blank/;
  const surrogate = /"name".*lone surrogates/;
  const unassigned = /"name" must not contain unassigned code points or noncharacters/;
  const signless = /"name" needs a letter, number, punctuation mark or symbol/;
  const notString = /"name".*must be a string/;
  it.each<[string, unknown, RegExp]>([
    ["empty", "", length],
    ["101 BMP characters", "a".repeat(101), length],
    ["101 astral characters", "😀".repeat(101), length],
    ["100 astral characters and one more letter", `${"😀".repeat(100)}a`, length],
    ["101 code points in 51 graphemes", `${"e\u0301".repeat(50)}x`, length],
    ["U+0000", "a\u0000b", control],
    ["U+0001", "\u0001", control],
    ["a tab", "Rex\tthe dog", control],
    ["a line feed", "Rex\n", control],
    ["a carriage return", "\rRex", control],
    ["U+001F", "Rex\u001f", control],
    ["U+007F (DEL)", "Rex\u007f", control],
    ["U+0080, the first C1 control", "Rex\u0080", control],
    ["U+0085 NEXT LINE (a C1 control)", "Rex\u0085the dog", control],
    ["U+009F, the last C1 control", "\u009fRex", control],
    ["U+202E RIGHT-TO-LEFT OVERRIDE", "Rex\u202excod", bidi],
    ["U+202A LEFT-TO-RIGHT EMBEDDING", "\u202aRex", bidi],
    ["U+2066 LEFT-TO-RIGHT ISOLATE", "Rex\u2066", bidi],
    ["U+2069 POP DIRECTIONAL ISOLATE", "\u2069Rex", bidi],
    ["U+061C ARABIC LETTER MARK", "Rex\u061c", bidi],
    ["U+200E LEFT-TO-RIGHT MARK", "\u200eRex", bidi],
    ["U+200F RIGHT-TO-LEFT MARK", "Re\u200fx", bidi],
    ["U+202B RIGHT-TO-LEFT EMBEDDING", "Rex\u202b", bidi],
    ["U+2068 FIRST STRONG ISOLATE", "\u2068Rex\u2069", bidi],
    ["one space", " ", blank],
    ["spaces", "     ", blank],
    ["U+3000 IDEOGRAPHIC SPACE", "\u3000", blank],
    ["U+00A0 NO-BREAK SPACE", "\u00a0\u00a0", blank],
    ["U+2003 EM SPACE and U+2029 PARAGRAPH SEPARATOR", "\u2003\u2029", blank],
    ["U+1680 OGHAM SPACE MARK", "\u1680", blank],
    ["U+2028 LINE SEPARATOR", "\u2028", blank],
    ["U+205F and U+202F", "\u205f\u202f", blank],
    ["U+200B ZERO WIDTH SPACE", "\u200b", blank],
    ["zero-width joiners and non-joiners", "\u200d\u200c\u200d", blank],
    ["U+FEFF and U+2060 WORD JOINER", "\ufeff\u2060", blank],
    ["U+3164 HANGUL FILLER", "\u3164", blank],
    ["U+00AD SOFT HYPHEN and a space", "\u00ad ", blank],
    ["a variation selector", "\ufe0f", blank],
    ["a tag character", "\u{e0041}", blank],
    ["U+2800 BRAILLE PATTERN BLANK", "\u2800", blank],
    ["U+FFFC OBJECT REPLACEMENT CHARACTER", "\ufffc\ufffc", blank],
    ["U+2800 and spaces", " \u2800 ", blank],
    ["U+1D173 MUSICAL SYMBOL BEGIN BEAM (a format character beyond the BMP)", "\u{1d173}", blank],
    ["U+180E MONGOLIAN VOWEL SEPARATOR (default-ignorable)", "\u180e", blank],
    ["U+0378, an unassigned code point", "Rex\u0378", unassigned],
    ["U+FFFE, a noncharacter", "\ufffeRex", unassigned],
    ["U+FFFF, a noncharacter", "Re\uffffx", unassigned],
    ["U+FDD0, a noncharacter", "\ufdd0", unassigned],
    ["U+10FFFF, a noncharacter beyond the BMP", "Rex\u{10ffff}", unassigned],
    ["U+0301, a lone combining mark", "\u0301", signless],
    ["combining marks only", "\u0301\u0308\u20dd", signless],
    ["U+E000, a private-use character", "\ue000", signless],
    ["private-use characters beyond the BMP and a space", "\u{f0000} \u{10fffd}", signless],
    ["a Hangul filler under a combining mark (no visible sign)", "\u3164\u0301", signless],
    ["a lone high surrogate", "\ud800", surrogate],
    ["a lone low surrogate", "\udc00", surrogate],
    ["a high surrogate at the end", "Rex\ud83d", surrogate],
    ["a reversed pair", "\ude00\ud83d", surrogate],
    ["a lone surrogate in an otherwise valid name", "R\udfffex", surrogate],
    ["a number", 12, notString],
    ["null", null, notString],
    ["a boolean", true, notString],
    ["an array", ["Rex"], notString],
    ["an object", { first: "Rex" }, notString],
  ])("the name: %s", async (_what, name, message) => {
    // JSON.stringify writes a lone surrogate as its \u escape, as a client's JSON would.
    const { body } = await invalid(JSON.stringify({ name, categoryId: 1 }), message);
    expect(body.details).toEqual([{ field: "name", message: expect.any(String) }]);
  });

  it.each([
    ...["0", "-1", "-0", "1.5", "0.5", "9007199254740991.5", "9007199254740992"],
    ...[
      "9007199254740993",
      "18446744073709551615",
      "9223372036854775808",
      "1e20",
      "1e400",
      "-1e400",
      "1e-400",
    ],
    ...["9".repeat(400), "1e999999", "-1e999999", "1e-999999"],
    ...['"12"', '"1"', "true", "false", "null", "[]", "[1]", "{}"],
  ])("the categoryId %s: one problem, one entry", async (literal) => {
    const { body } = await invalid(
      `{"name":"Num","categoryId":${literal}}`,
      /"categoryId".*from 1 to 9007199254740991/,
    );
    expect(body.details).toEqual([
      { field: "categoryId", message: "must be an integer from 1 to 9007199254740991" },
    ]);
  });

  it.each<unknown>([
    ...[null, "", "Available", "SOLD", " sold", "sold ", "adopted", 1, true, ["sold"], {}],
    ...[...SQL_PAYLOADS, "available' --", "sold'; --", "pending/**/"],
  ])("the status %j", async (status) => {
    const text = JSON.stringify({ name: "St", categoryId: 4, status });
    await invalid(text, /"status".*one of available, pending, sold/);
  });

  it.each([
    ...["id", "Name", "category_id", "extra", "created_at", ""].map((field) => [field, "1"]),
    ...["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"]
      .concat("__defineGetter__")
      .map((field) => [field, '{"status":"sold","polluted":true}']),
    ["x", "[[[[[]]]]]"], // shallow nesting is no JSON problem: the field is named
  ])("the unknown field %j, and only it", async (field, value) => {
    const text = `{"name":"Rex","categoryId":1,${JSON.stringify(field)}:${value}}`;
    const { body } = await invalid(text, new RegExp(`"${field}".*not an accepted field`));
    expect(body.details).toEqual([{ field, message: "is not an accepted field" }]);
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each<[string, RegExp, string[]]>([
    ['{"categoryId":1}', /"name".*required/, ["name"]],
    ['{"name":"Rex"}', /"categoryId".*required/, ["categoryId"]],
    ["{}", /"name".*required/, ["categoryId", "name"]],
    ['{"name":"Rex","categoryId":1,"a":1,"b":2}', /"a"/, ["a", "b"]],
    ['{"name":"","categoryId":0,"status":"lost"}', /"name"/, ["categoryId", "name", "status"]],
    // Required fields are not read through the prototype chain.
    [
      '{"__proto__":{"name":"Rex","categoryId":1}}',
      /"name".*required/,
      ["__proto__", "categoryId", "name"],
    ],
    [
      '{"name":"Rex","constructor":{"prototype":{"categoryId":1}}}',
      /"categoryId".*required/,
      ["categoryId", "constructor"],
    ],
  ])("%s: every problem in details, the first in the message", async (text, message, fields) => {
    const { body } = await invalid(text, message);
    expect(body.details?.map((d) => d.field).sort()).toEqual(fields);
    expect((Object.prototype as Record<string, unknown>).categoryId).toBeUndefined();
  });

  it.each(['[{"name":"Rex","categoryId":1}]', "[]", '"Rex"', "1", "null", "true"])(
    "a body that is %s, not an object",
    async (text) => {
      await invalid(text, /body must be a JSON object/);
    },
  );

  it("30 unknown fields: the Error's first 20 details, its message within the documented limits", async () => {
    const fields = Array.from({ length: 30 }, (_, i) => `extra${String(i).padStart(2, "0")}`);
    const text = `{"name":"Rex","categoryId":1,${fields.map((f) => `"${f}":1`).join(",")}}`;
    const response = await call("/v1/pets", {
      method: "POST",
      key,
      body: text,
      headers: JSON_TYPE,
    });
    const body = await expectError(response, 400, "validation_failed", /"extra00".*29 more/);
    expect(body.details?.map((d) => d.field)).toEqual(fields.slice(0, 20));
  });

  it("a field named by 300 emoji: named, cut to 256 UTF-16 units without splitting a pair", async () => {
    const field = "🐕".repeat(300);
    const text = `{"name":"Rex","categoryId":1,"${field}":1}`;
    const response = await call("/v1/pets", {
      method: "POST",
      key,
      body: text,
      headers: JSON_TYPE,
    });
    const body = await expectError(response, 400, "validation_failed", /not an accepted/);
    const named = body.details?.[0]?.field ?? "";
    expect(named.length).toBeLessThanOrEqual(256);
    expect(named.isWellFormed()).toBe(true);
    expect(named).toBe(`${"🐕".repeat(127)}…`);
    expect(body.message.length).toBeLessThanOrEqual(1024);
    expect(body.message.isWellFormed()).toBe(true);
  });

  it("a huge number as the name", async () => {
    const text = `{"name":${"9".repeat(1_000)},"categoryId":1}`;
    await invalid(text, /"name".*must be a string/);
  });
});

it("authenticates before looking at the body", async () => {
  // An oversized body of no media type: the key is checked before its size and type.
  const response = await call("/v1/pets", postOptions("", encoder.encode(oversized), {})());
  await expectError(response, 401, "unauthorized");
  expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="petstore"');
});
