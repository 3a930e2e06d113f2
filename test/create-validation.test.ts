// createPet body validation (decisions.md "Pets", "Errors") and the order of
// checks on a request body: size (413) -> media type (415) -> JSON syntax (400) -> validation (400).
import { beforeAll, describe, expect, it } from "vitest";
import { call, createKey, expectError } from "./helpers.ts";
import { expectCreated, petCount, postRaw } from "./support/requests.ts";

let key: string;
beforeAll(async () => {
  ({ key } = await createKey("create-validation"));
});

const encoder = new TextEncoder();
const MAX = 9007199254740991;

/** Posts a JSON text exactly as written (escapes and number spellings reach the server). */
function postJsonText(text: string, headers: Record<string, string> = {}) {
  return postRaw(key, text, { "Content-Type": "application/json", ...headers });
}

async function expectGetPet(id: number, expected: Record<string, unknown>) {
  const response = await call(`/v1/pets/${id}`, { key });
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ id, ...expected });
}

describe("order of checks on a request body", () => {
  const oversized = `{"name":"Rex","categoryId":1,"pad":"${"x".repeat(17_000)}"}`;

  it("refuses an oversized body without Content-Type with 413, not 415", async () => {
    const before = await petCount();
    const response = await postRaw(key, encoder.encode(oversized), {});
    await expectError(response, 413, "payload_too_large", /16384 bytes/);
    expect(await petCount()).toBe(before);
  });

  it("refuses an oversized body with the wrong media type with 413", async () => {
    await expectError(
      await postRaw(key, oversized, { "Content-Type": "text/plain" }),
      413,
      "payload_too_large",
      /16384 bytes/,
    );
  });

  it("refuses an oversized body that is not even JSON with 413, not 400", async () => {
    await expectError(await postJsonText(`{${"[".repeat(17_000)}`), 413, "payload_too_large");
  });

  it("accepts a body of exactly 16,384 bytes and refuses 16,385", async () => {
    const base = '{"name":"Exactly","categoryId":7}';
    const exact = base + " ".repeat(16_384 - base.length);
    expect(encoder.encode(exact).byteLength).toBe(16_384);
    await expectCreated(await postJsonText(exact), {
      name: "Exactly",
      categoryId: 7,
      status: "available",
    });
    await expectError(await postJsonText(`${exact} `), 413, "payload_too_large");
  });

  it("counts bytes, not characters: 16,384 characters of multi-byte text are too large", async () => {
    const text = `{"name":"Rex","categoryId":1,"pad":"${"é".repeat(8_200)}"}`;
    expect(text.length).toBeLessThan(16_384);
    await expectError(await postJsonText(text), 413, "payload_too_large");
  });

  it("refuses a POST without Content-Type with 415, even with a valid JSON body", async () => {
    const before = await petCount();
    const request = await postRaw(key, encoder.encode('{"name":"Rex","categoryId":1}'), {});
    await expectError(request, 415, "unsupported_media_type", /Content-Type: application\/json/);
    expect(await petCount()).toBe(before);
  });

  it("refuses a POST without Content-Type and without a body with 415", async () => {
    await expectError(await postRaw(key, null, {}), 415, "unsupported_media_type");
  });

  it.each([
    "text/plain",
    "application/x-www-form-urlencoded",
    "application/jsonx",
    "application/json-patch+json",
    "text/json",
    "application/problem+json",
    "multipart/form-data; boundary=x",
  ])("refuses Content-Type %s with 415", async (contentType) => {
    await expectError(
      await postRaw(key, '{"name":"Rex","categoryId":1}', { "Content-Type": contentType }),
      415,
      "unsupported_media_type",
      /Content-Type/,
    );
  });

  it("refuses a gzip-compressed body with 415, not a 400 about UTF-8", async () => {
    const before = await petCount();
    const json = '{"name":"Zipped","categoryId":1}';
    const gzipped = await new Response(
      new Blob([json]).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer();
    const response = await postRaw(key, gzipped, {
      "Content-Type": "application/json",
      "Content-Encoding": "gzip",
    });
    await expectError(response, 415, "unsupported_media_type", /Content-Encoding.*gzip/);
    expect(await petCount()).toBe(before);
  });

  it.each(["gzip", "GZIP", "br", "deflate", "identity, gzip", "x-custom"])(
    "refuses plain JSON labelled Content-Encoding: %s with 415, creating nothing",
    async (encoding) => {
      const before = await petCount();
      const response = await postRaw(key, '{"name":"Labelled","categoryId":1}', {
        "Content-Type": "application/json",
        "Content-Encoding": encoding,
      });
      await expectError(response, 415, "unsupported_media_type", /Content-Encoding/);
      expect(await petCount()).toBe(before);
    },
  );

  it.each(["identity", "Identity", ""])(
    "accepts Content-Encoding: %j (the body as sent)",
    async (encoding) => {
      await expectCreated(
        await postRaw(key, '{"name":"Plain","categoryId":2}', {
          "Content-Type": "application/json",
          "Content-Encoding": encoding,
        }),
        { name: "Plain", categoryId: 2, status: "available" },
      );
    },
  );

  it("checks the size before the content coding: an oversized gzip body is 413", async () => {
    await expectError(
      await postRaw(key, oversized, {
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
      }),
      413,
      "payload_too_large",
    );
  });

  it("checks the media type before the JSON syntax and before validation", async () => {
    await expectError(
      await postRaw(key, "{not json", { "Content-Type": "text/plain" }),
      415,
      "unsupported_media_type",
    );
    await expectError(
      await postRaw(key, '{"name":""}', { "Content-Type": "text/plain" }),
      415,
      "unsupported_media_type",
    );
  });

  it.each([
    "application/json",
    "APPLICATION/JSON",
    "Application/Json; charset=utf-8",
    "application/json;charset=UTF-8",
    "application/json ; charset=utf-8",
  ])("accepts Content-Type %s", async (contentType) => {
    await expectCreated(
      await postRaw(key, '{"name":"Typed","categoryId":2}', { "Content-Type": contentType }),
      { name: "Typed", categoryId: 2, status: "available" },
    );
  });

  it.each([
    ["{not json", /not valid JSON/],
    ['{"name":"Rex","categoryId":1', /not valid JSON/],
    ['{"name":"Rex",}', /not valid JSON/],
    ["{'name':'Rex'}", /not valid JSON/],
    ['{"name":"Rex","categoryId":NaN}', /not valid JSON/],
    ['{"name":"Rex","categoryId":01}', /not valid JSON/],
    ['{"name":"Rex","categoryId":1} {}', /not valid JSON/],
    ["", /empty/],
    ["   \n", /empty/],
  ])("answers 400 invalid_json for the JSON text %j", async (text, message) => {
    await expectError(await postJsonText(text), 400, "invalid_json", message);
  });

  it("answers 400 invalid_json for a body that is not UTF-8", async () => {
    const bytes = new Uint8Array([
      ...encoder.encode('{"name":"'),
      0xff,
      0xfe,
      ...encoder.encode('","categoryId":1}'),
    ]);
    await expectError(await postRaw(key, bytes), 400, "invalid_json", /UTF-8/);
  });

  it("checks the JSON syntax before the Idempotency-Key header", async () => {
    await expectError(await postJsonText("{oops", { "Idempotency-Key": "" }), 400, "invalid_json");
  });

  it("authenticates before looking at the body", async () => {
    const response = await postRaw("", encoder.encode("x".repeat(20_000)), {});
    await expectError(response, 401, "unauthorized");
    expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="petstore"');
  });
});

describe("name", () => {
  it.each([
    ["a single character", "R"],
    ["100 BMP characters", "é".repeat(100)],
    ["100 astral characters (200 UTF-16 units)", "😀".repeat(100)],
    ["mixed scripts", "Rex 犬 🐕 Ünïcödé"],
    ["surrounding white space, kept as sent", "  Rex  "],
    ["an ideographic space next to a letter", "\u3000R"],
    ["decomposed characters, not normalised", "Rene\u0301e"],
    ["a no-break space between letters (U+00A0, just after the C1 controls)", "a\u00a0b"],
    ["JSON-looking text", '{"name":"x"}'],
  ])("accepts %s and returns it exactly", async (_what, name) => {
    const pet = await expectCreated(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 3 } }),
      { name, categoryId: 3, status: "available" },
    );
    await expectGetPet(pet.id, { name, categoryId: 3, status: "available" });
  });

  it("counts code points, not graphemes: 100 code points pass, 101 do not", async () => {
    const fifty = "e\u0301".repeat(50); // 50 graphemes, 100 code points
    await expectCreated(
      await call("/v1/pets", { method: "POST", key, json: { name: fifty, categoryId: 1 } }),
      { name: fifty, categoryId: 1, status: "available" },
    );
    await expectError(
      await call("/v1/pets", { method: "POST", key, json: { name: `${fifty}x`, categoryId: 1 } }),
      400,
      "validation_failed",
      /"name".*1 to 100 characters/,
    );
  });

  it.each([
    ["empty", ""],
    ["101 BMP characters", "a".repeat(101)],
    ["101 astral characters", "😀".repeat(101)],
    ["100 astral characters and one more letter", `${"😀".repeat(100)}a`],
  ])("refuses a name that is %s", async (_what, name) => {
    const before = await petCount();
    await expectError(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 1 } }),
      400,
      "validation_failed",
      /"name".*1 to 100 characters/,
    );
    expect(await petCount()).toBe(before);
  });

  it.each([
    ["U+0000", "a\u0000b"],
    ["U+0001", "\u0001"],
    ["a tab", "Rex\tthe dog"],
    ["a line feed", "Rex\n"],
    ["a carriage return", "\rRex"],
    ["U+001F", "Rex\u001f"],
    ["U+007F (DEL)", "Rex\u007f"],
  ])("refuses a name holding %s", async (_what, name) => {
    await expectError(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 1 } }),
      400,
      "validation_failed",
      /"name".*control characters/,
    );
  });

  it.each([
    ["one space", " "],
    ["spaces", "     "],
    ["U+3000 IDEOGRAPHIC SPACE", "\u3000"],
    ["U+00A0 NO-BREAK SPACE", "\u00a0\u00a0"],
    ["U+2003 EM SPACE and U+2029 PARAGRAPH SEPARATOR", "\u2003\u2029"],
    ["U+1680 OGHAM SPACE MARK", "\u1680"],
    ["U+2028 LINE SEPARATOR", "\u2028"],
    ["U+205F and U+202F", "\u205f\u202f"],
  ])("refuses a name that is only white space: %s", async (_what, name) => {
    await expectError(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 1 } }),
      400,
      "validation_failed",
      /"name".*blank/,
    );
  });

  it.each([
    ["U+0080, the first C1 control", "Rex\u0080"],
    ["U+0085 NEXT LINE (a C1 control)", "Rex\u0085the dog"],
    ["U+009F, the last C1 control", "\u009fRex"],
  ])("refuses a name holding %s", async (_what, name) => {
    await expectError(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 1 } }),
      400,
      "validation_failed",
      /"name" must not contain control characters/,
    );
  });

  it.each([
    ["U+202E RIGHT-TO-LEFT OVERRIDE", "Rex\u202excod"],
    ["U+202A LEFT-TO-RIGHT EMBEDDING", "\u202aRex"],
    ["U+2066 LEFT-TO-RIGHT ISOLATE", "Rex\u2066"],
    ["U+2069 POP DIRECTIONAL ISOLATE", "\u2069Rex"],
  ])("refuses a name holding the bidirectional control %s", async (_what, name) => {
    await expectError(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 1 } }),
      400,
      "validation_failed",
      /"name" must not contain bidirectional control characters/,
    );
  });

  it.each([
    ["U+200B ZERO WIDTH SPACE", "\u200b"],
    ["zero-width joiners and non-joiners", "\u200d\u200c\u200d"],
    ["U+FEFF and U+2060 WORD JOINER", "\ufeff\u2060"],
    ["U+3164 HANGUL FILLER", "\u3164"],
    ["U+00AD SOFT HYPHEN and a space", "\u00ad "],
    ["a variation selector", "\ufe0f"],
    ["a tag character", "\u{e0041}"],
  ])("refuses a name with no visible character: %s", async (_what, name) => {
    await expectError(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 1 } }),
      400,
      "validation_failed",
      /"name" must not be blank/,
    );
  });

  it.each([
    ["a ZWJ emoji sequence", "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}"],
    ["a right-to-left mark beside Arabic", "\u0631\u0643\u0633\u200f"],
    ["a zero-width space between letters", "Re\u200bx"],
    ["an emoji with its variation selector", "\u2764\ufe0f"],
  ])("accepts invisible characters beside visible ones: %s", async (_what, name) => {
    await expectCreated(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 1 } }),
      { name, categoryId: 1, status: "available" },
    );
  });

  it.each([
    ["a lone high surrogate", '"\\ud800"'],
    ["a lone low surrogate", '"\\udc00"'],
    ["a high surrogate at the end", '"Rex\\ud83d"'],
    ["a reversed pair", '"\\ude00\\ud83d"'],
    ["a lone surrogate in an otherwise valid name", '"R\\udfffex"'],
  ])("refuses %s sent as a raw JSON escape", async (_what, nameJson) => {
    const before = await petCount();
    await expectError(
      await postJsonText(`{"name":${nameJson},"categoryId":1}`),
      400,
      "validation_failed",
      /"name".*lone surrogates/,
    );
    expect(await petCount()).toBe(before);
  });

  it("accepts an escaped surrogate pair as the one character it encodes", async () => {
    await expectCreated(await postJsonText('{"name":"\\ud83d\\udc15 Rex","categoryId":1}'), {
      name: "🐕 Rex",
      categoryId: 1,
      status: "available",
    });
  });

  it.each([
    ["a number", 12],
    ["null", null],
    ["a boolean", true],
    ["an array", ["Rex"]],
    ["an object", { first: "Rex" }],
  ])("refuses a name that is %s", async (_what, name) => {
    await expectError(
      await call("/v1/pets", { method: "POST", key, json: { name, categoryId: 1 } }),
      400,
      "validation_failed",
      /"name".*must be a string/,
    );
  });

  it("says a missing name is required", async () => {
    const body = await expectError(
      await call("/v1/pets", { method: "POST", key, json: { categoryId: 1 } }),
      400,
      "validation_failed",
      /"name".*required/,
    );
    expect(body.details).toEqual([expect.objectContaining({ field: "name" })]);
  });
});

