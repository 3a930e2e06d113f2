// A handler is typed against its operation's declared success: another status, another body,
// or a body on a 204 is a type error (`npm run typecheck` fails on an unused @ts-expect-error),
// a conditional read's handler returns its selected representation, and an operation without a
// success can only throw. These are type tests, checked by tsc; each also runs, so the
// operations it defines are what the type test says they are.
import type { Context } from "hono";
import { describe, expect, it } from "vitest";
import type { Select } from "../src/http/conditional-read.ts";
import type { AppEnv } from "../src/http/types.ts";
import { defineOperation } from "../src/operations/operation.ts";
import { PetIdParamSchema, PetSchema } from "../src/pets/schemas.ts";

const PET = { id: 1, name: "Rex", categoryId: 2, status: "available" as const };
const base = {
  tag: "animals",
  method: "get",
  path: "/pets/{petId}",
  summary: "A test operation",
  description: "Typed by its success.",
  params: PetIdParamSchema,
  public: true,
  mcp: { tool: false, reason: "a type test" },
} as const;

describe("a handler's response is typed by its operation's success", () => {
  it("a JSON success: its status and its schema's shape, nothing else", () => {
    const success = { status: 200, schema: PetSchema, description: "The pet." } as const;
    const right = defineOperation({ ...base, operationId: "typedRead", success }, (c) =>
      c.json(PET, 200),
    );
    // @ts-expect-error: 201 is not the operation's success
    defineOperation({ ...base, operationId: "wrongStatus", success }, (c) => c.json(PET, 201));
    // @ts-expect-error: a body without the Pet's fields
    defineOperation({ ...base, operationId: "wrongBody", success }, (c) => c.json({ id: 1 }, 200));
    // @ts-expect-error: no body where JSON is declared
    defineOperation({ ...base, operationId: "noBody", success }, (c) => c.body(null, 204));
    expect(right.success.status).toBe(200);
  });

  it("a conditional read: the selected representation of its schema, not a response", async () => {
    const read = {
      ...base,
      success: { status: 200, schema: PetSchema, description: "The pet." },
      conditional: { cacheable: () => true },
    } as const;
    const right = defineOperation({ ...read, operationId: "selected" }, async () => ({
      json: PET,
      headers: { ETag: '"1"' },
    }));
    // @ts-expect-error: the middleware makes its response; the handler makes none
    defineOperation({ ...read, operationId: "responds" }, (c) => c.json(PET, 200));
    // @ts-expect-error: a body without the Pet's fields
    defineOperation({ ...read, operationId: "wrongShape" }, async () => ({ json: { id: 1 } }));
    const selected = await (right.handler as Select)({} as Context<AppEnv>);
    expect(selected).toEqual({ json: PET, headers: { ETag: '"1"' } });
  });

  it("a success without a body: a 204 and no content", () => {
    const success = { status: 204, description: "Removed." } as const;
    const right = defineOperation(
      { ...base, method: "delete", operationId: "typedRemoval", success },
      (c) => c.body(null, 204),
    );
    defineOperation(
      { ...base, method: "delete", operationId: "withBody", success },
      // @ts-expect-error: a 204 carries no body
      (c) => c.json(PET, 200),
    );
    expect(right.success.status).toBe(204);
  });

  it("no success: the handler can only throw", () => {
    const throwing = defineOperation({ ...base, operationId: "notYet" }, () => {
      throw new Error("not yet");
    });
    // @ts-expect-error: an operation without a success returns nothing but errors
    defineOperation({ ...base, operationId: "responses" }, (c) => c.json(PET, 200));
    expect("success" in throwing).toBe(false);
  });
});
