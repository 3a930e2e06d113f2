// The pet resource's schemas: they validate requests at run time and they write
// the OpenAPI document (scripts/openapi.ts). There is no second copy.
import * as z from "zod/mini";
import { CURSOR_MAX_LENGTH, MAX_ID, NAME_MAX_CODE_POINTS, PAGE_SIZE } from "../config.ts";
import { NAME_RULES_TEXT, nameSchema } from "./names.ts";

/** The document's pattern for names (src/pets/names.ts), where the document builder looks for it. */
export { portableNamePattern } from "./names.ts";

const PET_STATUSES = ["available", "pending", "sold"] as const;

/**
 * Where each status may go (decisions: "Changing animals"); `sold` is final. Setting the
 * status a pet already has is no transition and always allowed.
 */
export const PET_TRANSITIONS: Record<PetStatus, readonly PetStatus[]> = {
  available: ["pending", "sold"],
  pending: ["available", "sold"],
  sold: [],
};

const PetStatusSchema = z
  .enum(PET_STATUSES, { error: "must be one of available, pending, sold" })
  .check(z.meta({ id: "PetStatus", description: "Availability of the animal." }));

/** zod's error option: "is required" when the field is absent, else `message`. */
function requiredOr(message: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? "is required" : message);
}

export const PetNameSchema = nameSchema(NAME_MAX_CODE_POINTS).check(
  z.meta({
    id: "PetName",
    description: `The animal's name: 1 to ${NAME_MAX_CODE_POINTS} Unicode code points with ${NAME_RULES_TEXT}. Stored and returned exactly as sent.`,
    minLength: 1,
    maxLength: NAME_MAX_CODE_POINTS,
    examples: ["Rex"],
  }),
);

const CATEGORY_ID_MESSAGE = `must be an integer from 1 to ${MAX_ID}`;

// z.int() is a safe integer: it refuses anything above MAX_ID (2^53 - 1) itself, so one
// more bound would report one problem twice.
const CategoryIdSchema = z.int({ error: requiredOr(CATEGORY_ID_MESSAGE) }).check(
  z.gte(1, { error: CATEGORY_ID_MESSAGE }),
  z.meta({
    description:
      "Identifier of the category (int64 on the wire, limited to 2^53 - 1 so JavaScript clients round-trip it). There is no category resource.",
    format: "int64",
    examples: [12],
  }),
);

const PetIdSchema = z
  .int()
  .check(
    z.gte(1),
    z.lte(MAX_ID),
    z.meta({ description: "Unique identifier assigned by the service.", format: "int64" }),
  );

export const NewPetSchema = z
  .strictObject(
    {
      name: PetNameSchema,
      categoryId: CategoryIdSchema,
      status: z._default(PetStatusSchema, "available"),
    },
    { error: (issue) => (issue.code === "invalid_type" ? "must be a JSON object" : undefined) },
  )
  .check(
    z.meta({
      id: "NewPet",
      description: "Request body of createPet. Omitting `status` means `available`.",
    }),
  );

/**
 * A JSON Merge Patch (RFC 7396) of a pet: each field as a create takes it, all optional;
 * `null` (which would remove a field) and `id` are refused like any other value or field.
 */
export const PetPatchSchema = z
  .strictObject(
    {
      name: z.optional(PetNameSchema),
      categoryId: z.optional(CategoryIdSchema),
      status: z.optional(PetStatusSchema),
    },
    { error: (issue) => (issue.code === "invalid_type" ? "must be a JSON object" : undefined) },
  )
  .check(
    z.meta({
      id: "PetPatch",
      description:
        "Request body of updatePet (RFC 7396): the fields to change, as createPet takes them. No `null`: no field can be removed.",
    }),
  );

// A response may gain fields within /v1 (docs/versioning.md): the Pet is not closed, and
// clients ignore fields they do not know.
const PET_FIELDS = {
  id: PetIdSchema,
  name: PetNameSchema,
  categoryId: CategoryIdSchema,
  status: PetStatusSchema,
};

