// PATCH /v1/pets/{petId}: changes an animal by JSON Merge Patch, optionally only if unchanged.
import { PET_ETAG } from "../http/etag.ts";
import { PetIdParamSchema, PetPatchSchema, PetSchema } from "../pets/schemas.ts";
import { defineOperation } from "./operation.ts";
import { refusal } from "./pet-changes.ts";

export const updatePet = defineOperation(
  {
    operationId: "updatePet",
    tag: "animals",
    method: "patch",
    path: "/pets/{petId}",
    scope: "pets:write",
    summary: "Change an animal",
    description:
      "Changes the fields the body names (a JSON Merge Patch). Status moves `available` to `pending` or `sold`, `pending` to `available` or `sold`; `sold` is final (409). With `If-Match`, only if the animal is unchanged (412). Responses the animal and its new `ETag`.",
    params: PetIdParamSchema,
    body: PetPatchSchema,
    bodyMediaTypes: ["application/merge-patch+json", "application/json"],
    pets: "change",
    ifMatch: true,
    success: {
      status: 200,
      schema: PetSchema,
      description: "The animal as changed.",
      headers: { ETag: PET_ETAG },
    },
    errors: ["not_found", "invalid_transition"],
    mcp: { tool: true },
  },
  async (c) => {
    const { petId } = c.req.valid("param");
    const outcome = await c.get("pets").update(petId, c.req.valid("json"), c.get("ifMatch"));
    if (outcome.kind !== "changed") throw refusal(petId, outcome);
    return c.json(outcome.pet.pet, 200, { ETag: outcome.pet.etag });
  },
);
