// The operation table: every operation of /v1, in the order the document lists them.
import { createPet } from "./create-pet.ts";
import { getDocs, getOpenApiDocument } from "./docs.ts";
import { getPet } from "./get-pet.ts";
import { listOrders } from "./list-orders.ts";
import { listPets } from "./list-pets.ts";
import type { Operation } from "./operation.ts";

export const OPERATIONS: readonly Operation[] = [
  listPets,
  createPet,
  getPet,
  listOrders,
  getOpenApiDocument,
  getDocs,
];

export { type Operation, routePath, TAGS } from "./operation.ts";
export { createPet, getOpenApiDocument, getPet, listPets };
