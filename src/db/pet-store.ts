// PetStore, what the handlers need from storage, on one D1 database through one session of
// the Sessions API; a sharded store would be another implementation (docs/scaling.md).
import type { NewPet, Pet, PetStatus } from "../pets/schemas.ts";
import { openSession } from "./database.ts";
import { createPetIdempotently } from "./idempotency.ts";
import { insertPet, selectPage, selectPet } from "./pets.ts";

/** One keyset page: the pets after `afterId` in ascending id order. */
interface PetPageResult {
  pets: Pet[];
  /** Whether more pets follow this page. */
  hasMore: boolean;
}

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
  | { kind: "created"; pet: Pet }
  /** An earlier request with this key and an equal body created `pet`. */
  | { kind: "replayed"; pet: Pet }
  /** An earlier request with this key had another body. */
  | { kind: "reused" };

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
   * Creates the pet and the key's record together (both or neither), unless a record
   * younger than 24 hours holds the key; then answers what that record stands for.
   * Concurrent calls with one key create at most one pet.
   */
  createIdempotent(request: IdempotentCreateRequest): Promise<IdempotentCreate>;
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

export function d1PetStore(session: D1DatabaseSession): PetStore {
  return {
    list: (page) => selectPage(session, page),
    get: (id) => selectPet(session, id),
    create: (pet, createdAt) => insertPet(session, pet, createdAt),
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
