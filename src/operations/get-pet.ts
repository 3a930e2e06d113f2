// GET /v1/pets/{petId}: one animal; deprecated, and gone at its sunset.
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "../config.ts";
import { ApiError } from "../errors.ts";
import { PetIdParamSchema, PetSchema } from "../pets/schemas.ts";
import { defineOperation } from "./operation.ts";

export const getPet = defineOperation(
  {
    operationId: "getPet",
    tag: "animals",
    method: "get",
    path: "/pets/{petId}",
    scope: "pets:read",
    summary: "Fetch an animal by id (deprecated)",
    description:
      'Deprecated: use `GET /pets` with the `status` filter. Every response carries `Deprecation`, `Sunset` and `Link` (rel="successor-version" and rel="deprecation"). From the sunset instant (Thu, 05 Dec 2030 00:00:00 GMT) on, the operation responds with 410 `gone`. Its `ETag` is the pet\'s: send it in `If-Match` to change or remove the pet only if it is still as you saw it.',
    deprecation: {
      since: GET_PET_DEPRECATED_AT,
      sunset: GET_PET_SUNSET_AT,
      successor: "/v1/pets",
      docs: "/v1/docs#tag/animals/GET/pets/%7BpetId%7D",
      gone: "GET /v1/pets/{petId} was removed on Thu, 05 Dec 2030; use GET /v1/pets with the status filter.",
    },
    params: PetIdParamSchema,
    pets: "read",
    conditional: { cacheable: () => true },
    success: { status: 200, schema: PetSchema, description: "The animal." },
    errors: ["not_found"],
    mcp: { tool: true },
  },
  async (c) => {
    const { petId } = c.req.valid("param");
    const found = await c.get("pets").get(petId);
    if (!found) throw new ApiError("not_found", `No animal has petId ${petId}.`);
    return { json: found.pet, headers: { ETag: found.etag } };
  },
);
