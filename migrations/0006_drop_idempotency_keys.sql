-- The first idempotency table (migration 0003) goes: no deployment ever wrote it (the
-- service was never deployed before idempotency_records, migration 0005, replaced it),
-- and nothing reads it any more. Dropping the table drops its index too; the index is
-- named here so the intent is plain.
DROP INDEX IF EXISTS idempotency_keys_created_at;
DROP TABLE IF EXISTS idempotency_keys;
