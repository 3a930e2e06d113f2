// The pet store on one D1 database, through one session of the Sessions API.
import type { PetStore } from "../pets/store.ts";
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
