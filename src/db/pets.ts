import type { NewPet, Pet, PetStatus } from "../pets/schemas.ts";
import type { Queryable } from "./database.ts";
import { d1 } from "./database.ts";

interface PetRow {
  id: number;
  name: string;
  category_id: number;
  status: PetStatus;
}

const COLUMNS = "id, name, category_id, status";

function toPet(row: PetRow): Pet {
  return { id: row.id, name: row.name, categoryId: row.category_id, status: row.status };
}

// Keyset pages: each query reads at most `limit + 1` rows at any depth.
// The primary key serves the first; the (status, id) index serves the second.
export const LIST_PETS_SQL = `SELECT ${COLUMNS} FROM pets WHERE id > ?1 ORDER BY id LIMIT ?2`;
export const LIST_PETS_BY_STATUS_SQL = `SELECT ${COLUMNS} FROM pets WHERE status = ?3 AND id > ?1 ORDER BY id LIMIT ?2`;
export const GET_PET_SQL = `SELECT ${COLUMNS} FROM pets WHERE id = ?1`;

export interface PetPage {
  pets: Pet[];
  /** Whether more pets follow this page. */
  hasMore: boolean;
  /** D1's `meta.rows_read` for the query. */
  rowsRead: number;
}

export async function listPets(
  db: Queryable,
  page: { afterId: number; limit: number; status: PetStatus | undefined },
): Promise<PetPage> {
  const statement = page.status
    ? db.prepare(LIST_PETS_BY_STATUS_SQL).bind(page.afterId, page.limit + 1, page.status)
    : db.prepare(LIST_PETS_SQL).bind(page.afterId, page.limit + 1);
  const result = await d1(() => statement.all<PetRow>());
  const rows = result.results;
  return {
    pets: rows.slice(0, page.limit).map(toPet),
    hasMore: rows.length > page.limit,
    rowsRead: result.meta.rows_read,
  };
}

export async function getPet(db: Queryable, id: number): Promise<Pet | null> {
  const row = await d1(() => db.prepare(GET_PET_SQL).bind(id).first<PetRow>());
  return row ? toPet(row) : null;
}

/** The INSERT of a new pet, as a statement so it can join a batch (transaction). */
export function insertPetStatement(
  db: Queryable,
  pet: NewPet,
  createdAt: number,
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO pets (name, category_id, status, created_at) VALUES (?1, ?2, ?3, ?4) RETURNING ${COLUMNS}`,
    )
    .bind(pet.name, pet.categoryId, pet.status, createdAt);
}

/** Maps the result of `insertPetStatement` to the created pet. */
export function insertedPet(result: D1Result<unknown>): Pet {
  const row = (result as D1Result<PetRow>).results[0];
  if (!row) throw new Error("INSERT ... RETURNING returned no row");
  return toPet(row);
}

export async function createPet(db: Queryable, pet: NewPet, createdAt: number): Promise<Pet> {
  const result = await d1(() => insertPetStatement(db, pet, createdAt).all<PetRow>());
  return insertedPet(result);
}
