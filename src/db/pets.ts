// The pets table: its columns as the Pet's fields, the pet's entity tag in SQL, and the
// statements that read, insert, change and remove pets.
import { base64url, sha256 } from "../encoding.ts";
import {
  type NewPet,
  PET_TRANSITIONS,
  type Pet,
  type PetPatch,
  type PetStatus,
} from "../pets/schemas.ts";
import type { Queryable } from "./database.ts";
import { d1 } from "./database.ts";

/**
 * Each field of a Pet and the column that holds it: every statement's column list and the
 * mapping of a row come from here (a field added to the Pet is a type error until it has one).
 */
const PET_COLUMNS = {
  id: "id",
  name: "name",
  categoryId: "category_id",
  status: "status",
} as const satisfies Record<keyof Pet, string>;

type Field = keyof typeof PET_COLUMNS;
type Written = Exclude<Field, "id">;

const FIELDS = Object.keys(PET_COLUMNS) as Field[];

/**
 * How each written field enters the pet's entity tag: `value` as it is (a number, a status),
 * `digest` as the SHA-256 digest of its text, which every write stores beside it in
 * `<column>_digest` (the tag stays short whatever the text's length). A new field must say.
 */
const TAG_PARTS = {
  name: "digest",
  categoryId: "value",
  status: "value",
} as const satisfies Record<Written, "digest" | "value">;

const WRITTEN = Object.keys(TAG_PARTS) as Written[];
const DIGESTED = WRITTEN.filter((f) => TAG_PARTS[f] === "digest");
const digestColumn = (field: Written) => `${PET_COLUMNS[field]}_digest`;

/**
 * The pet's strong entity tag, in SQL, from the row (or the idempotency record) `alias`: its
 * written fields joined, a digest standing for each text. Equal pets, equal tags; any change
 * of a field changes it. A digest not yet written (a row from bulk SQL) stands as `0`.
 */
export function petTagSql(alias: string): string {
  const parts = WRITTEN.map((f) =>
    TAG_PARTS[f] === "digest"
      ? `coalesce(${alias}.${digestColumn(f)}, '0')`
      : `${alias}.${PET_COLUMNS[f]}`,
  );
  return `'"' || ${parts.join(" || '.' || ")} || '"'`;
}

/** The digest a write stores for a text field: 128 bits of SHA-256, base64url. */
async function textDigest(text: string): Promise<string> {
  return base64url((await sha256(text)).slice(0, 16));
}

/** `fields`' columns, `alias.` before each when given, each named as its field (`category_id AS categoryId`). */
const selectList = (fields: readonly Field[], alias?: string) =>
  fields
    .map((f) => {
      const column = alias ? `${alias}.${PET_COLUMNS[f]}` : PET_COLUMNS[f];
      return PET_COLUMNS[f] === f ? column : `${column} AS ${f}`;
    })
    .join(", ");

/** A Pet's columns named as its fields: each row D1 returns holds the Pet's fields, in order. */
const petColumns = (alias?: string) => selectList(FIELDS, alias);

/** The columns of a Pet's written fields (all but its id) from `alias`, named as the fields. */
export const writtenPetColumns = (alias: string) => selectList(WRITTEN, alias);

/** Every column a write stores: the written fields and their digests. */
export const WRITTEN_COLUMNS = [
  ...WRITTEN.map((f) => PET_COLUMNS[f]),
  ...DIGESTED.map(digestColumn),
];

/** The values of WRITTEN_COLUMNS for a new pet, in that order. */
export async function writtenValues(pet: NewPet): Promise<unknown[]> {
  const digests = await Promise.all(DIGESTED.map((f) => textDigest(String(pet[f]))));
  return [...WRITTEN.map((f) => pet[f]), ...digests];
}

/**
 * The Pet of a row that holds more than its fields (its tag, an idempotency record's): the
 * fields alone, in order. A row of petColumns() alone is a Pet as it is.
 */
export function toPet(row: Pet): Pet {
  const pet: Partial<Record<Field, unknown>> = {};
  for (const f of FIELDS) pet[f] = row[f];
  return pet as Pet;
}

/** A pet with the entity tag of its stored state. */
export interface TaggedPet {
  pet: Pet;
  etag: string;
}

/** A row of petColumns() with the tag, as `etag`. */
type TaggedRow = Pet & { etag: string };

const tagged = (row: TaggedRow): TaggedPet => ({ pet: toPet(row), etag: row.etag });

/** SELECT list of a tagged pet from `alias`. */
const taggedColumns = (alias: string) => `${petColumns(alias)}, ${petTagSql(alias)} AS etag`;

// Keyset pages: each query reads at most `limit + 1` rows at any depth.
// The primary key serves the first; the (status, id) index serves the second.
export const LIST_PETS_SQL = `SELECT ${petColumns()} FROM pets WHERE id > ?1 ORDER BY id LIMIT ?2`;
export const LIST_PETS_BY_STATUS_SQL = `SELECT ${petColumns()} FROM pets WHERE status = ?3 AND id > ?1 ORDER BY id LIMIT ?2`;
export const GET_PET_SQL = `SELECT ${taggedColumns("p")} FROM pets p WHERE p.id = ?1`;

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
  const result = await d1(() => statement.all<Pet>());
  const rows = result.results;
  return {
    pets: rows.length > page.limit ? rows.slice(0, page.limit) : rows,
    hasMore: rows.length > page.limit,
    rowsRead: result.meta.rows_read,
  };
}

export async function selectPet(db: Queryable, id: number): Promise<TaggedPet | null> {
  const row = await d1(() => db.prepare(GET_PET_SQL).bind(id).first<TaggedRow>());
  return row ? tagged(row) : null;
}

