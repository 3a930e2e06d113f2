// The document's request schemas are as strict as the server: a value the schema of a
// parameter or header accepts is one the server accepts, and the other way round, so
// schema-driven clients and validators agree with it. Each schema is read from the
// document the worker serves and checked with a JSON Schema 2020-12 validator.

import { env } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { CLIENT_NAME } from "../src/http/request-context.ts";
import type { LogLine } from "../src/log.ts";
import { OPERATIONS, type Operation } from "../src/operations/index.ts";
import { parseIdempotencyKey } from "../src/pets/idempotency.ts";
import { PetNameSchema } from "../src/pets/schemas.ts";
import {
  call,
  createCheckedApp,
  createKey,
  createPetVia,
  exampleRequest,
  expectError,
  makeRequest,
} from "./helpers.ts";
import { doc } from "./support/conformance.ts";
import { nextLink } from "./support/requests.ts";

const importMetaEnv = (import.meta as { env?: Record<string, string | undefined> }).env;
const seed = Number(importMetaEnv?.VITE_FC_SEED ?? 20261122);

let key: string;

beforeAll(async () => {
  ({ key } = await createKey("document-schemas"));
});

function schemaOf(path: string, method: string, name: string): Record<string, unknown> {
  const parameter = doc.paths[path]?.[method]?.parameters?.find((p) => p.name === name);
  if (!parameter) throw new Error(`${method} ${path} documents no parameter ${name}`);
  return parameter.schema;
}

/** Whether the schema accepts a parameter as written in a URL (digits are a number). */
function accepts(schema: Record<string, unknown>, written: string): boolean {
  const value = schema.type === "integer" && /^-?[0-9]+$/.test(written) ? Number(written) : written;
  return new Validator(schema, "2020-12").validate(value).valid;
}

describe("limit (listPets)", () => {
  it("the schema accepts exactly the page sizes the server accepts", async () => {
    const schema = schemaOf("/pets", "get", "limit");
    for (const limit of [-1, 0, 1, 2, 19, 20, 99, 100, 101, 1000]) {
      const response = await call(`/v1/pets?limit=${limit}`, { key });
      expect(response.status === 200, `limit=${limit}`).toBe(accepts(schema, String(limit)));
      await response.body?.cancel();
    }
    expect(schema.default).toBe(20);
  });
});

describe("petId (getPet)", () => {
  it("the schema accepts exactly the ids the server looks up (200 or 404), refusing the rest", async () => {
    const pet = await createPetVia(key, { name: "Strict", categoryId: 1 });
    const schema = schemaOf("/pets/{petId}", "get", "petId");
    for (const id of [-1, 0, 1, pet.id, 2 ** 53 - 1, 2 ** 53, 2 ** 60]) {
      const written = BigInt(id).toString();
      const response = await call(`/v1/pets/${written}`, { key });
      expect([200, 404].includes(response.status), `petId=${written}`).toBe(
        accepts(schema, written),
      );
      await response.body?.cancel();
    }
  });
});

