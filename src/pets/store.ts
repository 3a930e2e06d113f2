// What the pet routes need from storage, and nothing else. Today one D1 database
// implements it (src/db/pet-store.ts); a sharded store is another implementation of
// this interface, chosen where the request's store is made (src/http/d1-session.ts).
// docs/scaling.md says what a sharded one must provide.
import type { StoredResponse } from "../db/idempotency.ts";
import type { NewPet, Pet, PetStatus } from "./schemas.ts";

/** One keyset page: the pets after `afterId` in ascending id order. */
export interface PetPageResult {
  pets: Pet[];
  /** Whether more pets follow this page. */
  hasMore: boolean;
}

/** The outcome of a create under an Idempotency-Key. */
export type IdempotentCreate =
  | { kind: "created"; pet: Pet }
  /** Another request with this key is still being processed. */
  | { kind: "in_flight" }
  /** A completed create holds the key: its body's fingerprint and its stored answer. */
  | { kind: "completed"; fingerprint: string; response: StoredResponse };

export interface PetStore {
  list(page: {
    afterId: number;
    limit: number;
    status: PetStatus | undefined;
  }): Promise<PetPageResult>;
  get(id: number): Promise<Pet | null>;
  /** `createdAt` in unix seconds. */
  create(pet: NewPet, createdAt: number): Promise<Pet>;
  /**
   * Claims the key for this request, then creates the pet and completes the key's record
   * in one transaction, so a retry with the same key finds either nothing or both; or
   * reports who holds the key. `now` in unix seconds.
   */
  createIdempotent(request: {
    apiKeyId: number;
    key: string;
    fingerprint: string;
    pet: NewPet;
    now: number;
  }): Promise<IdempotentCreate>;
  /** The consistency token the client gets back (`x-d1-bookmark`), if any. */
  bookmark(): string | null;
}
