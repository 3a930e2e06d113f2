// Handlers of the pet operations, one per operation of the table (src/operations.ts),
// which the app factory registers behind the operation's validators: `c.req.valid(...)`
// is typed from the operation's own schemas. Storage is the request's PetStore
// (src/db/pet-store.ts), `c.var.pets`, and nothing else: SQL lives in src/db. What each
// adds to the document is `petHandlerDeclares`.
import type { Context, Handler } from "hono";
import { ApiError } from "../errors.ts";
import { LINK } from "../http/conditional-read.ts";
import type { Declaration } from "../http/stage.ts";
import type { AppEnv } from "../http/types.ts";
import {
  createPet,
  getPet,
  listPets,
  type Operation,
  type OperationInput,
  type RoutePath,
} from "../operations.ts";
import { cursorSecret, decodeCursor, encodeCursor } from "../pets/cursor.ts";
import {
  bodyFingerprint,
  IDEMPOTENCY_KEY_HEADER,
  idempotencyKeyParameter,
  parseIdempotencyKey,
} from "../pets/idempotency.ts";
import type { Pet } from "../pets/schemas.ts";

/** The 201 of a create, first answer or replay alike: the pet, and where it lives. */
function created(c: Context<AppEnv>, pet: Pet, replayed = false) {
  return c.json(pet, 201, {
    Location: `/v1/pets/${pet.id}`,
    ...(replayed ? { "Idempotent-Replayed": "true" } : {}),
  });
}

/** The handler of `op`, its context typed by the operation's path and validated input. */
function handler<Op extends Operation>(
  _op: Op,
  handle: Handler<AppEnv, `/v1${RoutePath<Op["path"]>}`, OperationInput<Op>>,
): Handler<AppEnv> {
  return handle as Handler<AppEnv>;
}

export const petHandlers = {
  listPets: handler(listPets, async (c) => {
    const query = c.req.valid("query");
    const { limit } = query;
    const secret = cursorSecret(c.env);
    const afterId =
      query.cursor === undefined ? 0 : await decodeCursor(query.cursor, query.status, secret);
    const page = await c.var.pets.list({ afterId, limit, status: query.status });
    const last = page.pets.at(-1);
    if (page.hasMore && last) {
      // Built from the validated query alone (limit, status, cursor, in that order), so
      // requests that differ only in parameter order or unknown parameters get the same
      // answer, and may share one edge-cache entry.
      const next = new URL("/v1/pets", c.req.url);
      next.searchParams.set("limit", String(limit));
      if (query.status) next.searchParams.set("status", query.status);
      next.searchParams.set("cursor", await encodeCursor(last.id, query.status, secret));
      c.header("Link", `<${next.href}>; rel="next"`);
      c.set("immutable", true); // a page that has a next page never changes
    }
    return c.json(page.pets, 200);
  }),
  createPet: handler(createPet, async (c) => {
    const pet = c.req.valid("json");
    const idempotencyKey = parseIdempotencyKey(c.req.header(IDEMPOTENCY_KEY_HEADER));
    const now = Math.floor(c.var.clock() / 1000);
    if (idempotencyKey === undefined) return created(c, await c.var.pets.create(pet, now));

    const outcome = await c.var.pets.createIdempotent({
      owner: c.var.apiKeyOwner,
      key: idempotencyKey,
      fingerprint: await bodyFingerprint(c.var.jsonBody),
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
  }),
  getPet: handler(getPet, async (c) => {
    const { petId } = c.req.valid("param");
    const pet = await c.var.pets.get(petId);
    if (!pet) throw new ApiError("not_found", `No animal has petId ${petId}.`);
    c.set("immutable", true); // a pet never changes
    return c.json(pet, 200);
  }),
};

/** What each handler adds to its operation's answers. */
export function petHandlerDeclares(): Record<keyof typeof petHandlers, Declaration> {
  return {
    listPets: {
      answers: [
        {
          header: LINK,
          note: '{operations}: `<URL>; rel="next"` when more animals follow (absent on the last page).',
        },
      ],
      errors: [{ code: "invalid_cursor" }],
    },
    createPet: {
      parameters: [idempotencyKeyParameter()],
      answers: [
        {
          header: {
            name: "Location",
            description: "Path of the created animal, `/v1/pets/{id}`.",
            schema: { type: "string", pattern: "^/v1/pets/[1-9][0-9]*$" },
          },
          always: true,
        },
        {
          header: {
            name: "Idempotent-Replayed",
            description:
              "`true` when this is the stored response of an earlier request with the same `Idempotency-Key`.",
            schema: { type: "string", enum: ["true"] },
          },
        },
      ],
      errors: [{ code: "invalid_idempotency_key" }, { code: "idempotency_key_reused" }],
    },
    getPet: { errors: [{ code: "not_found" }] },
  };
}
