// Hostile bodies, headers and queries (issue 3, item 3): every one gets a 4xx Error
// with a message naming what is wrong, and none reaches the database. The "no
// database" half runs the real app over a D1 binding that records each statement.
import { beforeAll, describe, expect, it } from "vitest";
import { type CallOptions, call, createKey, expectError, makeRequest } from "./helpers.ts";
import { type InstrumentedApp, recordingApp } from "./support/instrumented-app.ts";
import { expectCreated, petCount } from "./support/requests.ts";

const encoder = new TextEncoder();
let key: string;
let app: InstrumentedApp;

beforeAll(async () => {
  const created = await createKey("hostile-input");
  key = created.key;
  app = recordingApp(key, created.id);
});

/** A body delivered in chunks, with no Content-Length (Transfer-Encoding: chunked on the wire). */
function chunkedStream(text: string, chunkSize = 1000): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
}

interface Refusal {
  status: number;
  code: string;
  message: RegExp;
}

/** A request to send twice: `options()` builds fresh options (a stream is read once). */
interface RequestSpec {
  path: string;
  options: () => CallOptions;
}

/**
 * Sends the request through the worker (`call`) and through the recording app:
 * both must refuse it the same way, and D1 must see no statement.
 */
async function expectRefusedBeforeDatabase(
  spec: RequestSpec,
  { status, code, message }: Refusal,
): Promise<void> {
  const before = await petCount();
  await expectError(await call(spec.path, spec.options()), status, code, message);
  const response = await app.fetch(spec.path, spec.options());
  const body = await expectError(response, status, code, message);
  expect(JSON.stringify(body).length).toBeLessThan(1_000);
  expect(app.statements).toEqual([]);
  expect(await petCount()).toBe(before);
}

function post(
  body: BodyInit | null | (() => BodyInit),
  headers: Record<string, string> = { "Content-Type": "application/json" },
): RequestSpec {
  return {
    path: "/v1/pets",
    options: () => ({
      method: "POST",
      key,
      headers,
      ...(body === null ? {} : { body: typeof body === "function" ? body() : body }),
    }),
  };
}

function get(path: string, headers: Record<string, string> = {}): RequestSpec {
  return { path, options: () => ({ key, headers }) };
}

describe("the recording app itself", () => {
  it("sees the statements of a valid create (so an empty record means something)", async () => {
    const response = await app.fetch("/v1/pets", {
      method: "POST",
      key,
      json: { name: "Control", categoryId: 1 },
    });
    await expectCreated(response, { name: "Control", categoryId: 1, status: "available" });
    expect(app.statements.some((sql) => sql.startsWith("INSERT INTO pets"))).toBe(true);
  });
});

describe("the 16 KiB cap without Content-Length", () => {
  const big = `{"name":"Rex","categoryId":1,"pad":"${"x".repeat(17_000)}"}`;

  it("refuses a chunked JSON body over 16,384 bytes with 413", async () => {
    await expectRefusedBeforeDatabase(
      post(() => chunkedStream(big)),
      {
        status: 413,
        code: "payload_too_large",
        message: /16384 bytes/,
      },
    );
  });

  it("refuses a chunked body over the cap with 413 even without Content-Type", async () => {
    await expectRefusedBeforeDatabase(
      post(() => chunkedStream(big), {}),
      {
        status: 413,
        code: "payload_too_large",
        message: /16384 bytes/,
      },
    );
  });

  it("refuses a chunked body that is one byte over the cap", async () => {
    const base = '{"name":"Rex","categoryId":1}';
    const text = base + " ".repeat(16_385 - base.length);
    await expectRefusedBeforeDatabase(
      post(() => chunkedStream(text, 4096)),
      {
        status: 413,
        code: "payload_too_large",
        message: /16384 bytes/,
      },
    );
  });

  it("accepts a chunked body of exactly 16,384 bytes", async () => {
    const base = '{"name":"Chunked","categoryId":5}';
    const text = base + " ".repeat(16_384 - base.length);
    const response = await call("/v1/pets", {
      method: "POST",
      key,
      headers: { "Content-Type": "application/json" },
      body: chunkedStream(text, 1500),
    });
    await expectCreated(response, { name: "Chunked", categoryId: 5, status: "available" });
  });

  it("stops reading an endless body soon after the cap instead of buffering it", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024).fill(0x20));
      },
    });
    const response = await app.fetchRequest(
      makeRequest("/v1/pets", {
        method: "POST",
        key,
        headers: { "Content-Type": "application/json" },
        body: endless,
      }),
    );
    await expectError(response, 413, "payload_too_large", /16384 bytes/);
    expect(pulled).toBeLessThan(40);
  });

  it("reads a body a little over the cap to its end before the 413, so the sender reads the answer", async () => {
    let cancelled = false;
    let chunks = 0;
    const bytes = encoder.encode(big);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const start = chunks++ * 1000;
        if (start >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.slice(start, start + 1000));
      },
      cancel() {
        cancelled = true;
      },
    });
    const response = await app.fetchRequest(
      makeRequest("/v1/pets", {
        method: "POST",
        key,
        headers: { "Content-Type": "application/json" },
        body,
      }),
    );
    await expectError(response, 413, "payload_too_large", /16384 bytes/);
    expect(cancelled).toBe(false);
    expect(chunks).toBe(Math.ceil(bytes.byteLength / 1000) + 1);
  });
});

