// The pet store on one D1 database, through one session of the Sessions API.
import type { OpenPetStore, PetStore } from "../pets/store.ts";
import { openSession } from "./database.ts";
import { createPetIdempotently } from "./idempotency.ts";
import { createPet, getPet, listPets } from "./pets.ts";

export function d1PetStore(session: D1DatabaseSession): PetStore {
  return {
    list: (page) => listPets(session, page),
    get: (id) => getPet(session, id),
    create: (pet, createdAt) => createPet(session, pet, createdAt),
    createIdempotent: (request) => createPetIdempotently(session, request),
    bookmark: () => session.getBookmark(),
  };
}

/**
 * The request's store on the environment's D1 (`DB`): a read starts at a nearby replica,
 * or at one no older than the client's bookmark; a write starts on the primary.
 */
export const openD1PetStore: OpenPetStore = (env, { kind, after }) =>
  d1PetStore(
    openSession(env.DB, kind === "read" ? (after ?? "first-unconstrained") : "first-primary"),
  );
