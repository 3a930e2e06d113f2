// POST /v1/pets: adds an animal; an Idempotency-Key makes retries safe.
import type { Context } from "hono";
import type { TaggedPet } from "../db/pets.ts";
import { ApiError } from "../errors.ts";
import { PET_ETAG } from "../http/etag.ts";
import type { AppEnv } from "../http/types.ts";
import {
  bodyFingerprint,
  IDEMPOTENCY_KEY_HEADER,
  idempotencyKeyParameter,
  parseIdempotencyKey,
} from "../pets/idempotency.ts";
import { NewPetSchema, PetSchema } from "../pets/schemas.ts";
import { defineOperation } from "./operation.ts";

/** The 201 of a create, first response or replay alike: the pet as created, and where it lives. */
function created(c: Context<AppEnv>, { pet, etag }: TaggedPet, replayed = false) {
  return c.json(pet, 201, {
    Location: `/v1/pets/${pet.id}`,
    ETag: etag,
    ...(replayed ? { "Idempotent-Replayed": "true" } : {}),
  });
}

export const createPet = defineOperation(
  {
    operationId: "createPet",
    tag: "animals",
    method: "post",
    path: "/pets",
    scope: "pets:write",
    summary: "Add an animal",
    description:
      "Creates an animal. Send `Idempotency-Key` to make retries safe: the same key with the same body within 24 hours replays the first response (the animal as created, even if it has since changed or gone) with `Idempotent-Replayed: true`.",
    body: NewPetSchema,
    pets: "change",
    headers: [idempotencyKeyParameter()],
    success: {
      status: 201,
      schema: PetSchema,
      description: "The created animal.",
      headers: {
        Location: {
          description: "Path of the created animal, `/v1/pets/{id}`.",
          schema: { type: "string", maxLength: 25, pattern: "^/v1/pets/[1-9][0-9]{0,15}$" },
          required: true,
        },
        ETag: PET_ETAG,
        "Idempotent-Replayed": {
          description:
            "`true` when this is the stored response of an earlier request with the same `Idempotency-Key`.",
          schema: { type: "string", enum: ["true"] },
        },
      },
    },
    errors: ["invalid_idempotency_key", "idempotency_key_reused"],
    mcp: { tool: true },
  },
  async (c) => {
    const pet = c.req.valid("json");
    const idempotencyKey = parseIdempotencyKey(c.req.header(IDEMPOTENCY_KEY_HEADER));
    const now = Math.floor(c.get("clock")() / 1000);
    if (idempotencyKey === undefined) return created(c, await c.get("pets").create(pet, now));

    const outcome = await c.get("pets").createIdempotent({
      owner: c.get("apiKeyOwner"),
      key: idempotencyKey,
      fingerprint: await bodyFingerprint(c.get("jsonBody")),
      pet,
      now,
    });
    if (outcome.kind === "reused") {
      throw new ApiError(
        "idempotency_key_reused",
        'This "Idempotency-Key" was already used with a different request body.',
      );
    }
    return created(c, outcome.pet, outcome.kind === "replayed");
  },
);