describe("JSON that JSON.parse would let through", () => {
  it.each([
    [
      "arrays nested 33 deep in a field",
      `{"name":"Rex","categoryId":1,"x":${"[".repeat(33)}${"]".repeat(33)}}`,
    ],
    ["arrays nested 8,000 deep", `${"[".repeat(8_000)}${"]".repeat(8_000)}`],
    ["objects nested 2,000 deep", `${'{"a":'.repeat(2_000)}1${"}".repeat(2_000)}`],
  ])("refuses %s with 400 invalid_json", async (_what, text) => {
    await expectRefusedBeforeDatabase(post(text), {
      status: 400,
      code: "invalid_json",
      message: /nests deeper than 32 levels/,
    });
  });

  it("refuses unbalanced deep nesting as invalid JSON", async () => {
    await expectRefusedBeforeDatabase(post("[".repeat(16_000)), {
      status: 400,
      code: "invalid_json",
      message: /not valid JSON/,
    });
  });

  it("names the unknown field that holds shallow nesting", async () => {
    await expectRefusedBeforeDatabase(
      post(`{"name":"Rex","categoryId":1,"x":${"[".repeat(5)}${"]".repeat(5)}}`),
      {
        status: 400,
        code: "validation_failed",
        message: /"x".*not an accepted field/,
      },
    );
  });

  it.each([
    ["name", '{"name":"A","name":"B","categoryId":1}'],
    ["categoryId", '{"name":"A","categoryId":1,"categoryId":1}'],
    ["status", '{"name":"A","categoryId":1,"status":"sold","status":"sold"}'],
    ["name", '{"name":"A","n\\u0061me":"B","categoryId":1}'],
    ["__proto__", '{"name":"A","categoryId":1,"__proto__":1,"__proto__":2}'],
    ["b", '{"name":"A","categoryId":1,"x":{"b":1,"b":2}}'],
  ])("refuses a body that repeats the key %s, naming it", async (field, text) => {
    await expectRefusedBeforeDatabase(post(text), {
      status: 400,
      code: "invalid_json",
      message: new RegExp(`repeats the key "${field}"`),
    });
  });

  it("does not mistake a repeated string value for a repeated key", async () => {
    const response = await call("/v1/pets", {
      method: "POST",
      key,
      headers: { "Content-Type": "application/json" },
      body: '{"name":"name","categoryId":1,"status":"available"}',
    });
    await expectCreated(response, { name: "name", categoryId: 1, status: "available" });
  });

  it.each([
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "hasOwnProperty",
    "valueOf",
    "__defineGetter__",
  ])("refuses the key %s as an unknown field", async (field) => {
    await expectRefusedBeforeDatabase(
      post(`{"name":"Rex","categoryId":1,"${field}":{"status":"sold","polluted":true}}`),
      {
        status: 400,
        code: "validation_failed",
        message: new RegExp(`"${field}".*not an accepted field`),
      },
    );
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("does not read required fields through __proto__", async () => {
    await expectRefusedBeforeDatabase(post('{"__proto__":{"name":"Rex","categoryId":1}}'), {
      status: 400,
      code: "validation_failed",
      message: /"name".*required/,
    });
  });

  it("does not read required fields through constructor.prototype", async () => {
    await expectRefusedBeforeDatabase(
      post('{"name":"Rex","constructor":{"prototype":{"categoryId":1}}}'),
      { status: 400, code: "validation_failed", message: /"categoryId".*required|"constructor"/ },
    );
    expect((Object.prototype as Record<string, unknown>).categoryId).toBeUndefined();
  });

  it.each([
    ["a 400-digit integer", "9".repeat(400)],
    ["1e999999", "1e999999"],
    ["-1e999999", "-1e999999"],
    ["1e-999999", "1e-999999"],
    ["2^53 + 1", "9007199254740993"],
    ["2^63", "9223372036854775808"],
    ["2^64 - 1", "18446744073709551615"],
    // JSON.parse rounds these to 1 and to 2^53 - 1: a fraction must not become an integer.
    ["a fraction that JSON.parse rounds to 1", "1.0000000000000001"],
    ["a number with 5,000 fraction digits", `1.${"0".repeat(4_999)}1`],
    ["a fraction that JSON.parse rounds to 2^53 - 1", "9007199254740990.9"],
  ])("refuses categoryId as %s, naming the field", async (_what, literal) => {
    await expectRefusedBeforeDatabase(post(`{"name":"Rex","categoryId":${literal}}`), {
      status: 400,
      code: "validation_failed",
      message: /"categoryId".*integer from 1 to 9007199254740991/,
    });
  });

  it("refuses a huge number as a name", async () => {
    await expectRefusedBeforeDatabase(post(`{"name":${"9".repeat(1_000)},"categoryId":1}`), {
      status: 400,
      code: "validation_failed",
      message: /"name".*must be a string/,
    });
  });
});

describe("query strings", () => {
  it.each([
    ["limit", "/v1/pets?limit=1&limit=2"],
    ["limit", "/v1/pets?limit=5&limit=5"],
    ["limit", "/v1/pets?limit=1&limit="],
    ["status", "/v1/pets?status=sold&status=pending"],
    ["status", "/v1/pets?status=sold&status=sold"],
    ["cursor", "/v1/pets?cursor=a&cursor=b"],
    ["limit", `/v1/pets?${"limit=1&".repeat(2_000)}`],
  ])("refuses a repeated %s with 400 naming it", async (parameter, path) => {
    await expectRefusedBeforeDatabase(get(path), {
      status: 400,
      code: "invalid_parameter",
      message: new RegExp(`"${parameter}".*at most once`),
    });
  });

  it.each([
    ["limit", `/v1/pets?limit=1${"0".repeat(10_000)}`, "invalid_parameter"],
    ["limit", `/v1/pets?limit=${"9".repeat(400)}`, "invalid_parameter"],
    ["status", `/v1/pets?status=${"sold".repeat(5_000)}`, "invalid_parameter"],
    ["cursor", `/v1/pets?cursor=${"A".repeat(20_000)}`, "invalid_cursor"],
    ["cursor", `/v1/pets?cursor=${"%FF".repeat(5_000)}`, "invalid_cursor"],
  ])("refuses a very long %s with a short 400 naming it", async (parameter, path, code) => {
    await expectRefusedBeforeDatabase(get(path), {
      status: 400,
      code,
      message: new RegExp(`"${parameter}"`),
    });
  });

  it.each(["0", "101", "-1", "+5", "05", "1.0", "1e2", "0x10", "%205", "5%00", "５", ""])(
    "refuses limit=%s naming limit",
    async (value) => {
      await expectRefusedBeforeDatabase(get(`/v1/pets?limit=${value}`), {
        status: 400,
        code: "invalid_parameter",
        message: /"limit".*integer from 1 to 100/,
      });
    },
  );

  it("ignores a long unknown parameter (decisions.md: unknown parameters are ignored)", async () => {
    const response = await call(`/v1/pets?limit=1&x=${"y".repeat(10_000)}`, { key });
    expect(response.status).toBe(200);
    expect(Array.isArray(await response.json())).toBe(true);
  });
});

describe("path and headers", () => {
  it.each([
    "1".repeat(5_000),
    "9007199254740992",
    "0",
    "01",
    "-1",
    "1.0",
    "1e3",
    "0x10",
    "%20%31",
    "1%00",
    "%EF%BC%91",
  ])("refuses petId %s with 400 naming petId", async (segment) => {
    const response = await call(`/v1/pets/${segment}`, { key });
    await expectError(response, 400, "invalid_parameter", /"petId"/);
    expect(response.headers.get("Deprecation")).toMatch(/^@\d+$/);
    await expectError(await app.fetch(`/v1/pets/${segment}`, { key }), 400, "invalid_parameter");
    expect(app.statements).toEqual([]);
  });

  it.each([
    ["empty", ""],
    ["256 characters long", "k".repeat(256)],
    ["holding a control character", "abc\u0001def"],
    ["holding DEL", "abc\u007f"],
    ["an empty structured-field string", '""'],
  ])("refuses an Idempotency-Key that is %s before touching D1", async (_what, value) => {
    await expectRefusedBeforeDatabase(
      post('{"name":"Rex","categoryId":1}', {
        "Content-Type": "application/json",
        "Idempotency-Key": value,
      }),
      { status: 400, code: "invalid_idempotency_key", message: /"Idempotency-Key"/ },
    );
  });

  it("accepts an Idempotency-Key of exactly 255 printable characters", async () => {
    const response = await call("/v1/pets", {
      method: "POST",
      key,
      headers: { "Idempotency-Key": "~".repeat(255) },
      json: { name: "Long key", categoryId: 1 },
    });
    await expectCreated(response, { name: "Long key", categoryId: 1, status: "available" });
  });

  it("answers an 8 KiB bearer token with 401 invalid_token", async () => {
    const response = await call("/v1/pets", { key: "A".repeat(8_192) });
    await expectError(response, 401, "unauthorized", /invalid/);
    expect(response.headers.get("WWW-Authenticate")).toBe(
      'Bearer realm="petstore", error="invalid_token"',
    );
  });

  it("refuses a malformed D1 bookmark header before any query", async () => {
    await expectRefusedBeforeDatabase(
      get("/v1/pets", { "x-d1-bookmark": "'; DROP TABLE pets; --" }),
      {
        status: 400,
        code: "invalid_parameter",
        message: /x-d1-bookmark/,
      },
    );
  });
});