/** What the contract says Idempotency-Key accepts, written independently of the server. */
function modelAccepts(header: string): boolean {
  const printable = (s: string) => /^[\x20-\x7E]*$/.test(s);
  const sf = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/.exec(header);
  const value = sf ? (sf[1] as string).replace(/\\(["\\])/g, "$1") : header;
  return printable(value) && value.length >= 1 && value.length <= 255;
}

describe("Idempotency-Key (createPet)", () => {
  it("the schema counts the length as the server does: inside a structured-field string's quotes (generated)", () => {
    const schema = schemaOf("/pets", "post", "Idempotency-Key");
    const character = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom("a", "Z", "0", " ", "~", "-") },
      { weight: 2, arbitrary: fc.constantFrom('"', "\\") },
      { weight: 1, arbitrary: fc.constantFrom("\u007f", "é", "\u0000") },
    );
    const header = fc.oneof(
      fc.string({ unit: character, maxLength: 8 }),
      fc.string({ unit: character, minLength: 253, maxLength: 258 }),
      fc.integer({ min: 253, max: 258 }).map((n) => `"${"k".repeat(n)}"`),
      // Escapes only: the longest headers the server takes (two characters count as one).
      fc.integer({ min: 253, max: 258 }).map((n) => `"${"\\\\".repeat(n)}"`),
      fc.string({ unit: character, maxLength: 8 }).map((s) => `"${s}"`),
    );
    fc.assert(
      fc.property(header, (value) => {
        expect(accepts(schema, value), JSON.stringify(value)).toBe(modelAccepts(value));
      }),
      { seed, numRuns: 2000 },
    );
  });

  it("refuses a key holding a non-ASCII character (checked without HTTP: the runtime warns about such a header value)", () => {
    for (const value of ["caf\u00e9", "\u00e9", '"caf\u00e9"', "k\u{1f511}"]) {
      expect(() => parseIdempotencyKey(value), value).toThrow(
        expect.objectContaining({ code: "invalid_idempotency_key", status: 400 }),
      );
    }
  });

  it("maxLength is the longest header the server accepts: a quoted key of 255 escapes", () => {
    const schema = schemaOf("/pets", "post", "Idempotency-Key");
    const longest = `"${'\\"'.repeat(255)}"`;
    expect(modelAccepts(longest)).toBe(true);
    expect(longest.length).toBe(schema.maxLength);
    expect(modelAccepts(`"${'\\"'.repeat(256)}"`)).toBe(false);
  });

  it("the server refuses what the schema refuses and accepts what it accepts", async () => {
    const schema = schemaOf("/pets", "post", "Idempotency-Key");
    for (const value of [
      "k".repeat(255),
      "k".repeat(256),
      `"${"k".repeat(255)}"`,
      `"${"k".repeat(256)}"`,
      `"${'\\"'.repeat(255)}"`,
      `"${'\\"'.repeat(255)}k"`,
      '""',
      '"a\\"b"',
    ]) {
      const response = await call("/v1/pets", {
        method: "POST",
        key,
        headers: { "Idempotency-Key": `${value}` },
        json: { name: "Keyed", categoryId: 1 },
      });
      expect(response.status === 201, value).toBe(accepts(schema, value));
      await response.body?.cancel();
    }
  });
});

describe("If-None-Match (listPets, getPet)", () => {
  /** A list of entity tags `length` characters long whose last member is `etag`. */
  const listOf = (length: number, etag: string) =>
    `"${"a".repeat(length - etag.length - 4)}", ${etag}`;

  it("the server returns what fits the schema's maxLength and refuses longer, naming the header", async () => {
    const pet = await createPetVia(key, { name: "Tagged", categoryId: 1 });
    for (const path of ["/pets", "/pets/{petId}"]) {
      const schema = schemaOf(path, "get", "If-None-Match");
      const max = schema.maxLength as number;
      expect(max).toBeGreaterThanOrEqual(256);
      const url = `/v1${path.replace("{petId}", String(pet.id))}`;
      const first = await call(url, { key });
      const etag = first.headers.get("ETag") as string;
      await first.body?.cancel();
      const fits = listOf(max, etag);
      expect([fits.length, accepts(schema, fits)]).toEqual([max, true]);
      const matched = await call(url, { key, headers: { "If-None-Match": fits } });
      expect(matched.status, url).toBe(304);
      const tooLong = listOf(max + 1, etag);
      expect(accepts(schema, tooLong)).toBe(false);
      for (const method of ["GET", "HEAD"]) {
        const refused = await call(url, { method, key, headers: { "If-None-Match": tooLong } });
        expect(refused.status, `${method} ${url}`).toBe(400);
        if (method === "GET") {
          const error = await expectError(refused, 400, "invalid_parameter", /"If-None-Match"/);
          expect(error.details).toEqual([{ field: "If-None-Match", message: expect.any(String) }]);
        }
      }
      // Authentication still comes first.
      const anonymous = await call(url, { headers: { "If-None-Match": tooLong } });
      await expectError(anonymous, 401, "unauthorized");
    }
  });
});

describe("X-Client-Name (every operation)", () => {
  /** A request to `op` naming the client `value`; its label; whether the schema takes it. */
  async function send(op: Operation, value: string) {
    const { path, allowed, ...options } = await exampleRequest(op);
    const headers = { ...options.headers, [CLIENT_NAME]: value };
    const response = await call(path, { ...options, key, headers });
    const label = `${op.operationId} ${JSON.stringify(value)}`;
    return {
      response,
      allowed,
      label,
      taken: accepts(schemaOf(op.path, op.method, CLIENT_NAME), value),
    };
  }

  async function expectAsDocumented(op: Operation, value: string) {
    const { response, allowed, label, taken } = await send(op, value);
    if (taken) {
      expect(response.status, label).toBe(allowed);
      await response.body?.cancel();
      return;
    }
    const error = await expectError(response, 400, "invalid_parameter", /"X-Client-Name"/);
    expect(error.details, label).toEqual([{ field: CLIENT_NAME, message: expect.any(String) }]);
  }

  it("every operation takes exactly the names the schema takes, and refuses the rest with 400 naming the header", async () => {
    const values = ["shop-web/2.1 petstore-client/1.0.0", "", "~ !", "x".repeat(200)];
    const refused = ["x".repeat(201), "x".repeat(300), "a\tb", "a\u007fb"];
    for (const op of OPERATIONS) {
      for (const value of [...values, ...refused]) await expectAsDocumented(op, value);
    }
    for (const value of refused) {
      expect(accepts(schemaOf("/pets", "get", CLIENT_NAME), value), value).toBe(false);
    }
  });

  it("refuses a name beyond ASCII (the runtime warns once that it sends it as UTF-8)", async () => {
    const listPets = OPERATIONS.find((op) => op.operationId === "listPets") as Operation;
    const { response, taken } = await send(listPets, "M\u00fcller");
    expect(taken).toBe(false);
    await expectError(
      response,
      400,
      "invalid_parameter",
      /"X-Client-Name" must be printable ASCII/,
    );
  });

  it("the log holds a name the server takes as sent, the longest one whole", async () => {
    const logs: LogLine[] = [];
    const app = createCheckedApp({ log: (line) => logs.push(line) });
    const longest = "x".repeat(200);
    const page = await app.fetch(
      makeRequest("/v1/pets", { key, headers: { [CLIENT_NAME]: longest } }),
    );
    expect(page.status).toBe(200);
    expect(logs.find((line) => line.msg === "request")?.client).toBe(longest);
  });
});

describe("Pets (listPets)", () => {
  it("a page holds at most maxItems animals: the largest limit the server accepts", async () => {
    const pets = doc.components.schemas.Pets as { maxItems?: number };
    const limit = schemaOf("/pets", "get", "limit");
    expect(pets.maxItems).toBe(limit.maximum);
    const page = await call(`/v1/pets?limit=${pets.maxItems}`, { key });
    expect(((await page.json()) as unknown[]).length).toBeLessThanOrEqual(pets.maxItems as number);
    const over = await call(`/v1/pets?limit=${(pets.maxItems as number) + 1}`, { key });
    await expectError(over, 400, "invalid_parameter", /"limit"/);
  });
});

describe("PetName (createPet, updatePet)", () => {
  const schema = doc.components.schemas.PetName as Record<string, unknown> & { pattern: string };
  // Read Unicode-aware, as JSON Schema 2020-12 asks (the validator compiles it with the
  // u flag), and read as UTF-16 code units, as draft-07-era validators (Postman's) do.
  const validator = new Validator(schema, "2020-12");
  const codeUnits = new RegExp(schema.pattern);
  const server = (name: string) => PetNameSchema.safeParse(name).success;

  /** Whether both readings take `name` exactly when the server does. */
  function agrees(name: string): boolean {
    const taken = server(name);
    return validator.validate(name).valid === taken && codeUnits.test(name) === taken;
  }

  /** A name with its characters beyond printable ASCII as `\u{...}`, lone surrogates too. */
  const escaped = (name: string) =>
    [...name]
      .map((c) => (/^[ -~]$/.test(c) ? c : `\\u{${c.codePointAt(0)?.toString(16).toUpperCase()}}`))
      .join("");

  /** What `agrees` found on `name`, as "<reading> takes|refuses <name>". */
  function disagreements(name: string): string[] {
    const taken = server(name);
    const readings = [
      ["the validator", validator.validate(name).valid],
      ["a reader of code units", codeUnits.test(name)],
    ] as const;
    return readings
      .filter(([, takes]) => takes !== taken)
      .map(([reading, takes]) => `${reading} ${takes ? "takes" : "refuses"} "${escaped(name)}"`);
  }

  it("takes exactly the names the server takes: every code point alone and inside a name, either reading", () => {
    const found: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const character = String.fromCodePoint(cp); // a lone surrogate in D800-DFFF
      for (const name of [character, `R${character}x`]) {
        if (!agrees(name) && found.length < 20) found.push(...disagreements(name));
      }
    }
    expect(found).toEqual([]);
  }, 120_000);

  /** Names of each kind the rules name (decisions: "Pets"), refused, then taken. */
  const REFUSED = {
    "tag characters alone": ["\u{E0041}", "\u{E0020}\u{E007F}", "\u{E0001}"],
    "combining marks alone": ["\u0301", "\u0301\u0308", "\u{1D165}", "\u{E0100}"],
    "private use alone": ["\uE000", "\u{F0000}", "\u{10FFFD}\uE000"],
    noncharacters: ["\uFDD0", "Rex\uFFFE", "Rex\u{1FFFE}", "Rex\u{10FFFF}", "\u{EFFFF}"],
    unassigned: ["\u0378", "Rex\u{E0018}", "Rex\u{50000}", "\u{2FFFD}"],
    "bidirectional controls": ["Rex\u202E", "\u2066Rex\u2069", "\u061C"],
    "lone surrogates": [
      "\uD800",
      "Rex\uDC00",
      "\uDBFFRex",
      "R\uD83Dx",
      "\u{1F408}\uDE00",
      "\uDC00\uD800",
    ],
  };
  const TAKEN = [
    "\u{1F408}",
    "Rex \u{1F408}",
    "\u{1D4B3}x\u{1D4B3}",
    "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", // a flag: tags after a sign
    "\u{1F3F3}\uFE0F\u200D\u{1F308}",
    "e\u0301",
    "\u{F0000}x",
    "\u{20000}",
  ];

  it("refuses each kind of name the rules refuse and takes the rest, as the server does over HTTP", async () => {
    const named = Object.values(REFUSED).flat();
    expect([...named, ...TAKEN].flatMap(disagreements)).toEqual([]);
    for (const [kind, names] of Object.entries(REFUSED)) {
      for (const name of names) {
        expect(server(name), `${kind} ${escaped(name)}`).toBe(false);
        const response = await call("/v1/pets", {
          method: "POST",
          key,
          json: { name, categoryId: 1 },
        });
        const error = await expectError(response, 400, "validation_failed", /"name"/);
        expect(error.details?.map((d) => d.field)).toEqual(["name"]);
      }
    }
    for (const name of TAKEN) {
      expect(server(name), escaped(name)).toBe(true);
      const pet = await createPetVia(key, { name, categoryId: 1 });
      expect(pet.name).toBe(name);
    }
  });
});

