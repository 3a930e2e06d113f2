// The pets table: its rows as Pets, and the statements that read and insert them.
import type { NewPet, Pet, PetStatus } from "../pets/schemas.ts";
import type { Queryable } from "./database.ts";
import { d1 } from "./database.ts";

export interface PetRow {
  id: number;
  name: string;
  category_id: number;
  status: PetStatus;
}

const COLUMNS = "id, name, category_id, status";
/** What a create writes, in this order: the new pet's fields, then its creation time. */
export const INSERT_PET_COLUMNS = "name, category_id, status, created_at";

/** The one mapping from a stored row to the Pet of every answer (created, replayed, read). */
export function toPet(row: PetRow): Pet {
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

export async function selectPage(
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

export async function selectPet(db: Queryable, id: number): Promise<Pet | null> {
  const row = await d1(() => db.prepare(GET_PET_SQL).bind(id).first<PetRow>());
  return row ? toPet(row) : null;
}

export async function insertPet(db: Queryable, pet: NewPet, createdAt: number): Promise<Pet> {
  const row = await d1(() =>
    db
      .prepare(
        `INSERT INTO pets (${INSERT_PET_COLUMNS}) VALUES (?1, ?2, ?3, ?4) RETURNING ${COLUMNS}`,
      )
      .bind(pet.name, pet.categoryId, pet.status, createdAt)
      .first<PetRow>(),
  );
  if (!row) throw new Error("INSERT ... RETURNING returned no row");
  return toPet(row);
}
