// DELETE /v1/pets/{petId}: removes an animal, optionally only if unchanged.
import { PetIdParamSchema } from "../pets/schemas.ts";
import { defineOperation } from "./operation.ts";
import { refusal } from "./pet-changes.ts";

export const deletePet = defineOperation(
  {
    operationId: "deletePet",
    tag: "animals",
    method: "delete",
    path: "/pets/{petId}",
    scope: "pets:write",
    summary: "Remove an animal",
    description:
      "Removes the animal from every listing; its id is never reused. A second removal is 404: after a retry, that means it is gone. With `If-Match`, only if the animal is unchanged (412).",
    params: PetIdParamSchema,
    pets: "change",
    ifMatch: true,
    success: { status: 204, description: "The animal was removed." },
    errors: ["not_found"],
    mcp: { tool: true },
  },
  async (c) => {
    const { petId } = c.req.valid("param");
    const outcome = await c.get("pets").remove(petId, c.get("ifMatch"));
    if (outcome.kind !== "removed") throw refusal(petId, outcome);
    return c.body(null, 204);
  },
);
