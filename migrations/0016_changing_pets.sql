-- Pets change (docs/design.md, "Changing pets"). A pet's entity tag is computed in SQL from
-- its row (src/db/pets.ts), so a change compares it with If-Match in the same statement that
-- writes, one trip to the primary. The name enters the tag as the SHA-256 digest the worker
-- writes beside it; a row written without one (before this migration, or by bulk SQL in a
-- seed) has the stand-in 0 until its name is next written.
ALTER TABLE pets ADD COLUMN name_digest TEXT;

-- A replay answers the pet as created, so the record keeps it (a pet may since have changed
-- or gone); the records written before this migration take it from their pet.
ALTER TABLE idempotency_records ADD COLUMN name TEXT;
ALTER TABLE idempotency_records ADD COLUMN category_id INTEGER;
ALTER TABLE idempotency_records ADD COLUMN status TEXT;
ALTER TABLE idempotency_records ADD COLUMN name_digest TEXT;
UPDATE idempotency_records SET (name, category_id, status, name_digest) =
  (SELECT name, category_id, status, name_digest FROM pets WHERE pets.id = idempotency_records.pet_id);
