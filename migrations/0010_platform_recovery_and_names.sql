-- The developer platform's settings pages (docs/platform.md): named passkeys, listed
-- sessions, rotated keys that name their successor, recovery codes, deleted accounts.

-- A passkey's name (its authenticator's, from the AAGUID, or "Passkey N" at its
-- registration, then whatever its holder renames it to) and the AAGUID it registered with.
-- Passkeys registered before keep the number the account page showed them with.
ALTER TABLE passkeys ADD COLUMN name TEXT;
ALTER TABLE passkeys ADD COLUMN aaguid TEXT;
UPDATE passkeys SET name = 'Passkey ' || (
  SELECT count(*) FROM passkeys AS earlier
  WHERE earlier.account_id = passkeys.account_id
    AND (earlier.created_at < passkeys.created_at
      OR (earlier.created_at = passkeys.created_at AND earlier.credential_id <= passkeys.credential_id))
);

-- A session's public id (random: the page lists sessions and ends one by id, never by
-- its token's hash), the browser it signed in from ("Chrome on Linux"), and whether it
-- signed in with a recovery code (it asks for a new passkey until one is added).
ALTER TABLE sessions ADD COLUMN id TEXT;
ALTER TABLE sessions ADD COLUMN browser TEXT;
ALTER TABLE sessions ADD COLUMN recovery INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET id = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX sessions_id ON sessions (id);

-- The key a platform rotation made to replace this one (the old key's page links to it).
ALTER TABLE api_keys ADD COLUMN replaced_by INTEGER REFERENCES api_keys (id);

-- When the holder deleted the account: its display name, passkeys, sessions, recovery
-- codes and key labels are erased then, its keys revoked; the row stays for the keys'
-- usage, which names no one.
ALTER TABLE accounts ADD COLUMN deleted_at INTEGER;

-- Recovery codes: the SHA-256 (hex) of each of an account's 10 codes, shown once; a code
-- is deleted when it signs in.
CREATE TABLE recovery_codes (
  code_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX recovery_codes_account ON recovery_codes (account_id);