describe("cursor (listPets)", () => {
  it("every cursor the service issues fits the schema's maxLength, and a longer one is refused", async () => {
    const schema = schemaOf("/pets", "get", "cursor");
    const max = schema.maxLength as number;
    // Two pets at the very top of the id range (this file's database only, after every
    // other test of the file): the cursor after the first holds the longest id.
    const top = Number.MAX_SAFE_INTEGER;
    for (const id of [top - 1, top]) {
      await env.DB.prepare(
        "INSERT INTO pets (id, name, category_id, status, created_at) VALUES (?1, 'Top', 1, 'available', 0)",
      )
        .bind(id)
        .run();
    }
    const cursors: string[] = [];
    let lastPage: unknown[] = [];
    for (let at: string | null = "/v1/pets?limit=1&status=available"; at !== null; ) {
      const page = await call(at, { key });
      lastPage = (await page.json()) as unknown[];
      const next = nextLink(page);
      const cursor = next && new URL(next).searchParams.get("cursor");
      if (cursor) cursors.push(cursor);
      at = next && new URL(next).pathname + new URL(next).search;
    }
    expect(lastPage).toEqual([expect.objectContaining({ id: top })]);
    expect(cursors.length).toBeGreaterThan(2);
    for (const cursor of cursors) {
      expect(cursor.length).toBeLessThanOrEqual(max);
      expect(accepts(schema, cursor)).toBe(true);
    }
    const tooLong = `${cursors.at(-1)}${"A".repeat(max + 1)}`.slice(0, max + 1);
    expect(accepts(schema, tooLong)).toBe(false);
    const refused = await call(`/v1/pets?status=available&cursor=${tooLong}`, { key });
    await expectError(refused, 400, "invalid_cursor", /"cursor"/);
  });
});
