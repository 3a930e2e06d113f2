// The PetStore on one D1 database through one session of the Sessions API (docs/scaling.md
// says what would change past one database).
import { openSession } from "./database.ts";
import { createPetIdempotently } from "./idempotency.ts";
import type { OpenPetStore, PetStore } from "./pet-store.ts";
import { deletePet, insertPet, selectPage, selectPet, updatePet } from "./pets.ts";

export function d1PetStore(session: D1DatabaseSession): PetStore {
  return {
    list: (page) => selectPage(session, page),
    get: (id) => selectPet(session, id),
    create: (pet, createdAt) => insertPet(session, pet, createdAt),
    createIdempotent: (request) => createPetIdempotently(session, request),
    update: (id, patch, ifMatch) => updatePet(session, id, patch, ifMatch),
    remove: (id, ifMatch) => deletePet(session, id, ifMatch),
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
