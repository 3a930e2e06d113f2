-- Idempotency records for POST /v1/pets, scoped to the API key.
-- A row is reserved (state 'in_flight') before the create runs; the pet insert
-- and the row's completion commit together in one D1 batch (a transaction).
CREATE TABLE idempotency_keys (
  api_key_id INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed')),
  response_status INTEGER,
  response_body TEXT,
  response_location TEXT,
  created_at INTEGER NOT NULL,
  locked_until INTEGER NOT NULL,
  PRIMARY KEY (api_key_id, idempotency_key)
) WITHOUT ROWID;

-- Serves the hourly purge of records older than 24 hours.
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
