-- Pages of an account's keys, newest first, by keyset on the id (docs/platform.md, "Limits"):
-- the indexes give a page's rows in order, so a page reads about its own rows; the active
-- keys (and their count, for the 10-key limit) come from the account's unrevoked keys alone.
CREATE INDEX api_keys_account_id ON api_keys (account_id, id);
CREATE INDEX api_keys_account_unrevoked ON api_keys (account_id, id) WHERE revoked_at IS NULL;

