// The pet store on one D1 database, through one session of the Sessions API.
import type { PetStore } from "../pets/store.ts";
import { d1 } from "./database.ts";
import {
  completeWithInsertedPetStatement,
  releaseIdempotencyKey,
  reserveIdempotencyKey,
} from "./idempotency.ts";
import { createPet, getPet, insertedPet, insertPetStatement, listPets } from "./pets.ts";

export function d1PetStore(session: D1DatabaseSession): PetStore {
  return {
    list: (page) => listPets(session, page),
    get: (id) => getPet(session, id),
    create: (pet, createdAt) => createPet(session, pet, createdAt),
    async createIdempotent({ apiKeyId, key, fingerprint, pet, now }) {
      const scope = { apiKeyId, key };
      const reservation = await reserveIdempotencyKey(session, { ...scope, fingerprint, now });
      if (reservation.kind !== "reserved") return reservation;
      try {
        // One batch = one transaction: the pet and its idempotency record commit together.
        const [inserted] = await d1(() =>
          session.batch([
            insertPetStatement(session, pet, now),
            completeWithInsertedPetStatement(session, scope),
          ]),
        );
        return { kind: "created", pet: insertedPet(inserted as D1Result<unknown>) };
      } catch (err) {
        await releaseIdempotencyKey(session, scope).catch(() => {});
        throw err;
      }
    },
    bookmark: () => session.getBookmark(),
  };
}