describe("categoryId", () => {
  it.each([1, 2, 12, 2 ** 31, 2 ** 32 + 1, MAX])(
    "accepts %d and round-trips it exactly",
    async (categoryId) => {
      const pet = await expectCreated(
        await call("/v1/pets", { method: "POST", key, json: { name: "Cat", categoryId } }),
        { name: "Cat", categoryId, status: "available" },
      );
      await expectGetPet(pet.id, { name: "Cat", categoryId, status: "available" });
    },
  );

  it.each([
    ["1.0", 1],
    ["1e0", 1],
    ["1E2", 100],
    ["10.000", 10],
    ["9007199254740991.0", MAX],
  ])("accepts the JSON number %s as the integer %d", async (literal, value) => {
    await expectCreated(await postJsonText(`{"name":"Num","categoryId":${literal}}`), {
      name: "Num",
      categoryId: value,
      status: "available",
    });
  });

  it.each([
    "0",
    "-1",
    "-0",
    "1.5",
    "0.5",
    "9007199254740991.5",
    "9007199254740992",
    "9007199254740993",
    "18446744073709551615",
    "1e20",
    "1e400",
    "-1e400",
    "1e-400",
    '"12"',
    '"1"',
    "true",
    "false",
    "null",
    "[]",
    "[1]",
    "{}",
  ])("refuses categoryId %s with 400 naming the field", async (literal) => {
    const before = await petCount();
    await expectError(
      await postJsonText(`{"name":"Num","categoryId":${literal}}`),
      400,
      "validation_failed",
      /"categoryId".*integer from 1 to 9007199254740991/,
    );
    expect(await petCount()).toBe(before);
  });

  it("says a missing categoryId is required", async () => {
    await expectError(
      await call("/v1/pets", { method: "POST", key, json: { name: "Rex" } }),
      400,
      "validation_failed",
      /"categoryId".*required/,
    );
  });
});

