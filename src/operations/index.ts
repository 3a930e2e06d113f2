// The operation table: every operation of /v1, in the order the document lists them.
import { createPet } from "./create-pet.ts";
import { deletePet } from "./delete-pet.ts";
import { getDocs, getOpenApiDocument } from "./docs.ts";
import { getPet } from "./get-pet.ts";
import { listOrders } from "./list-orders.ts";
import { listPets } from "./list-pets.ts";
import type { Operation } from "./operation.ts";
import { updatePet } from "./update-pet.ts";

export const OPERATIONS: readonly Operation[] = [
  listPets,
  createPet,
  getPet,
  updatePet,
  deletePet,
  listOrders,
  getOpenApiDocument,
  getDocs,
];

export { type Operation, routePath, TAGS } from "./operation.ts";
export { createPet, deletePet, getOpenApiDocument, getPet, listPets, updatePet };
