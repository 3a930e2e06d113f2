// A handler is typed against its operation's declared success: another status, another body,
// or a body on a 204 is a type error (`npm run typecheck` fails on an unused @ts-expect-error),
// and an operation without a success can only throw. These are type tests, checked by tsc;
// each also runs, so the operations it defines are what the type test says they are.
import { describe, expect, it } from "vitest";
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
