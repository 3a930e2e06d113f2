-- API keys are stored only as SHA-256 hashes (hex). `prefix` is the first
-- characters of the key, enough for a person to recognise it in a list.
CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  key_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  label TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