export const PetSchema = z.looseObject(PET_FIELDS).check(
  z.meta({
    id: "Pet",
    description:
      "An animal of the store. Within /v1 it may gain fields: ignore the ones you do not know.",
  }),
);

export const PetsSchema = z
  .array(PetSchema)
  .check(
    z.maxLength(PAGE_SIZE.max),
    z.meta({ id: "Pets", description: "A page of animals in ascending id order." }),
  );

export type NewPet = z.infer<typeof NewPetSchema>;
/** A Pet as this service writes it: exactly its fields. */
export type Pet = { [F in keyof typeof PET_FIELDS]: z.infer<(typeof PET_FIELDS)[F]> };
export type PetPatch = z.infer<typeof PetPatchSchema>;
export type PetStatus = z.infer<typeof PetStatusSchema>;

/** A query parameter that may be sent at most once (Hono hands repeats over as an array). */
function singleQueryParameter(what: string) {
  return z.string({
    error: (issue) =>
      Array.isArray(issue.input) ? "must be given at most once" : `must be ${what}`,
  });
}

const PAGE_SIZE_MESSAGE = `must be an integer from ${PAGE_SIZE.min} to ${PAGE_SIZE.max} written in digits`;

/** Decimal digits without a sign or a leading zero: how an integer parameter is written. */
const DECIMAL_DIGITS = /^[1-9][0-9]*$/;

export const ListPetsQuerySchema = z.object({
  // Absent means the default page size: the validated query always has a limit.
  limit: z._default(
    z.pipe(
      singleQueryParameter("an integer").check(
        // One problem, one message: one check for the digits and the range.
        z.refine((s) => DECIMAL_DIGITS.test(s) && Number(s) <= PAGE_SIZE.max, {
          error: PAGE_SIZE_MESSAGE,
        }),
        z.meta({
          description: `Maximum number of animals returned (${PAGE_SIZE.min}..${PAGE_SIZE.max}, default ${PAGE_SIZE.default}), written in decimal digits without a sign or a leading zero. Never clamped: out of range is 400.`,
          // The document describes the value; the check above is the server's.
          type: "integer",
          format: "int32",
          minimum: PAGE_SIZE.min,
          maximum: PAGE_SIZE.max,
          default: PAGE_SIZE.default,
          examples: [PAGE_SIZE.default],
        }),
      ),
      z.transform((s) => Number(s)),
    ),
    PAGE_SIZE.default,
  ),
  status: z.optional(
    z.pipe(
      singleQueryParameter("one of available, pending, sold").check(
        z.meta({
          description: "Only animals with this status (case-sensitive). Omitted: all animals.",
          enum: [...PET_STATUSES],
        }),
      ),
      PetStatusSchema,
    ),
  ),
  cursor: z.optional(
    singleQueryParameter("a cursor").check(
      z.meta({
        description:
          'Opaque cursor from a `Link: <...>; rel="next"` header. Bound to the `status` filter it was issued for.',
        // The document states the bound; the cursor's own check refuses what is longer.
        maxLength: CURSOR_MAX_LENGTH,
        pattern: "^[A-Za-z0-9_-]+$",
      }),
    ),
  ),
});

export const PetIdParamSchema = z.object({
  petId: z.pipe(
    z.string().check(
      z.refine((s) => DECIMAL_DIGITS.test(s), {
        error: "must be a positive integer written in decimal digits",
        abort: true,
      }),
      z.refine((s) => Number(s) <= MAX_ID, { error: `must be at most ${MAX_ID}` }),
      z.meta({
        description: `Identifier of the animal, 1 to 2^53 - 1, written in decimal digits without a sign or a leading zero.`,
        type: "integer",
        format: "int64",
        minimum: 1,
        maximum: MAX_ID,
        examples: [1],
      }),
    ),
    z.transform((s) => Number(s)),
  ),
});
