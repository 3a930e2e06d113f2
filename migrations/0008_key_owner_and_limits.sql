-- A key's owner, and the limits that hold across an owner's keys (docs/keys.md, "A key's
-- owner"; docs/platform.md, "Limits"). A key's owner is its platform account, or, for an
-- operator key (no account), the first key of its rotation chain: idempotency keys and
-- the account budget are the owner's, so a second key or a rotation shares them.

-- The first key of the rotation chain this key was made by (`rotate`); NULL: this key
-- is the first. A rotation copies the old key's value, or the old key's id when it has none.
ALTER TABLE api_keys ADD COLUMN rotation_root_id INTEGER REFERENCES api_keys (id);

-- Key creations and rotations per account per hour count the account's keys by created_at.
DROP INDEX api_keys_account;
CREATE INDEX api_keys_account_created ON api_keys (account_id, created_at);

-- Idempotency records belong to the key's owner (`scope`: the account id, or `key:` and
-- the id of the first key of an operator key's rotation chain) instead of one API key.
-- Records kept from before take the owner of the key that made them.
CREATE TABLE idempotency_records_by_owner (
  scope TEXT NOT NULL,
  key_hash BLOB NOT NULL CHECK (length(key_hash) = 32),
  fingerprint BLOB NOT NULL CHECK (length(fingerprint) = 32),
  pet_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key_hash)
) WITHOUT ROWID;
INSERT OR IGNORE INTO idempotency_records_by_owner (scope, key_hash, fingerprint, pet_id, created_at)
  SELECT coalesce(k.account_id, 'key:' || k.id), r.key_hash, r.fingerprint, r.pet_id, r.created_at
  FROM idempotency_records AS r JOIN api_keys AS k ON k.id = r.api_key_id
  ORDER BY r.created_at;
DROP TABLE idempotency_records;
ALTER TABLE idempotency_records_by_owner RENAME TO idempotency_records;
-- Serves the hourly purge of records older than 24 hours.
CREATE INDEX idempotency_records_created_at ON idempotency_records (created_at);

-- Open WebAuthn challenges per holder: `holder` is what a challenge counts against, the
-- session (`session:` and the token's hash) when one is signed in, else the client
-- address (`address:` and the address, an IPv6 one cut to its /64). A holder keeps at
-- most a few open; a new one ends the oldest.
ALTER TABLE challenges ADD COLUMN holder TEXT NOT NULL DEFAULT '';
CREATE INDEX challenges_holder ON challenges (holder, expires_at);
