-- The developer platform (docs/platform.md): accounts with passkeys, their sessions,
-- WebAuthn challenges, the account that owns each API key, and the usage the API
-- counts per key. Times are unix seconds, as in the other tables.

-- An account: a random id (`acct_` + base64url, also the WebAuthn user handle, so it
-- names no person and counts nothing), a display name under the pet-name character rules
-- (1-64 characters; checked by the platform), and the instant the operator disabled it.
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL CHECK (length(display_name) BETWEEN 1 AND 64),
  created_at INTEGER NOT NULL,
  disabled_at INTEGER
) WITHOUT ROWID;

-- A passkey: the credential id (base64url, as the browser sends it), its COSE public
-- key, the signature counter last seen (a lower one is refused), the transports the
-- browser reported (space-separated), and when it was registered and last used.
CREATE TABLE passkeys (
  credential_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  public_key BLOB NOT NULL,
  counter INTEGER NOT NULL CHECK (counter >= 0),
  transports TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  last_used_at INTEGER
);
CREATE INDEX passkeys_account ON passkeys (account_id);

-- A session: only the SHA-256 (hex) of its 256-bit token is stored. It ends at
-- expires_at (30 days after sign-in) or 7 days after last_seen_at, whichever is first.
CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_account ON sessions (account_id);

-- A WebAuthn challenge, single-use: the SHA-256 (hex) of the challenge, what it is for,
-- what the ceremony carries to its end (JSON: the new account's id and name, or the
-- account adding a passkey), and when it stops being accepted (5 minutes).
CREATE TABLE challenges (
  challenge_hash TEXT PRIMARY KEY,
  purpose TEXT NOT NULL CHECK (purpose IN ('sign-up', 'sign-in', 'add-passkey')),
  pending TEXT NOT NULL DEFAULT '{}',
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX challenges_expires_at ON challenges (expires_at);

-- The account that created a key on the platform; NULL: issued by the operator
-- (`npm run keys`), as every key before this migration.
ALTER TABLE api_keys ADD COLUMN account_id TEXT REFERENCES accounts (id);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- Answers per key, per UTC hour (hour_start: the hour's first second), per outcome:
-- success (2xx and 3xx), client_error (4xx other than 429), rate_limited (429),
-- server_error (5xx). The API worker adds to a row with
--   INSERT ... ON CONFLICT DO UPDATE SET count = count + excluded.count
CREATE TABLE api_key_usage (
  api_key_id INTEGER NOT NULL,
  hour_start INTEGER NOT NULL CHECK (hour_start % 3600 = 0),
  outcome TEXT NOT NULL CHECK (outcome IN ('success', 'client_error', 'rate_limited', 'server_error')),
  count INTEGER NOT NULL CHECK (count >= 0),
  PRIMARY KEY (api_key_id, hour_start, outcome)
) WITHOUT ROWID;
