// DELETE /v1/pets/{petId}: removes an animal, optionally only if unchanged.
import { IF_MATCH, IF_MATCH_PARAMETER, ifMatchTags } from "../http/etag.ts";
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
      "Removes the animal: it leaves every listing, getPet answers 404 for it, and its id is never given to another. A second removal is 404 (after a retry whose first response was lost, that means it is gone). Send its `ETag` in `If-Match` to remove it only if nobody has changed it since (412 `precondition_failed`).",
    params: PetIdParamSchema,
    pets: "change",
    headers: [IF_MATCH_PARAMETER],
    success: { status: 204, description: "The animal was removed." },
    errors: ["not_found", "precondition_failed"],
    mcp: { tool: true },
  },
  async (c) => {
    const { petId } = c.req.valid("param");
    const outcome = await c.var.pets.remove(petId, ifMatchTags(c.req.header(IF_MATCH)));
    if (outcome.kind !== "removed") throw refusal(petId, outcome);
    return c.body(null, 204);
  },
);
