// PetStore, what the handlers need from storage: its methods and outcomes, with no
// implementation (src/db/d1-pet-store.ts is the one on D1; a sharded store would be another).
import type { NewPet, PetPatch, PetStatus } from "../pets/schemas.ts";
import type { PetChange, PetPage, PetRemoval, TaggedPet } from "./pets.ts";

/** A create under an Idempotency-Key. `now` in unix seconds. */
export interface IdempotentCreateRequest {
  /** Whose keys share the Idempotency-Key: the API key's owner (its account, or its rotation chain). */
  owner: string;
  /** The Idempotency-Key as the client meant it (after unquoting). */
  key: string;
  /** SHA-256 of the body's canonical JSON: equal JSON values, equal fingerprints. */
  fingerprint: Uint8Array;
  pet: NewPet;
  now: number;
}

/** The outcome of a create under an Idempotency-Key. */
export type IdempotentCreate =
  /** This request created `pet`. */
  | { kind: "created"; pet: TaggedPet }
  /** An earlier request with this key and an equal body created `pet` (as it was created). */
  | { kind: "replayed"; pet: TaggedPet }
  /** An earlier request with this key had another body. */
  | { kind: "reused" };

export interface PetStore {
  list(page: {
    afterId: number;
    limit: number;
    status: PetStatus | undefined;
  }): Promise<Omit<PetPage, "rowsRead">>;
  get(id: number): Promise<TaggedPet | null>;
  /** `createdAt` in unix seconds. */
  create(pet: NewPet, createdAt: number): Promise<TaggedPet>;
  /**
   * Creates the pet and the key's record together (both or neither), unless a record
   * younger than 24 hours holds the key; then returns what that record stands for.
   * Concurrent calls with one key create at most one pet.
   */
  createIdempotent(request: IdempotentCreateRequest): Promise<IdempotentCreate>;
  /**
   * Applies a merge patch if the pet exists, `ifMatch` (entity tags; none: any) names its
   * current tag and the status may follow; atomically, so no change is lost.
   */
  update(id: number, patch: PetPatch, ifMatch: string[] | undefined): Promise<PetChange>;
  /** Removes the pet on the same conditions; its id is never given to another pet. */
  remove(id: number, ifMatch: string[] | undefined): Promise<PetRemoval>;
  /** The consistency token the client gets back (`x-d1-bookmark`), if any. */
  bookmark(): string | null;
}

/**
 * Opens the store one request uses: for a read, as fresh as `after` (a consistency
 * token the client got back from `bookmark()` earlier) or anywhere if none; for a
 * write, where writes go.
 */
export type OpenPetStore = (
  env: Env,
  request: { kind: "read" | "write"; after?: string | undefined },
) => PetStore;
