// The document's request schemas are as strict as the server: a value the schema of a
// parameter or header accepts is one the server accepts, and the other way round, so
// schema-driven clients and validators agree with it. Each schema is read from the
// document the worker serves and checked with a JSON Schema 2020-12 validator.
import { Validator } from "@cfworker/json-schema";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { parseIdempotencyKey } from "../src/pets/idempotency.ts";
import { call, createKey, createPetVia } from "./helpers.ts";
import { doc } from "./support/conformance.ts";

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
  it("the pattern counts the length as the server does: inside a structured-field string's quotes (generated)", () => {
    const schema = schemaOf("/pets", "post", "Idempotency-Key");
    const pattern = new RegExp(schema.pattern as string, "u");
    const character = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom("a", "Z", "0", " ", "~", "-") },
      { weight: 2, arbitrary: fc.constantFrom('"', "\\") },
      { weight: 1, arbitrary: fc.constantFrom("\u007f", "é", "\u0000") },
    );
    const header = fc.oneof(
      fc.string({ unit: character, maxLength: 8 }),
      fc.string({ unit: character, minLength: 253, maxLength: 258 }),
      fc.integer({ min: 253, max: 258 }).map((n) => `"${"k".repeat(n)}"`),
      fc.string({ unit: character, maxLength: 8 }).map((s) => `"${s}"`),
    );
    fc.assert(
      fc.property(header, (value) => {
        expect(pattern.test(value), JSON.stringify(value)).toBe(modelAccepts(value));
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

  it("the server refuses what the pattern refuses and accepts what it accepts", async () => {
    const schema = schemaOf("/pets", "post", "Idempotency-Key");
    const pattern = new RegExp(schema.pattern as string, "u");
    for (const value of [
      "k".repeat(255),
      "k".repeat(256),
      `"${"k".repeat(255)}"`,
      `"${"k".repeat(256)}"`,
      '""',
      '"a\\"b"',
    ]) {
      const response = await call("/v1/pets", {
        method: "POST",
        key,
        headers: { "Idempotency-Key": `${value}` },
        json: { name: "Keyed", categoryId: 1 },
      });
      expect(response.status === 201, value).toBe(pattern.test(value));
      await response.body?.cancel();
    }
  });
});