describe("status", () => {
  it("defaults to available when omitted", async () => {
    await expectCreated(
      await call("/v1/pets", { method: "POST", key, json: { name: "Def", categoryId: 4 } }),
      { name: "Def", categoryId: 4, status: "available" },
    );
  });

  it.each(["available", "pending", "sold"])("accepts %s", async (status) => {
    const pet = await expectCreated(
      await call("/v1/pets", { method: "POST", key, json: { name: "St", categoryId: 4, status } }),
      { name: "St", categoryId: 4, status },
    );
    await expectGetPet(pet.id, { name: "St", categoryId: 4, status });
  });

  it.each([null, "", "Available", "SOLD", " sold", "sold ", "adopted", 1, true, ["sold"], {}])(
    "refuses status %j naming the field",
    async (status) => {
      await expectError(
        await call("/v1/pets", {
          method: "POST",
          key,
          json: { name: "St", categoryId: 4, status },
        }),
        400,
        "validation_failed",
        /"status".*one of available, pending, sold/,
      );
    },
  );
});

describe("the body as a whole", () => {
  it.each([
    ["id", { id: 5 }],
    ["Name", { Name: "x" }],
    ["category_id", { category_id: 1 }],
    ["extra", { extra: null }],
    ["created_at", { created_at: 1 }],
    ["", { "": 1 }],
  ])("refuses the unknown field %j, naming it", async (field, extra) => {
    const before = await petCount();
    const body = await expectError(
      await call("/v1/pets", {
        method: "POST",
        key,
        json: { name: "Rex", categoryId: 1, ...extra },
      }),
      400,
      "validation_failed",
      new RegExp(`"${field}".*not an accepted field`),
    );
    expect(body.details).toEqual([{ field, message: "is not an accepted field" }]);
    expect(await petCount()).toBe(before);
  });

  it("lists every unknown field in details", async () => {
    const body = await expectError(
      await call("/v1/pets", {
        method: "POST",
        key,
        json: { name: "Rex", categoryId: 1, a: 1, b: 2 },
      }),
      400,
      "validation_failed",
      /"a"/,
    );
    expect(body.details?.map((d) => d.field).sort()).toEqual(["a", "b"]);
  });

  it("reports every invalid field in details and names the first in the message", async () => {
    const body = await expectError(
      await call("/v1/pets", {
        method: "POST",
        key,
        json: { name: "", categoryId: 0, status: "lost" },
      }),
      400,
      "validation_failed",
      /"name"/,
    );
    expect(body.details?.map((d) => d.field).sort()).toEqual(["categoryId", "name", "status"]);
  });

  it.each([
    ["an array", '[{"name":"Rex","categoryId":1}]'],
    ["an empty array", "[]"],
    ["a string", '"Rex"'],
    ["a number", "1"],
    ["null", "null"],
    ["a boolean", "true"],
  ])("refuses a body that is %s with 400", async (_what, text) => {
    const before = await petCount();
    await expectError(
      await postJsonText(text),
      400,
      "validation_failed",
      /body must be a JSON object/,
    );
    expect(await petCount()).toBe(before);
  });

  it("refuses an empty object naming the required fields", async () => {
    const body = await expectError(
      await postJsonText("{}"),
      400,
      "validation_failed",
      /"name".*required/,
    );
    expect(body.details?.map((d) => d.field).sort()).toEqual(["categoryId", "name"]);
  });

  it("answers with exactly id, name, categoryId, status and a Location that serves the pet", async () => {
    const response = await call("/v1/pets", {
      method: "POST",
      key,
      json: { status: "pending", categoryId: 77, name: "Order" },
    });
    const pet = await expectCreated(response, { name: "Order", categoryId: 77, status: "pending" });
    const location = response.headers.get("Location") ?? "";
    const fetched = await call(location, { key });
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toEqual(pet);
  });
});
