-- Pages of an account's keys, newest first, by keyset on the id (docs/platform.md, "Limits"):
-- the indexes give a page's rows in order, so a page reads about its own rows; the active
-- keys (and their count, for the 10-key limit) come from the account's unrevoked keys alone.
CREATE INDEX api_keys_account_id ON api_keys (account_id, id);
CREATE INDEX api_keys_account_unrevoked ON api_keys (account_id, id) WHERE revoked_at IS NULL;

-- A registered OAuth client that never got a grant is purged 30 days after registering
-- (docs/platform.md, "Connecting agents"). granted_at: when a grant of it first made a key.
ALTER TABLE oauth_clients ADD COLUMN granted_at INTEGER;
UPDATE oauth_clients SET granted_at = created_at
  WHERE client_id IN (SELECT client_id FROM oauth_grants WHERE key_id IS NOT NULL);
CREATE INDEX oauth_clients_ungranted ON oauth_clients (created_at) WHERE granted_at IS NULL;
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);