/** `?first, ?first+1, ...` for `count` values. */
const placeholders = (first: number, count: number) =>
  Array.from({ length: count }, (_, i) => `?${first + i}`).join(", ");

/** INSERT INTO pets of a new pet's written columns from ?first on, and its creation time. */
export function insertPetSql(first: number, select = false): string {
  const columns = [...WRITTEN_COLUMNS, "created_at"];
  const values = placeholders(first, columns.length);
  return `INSERT INTO pets (${columns.join(", ")}) ${select ? `SELECT ${values}` : `VALUES (${values})`}`;
}

export async function insertPet(db: Queryable, pet: NewPet, createdAt: number): Promise<TaggedPet> {
  const values = [...(await writtenValues(pet)), createdAt];
  const row = await d1(() =>
    db
      .prepare(`${insertPetSql(1)} RETURNING ${taggedColumns("pets")}`)
      .bind(...values)
      .first<TaggedRow>(),
  );
  if (!row) throw new Error("INSERT ... RETURNING returned no row");
  return tagged(row);
}

/**
 * The If-Match condition on the row `alias`, bound at `?n`: a JSON array of the entity tags
 * the client sent, or null for none (no If-Match, or `*`: any current pet).
 */
const ifMatchSql = (alias: string, n: number) =>
  `(?${n} IS NULL OR ${petTagSql(alias)} IN (SELECT value FROM json_each(?${n})))`;

/** Whether the status at `?n` may follow the row's: the same one, or a transition of PET_TRANSITIONS. */
function transitionSql(n: number): string {
  const pairs = Object.entries(PET_TRANSITIONS).flatMap(([from, tos]) =>
    tos.map((to) => `('${from}', '${to}')`),
  );
  return `(?${n} IS NULL OR ?${n} = status OR (status, ?${n}) IN (VALUES ${pairs.join(", ")}))`;
}

/** What a change of a pet came to. */
export type PetChange =
  | { kind: "changed"; pet: TaggedPet }
  | { kind: "not_found" }
  /** If-Match named none of the pet's current tag. */
  | { kind: "precondition_failed" }
  | { kind: "invalid_transition"; from: PetStatus; to: PetStatus };

/** Why a change wrote nothing, from the pet as it is after it (same transaction). */
function refusal(
  row: TaggedRow | undefined,
  ifMatch: string[] | undefined,
  status: PetStatus | undefined,
): Exclude<PetChange, { kind: "changed" }> {
  if (!row) return { kind: "not_found" };
  if (ifMatch && !ifMatch.includes(row.etag)) return { kind: "precondition_failed" };
  if (status === undefined) throw new Error("a change wrote nothing, yet nothing refused it");
  return { kind: "invalid_transition", from: row.status, to: status };
}

/**
 * Applies a JSON Merge Patch to pet `id` in one batch (one trip to the primary, one
 * transaction): the write only if the pet exists, If-Match names its tag and the status
 * may follow; then the pet as it is, to say why when nothing was written. Concurrent
 * changes are serialised by the database, so of two with one If-Match tag one wins.
 */
export async function updatePet(
  db: Queryable,
  id: number,
  patch: PetPatch,
  ifMatch: string[] | undefined,
): Promise<PetChange> {
  const fields = WRITTEN.filter((f) => patch[f] !== undefined);
  const values: unknown[] = [id, ifMatch ? JSON.stringify(ifMatch) : null, patch.status ?? null];
  const set: string[] = [];
  for (const f of fields) {
    values.push(patch[f]);
    set.push(`${PET_COLUMNS[f]} = ?${values.length}`);
    if (TAG_PARTS[f] === "digest") {
      values.push(await textDigest(String(patch[f])));
      set.push(`${digestColumn(f)} = ?${values.length}`);
    }
  }
  // `{}` changes nothing: the same batch still checks If-Match and returns the pet.
  if (set.length === 0) set.push("id = id");
  const [written, now] = await d1(() =>
    db.batch([
      db
        .prepare(
          `UPDATE pets SET ${set.join(", ")} WHERE id = ?1 AND ${ifMatchSql("pets", 2)} AND ${transitionSql(3)}
           RETURNING ${taggedColumns("pets")}`,
        )
        .bind(...values),
      db.prepare(GET_PET_SQL).bind(id),
    ]),
  );
  const row = (written as D1Result<TaggedRow>).results[0];
  if (row) return { kind: "changed", pet: tagged(row) };
  return refusal((now as D1Result<TaggedRow>).results[0], ifMatch, patch.status);
}

/** What a removal came to. */
export type PetRemoval =
  | { kind: "removed" }
  | Exclude<PetChange, { kind: "changed" | "invalid_transition" }>;

/** Removes pet `id` if If-Match allows, in one batch like updatePet. Its id is never reused (AUTOINCREMENT). */
export async function deletePet(
  db: Queryable,
  id: number,
  ifMatch: string[] | undefined,
): Promise<PetRemoval> {
  const [removed, now] = await d1(() =>
    db.batch([
      db
        .prepare(`DELETE FROM pets WHERE id = ?1 AND ${ifMatchSql("pets", 2)} RETURNING id`)
        .bind(id, ifMatch ? JSON.stringify(ifMatch) : null),
      db.prepare(GET_PET_SQL).bind(id),
    ]),
  );
  if ((removed as D1Result).results.length > 0) return { kind: "removed" };
  return refusal((now as D1Result<TaggedRow>).results[0], ifMatch, undefined) as PetRemoval;
}
