// Handlers of the pet operations, one per operation of the table (src/operations.ts),
// which the app factory registers behind the operation's validators: `c.req.valid(...)`
// is typed from the operation's own schemas. Storage is the request's PetStore
// (src/db/pet-store.ts), `c.var.pets`, and nothing else: SQL lives in src/db.
import type { Context, Handler, Hono } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "../http/types.ts";
import {
  createPet,
  getPet,
  listPets,
  type Operation,
  type OperationInput,
  type OperationSchema,
  type RoutePath,
} from "../operations.ts";
import { decodeCursor, encodeCursor } from "../pets/cursor.ts";
import { bodyFingerprint, parseIdempotencyKey } from "../pets/idempotency.ts";
import type { Pet } from "../pets/schemas.ts";

/** The 201 of a create, first answer or replay alike: the pet, and where it lives. */
function created(c: Context<AppEnv>, pet: Pet, replayed = false) {
  return c.json(pet, 201, {
    Location: `/v1/pets/${pet.id}`,
    ...(replayed ? { "Idempotent-Replayed": "true" } : {}),
  });
}

/** A handler of `op`, its context typed by the operation's path and validated input. */
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
    const afterId = query.cursor === undefined ? 0 : await decodeCursor(query.cursor, query.status);
    const page = await c.var.pets.list({ afterId, limit, status: query.status });
    const last = page.pets.at(-1);
    if (page.hasMore && last) {
      // Built from the validated query alone (limit, status, cursor, in that order), so
      // requests that differ only in parameter order or unknown parameters get the same
      // answer, and may share one edge-cache entry.
      const next = new URL("/v1/pets", c.req.url);
      next.searchParams.set("limit", String(limit));
      if (query.status) next.searchParams.set("status", query.status);
      next.searchParams.set("cursor", await encodeCursor(last.id, query.status));
      c.header("Link", `<${next.href}>; rel="next"`);
    }
    return c.json(page.pets, 200);
  }),
  createPet: handler(createPet, async (c) => {
    const pet = c.req.valid("json");
    const idempotencyKey = parseIdempotencyKey(c.req.header("Idempotency-Key"));
    const now = Math.floor(c.var.clock() / 1000);
    if (idempotencyKey === undefined) return created(c, await c.var.pets.create(pet, now));

    const outcome = await c.var.pets.createIdempotent({
      apiKeyId: c.var.apiKeyId,
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
    return c.json(pet, 200);
  }),
};

/**
 * The routes of the pet operations as Hono's typed client (`hc`, src/client.ts) sees
 * them, relative to `/v1`: paths, inputs and success answers, all from the table.
 */
export type PetRoutes = Hono<
  AppEnv,
  OperationSchema<typeof listPets> &
    OperationSchema<typeof createPet> &
    OperationSchema<typeof getPet>
>;
