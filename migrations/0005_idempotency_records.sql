-- Idempotency records written in one D1 batch with the pet they answer for
-- (src/db/idempotency.ts). The client's Idempotency-Key is stored as its SHA-256 (32
-- bytes, whatever the key's length) and the body's fingerprint as SHA-256 too; the
-- record keeps the pet's id, and a replay reads the pet row back. There is no
-- in-flight state: a record exists only once its pet does.
-- idempotency_keys (migration 0003) is no longer written; its completed records are
-- still replayed until they are 24 hours old and the hourly purge removes them.
CREATE TABLE idempotency_records (
  api_key_id INTEGER NOT NULL,
  key_hash BLOB NOT NULL CHECK (length(key_hash) = 32),
  fingerprint BLOB NOT NULL CHECK (length(fingerprint) = 32),
  pet_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (api_key_id, key_hash)
) WITHOUT ROWID;

-- Serves the hourly purge of records older than 24 hours.
CREATE INDEX idempotency_records_created_at ON idempotency_records (created_at);
