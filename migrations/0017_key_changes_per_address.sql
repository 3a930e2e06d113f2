-- Keys made per client address (docs/platform.md, "Limits"): the platform's hourly cap on
-- keys made counts an account's keys and, beside them, the keys made from the client
-- address (an IPv6 one by its /64) by any account, a deleted one too, so deleting the
-- account and signing up again does not start the count afresh. created_from is that
-- address: the browser's for a create or a rotation, the holder's Allow for an MCP
-- client's key. The platform's hourly purge erases it once the hour is past; keys the
-- operator issues have none.
ALTER TABLE api_keys ADD COLUMN created_from TEXT;
CREATE INDEX api_keys_created_from ON api_keys (created_from, created_at)
  WHERE created_from IS NOT NULL;

-- The address of the holder's Allow, for the key the grant's code makes; erased likewise.
ALTER TABLE oauth_grants ADD COLUMN allowed_from TEXT;
