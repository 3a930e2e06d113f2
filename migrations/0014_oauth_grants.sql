-- OAuth for MCP clients (docs/platform.md, "Connecting agents"): the platform grants an
-- MCP client an ordinary API key of the account, whose audience is /mcp alone.

-- audience: where the API accepts a key. NULL: everywhere (/v1 and /mcp), as every key
-- before this migration; '/mcp': only at the MCP server (a key granted by OAuth).
ALTER TABLE api_keys ADD COLUMN audience TEXT CHECK (audience IN ('/mcp'));

-- A client that registered itself (RFC 7591): a random id (`mcpc_` + base64url), the
-- name it gave, its exact redirect URIs (a JSON array) and when it registered.
-- Clients whose id is the https address of their metadata document are not stored.
CREATE TABLE oauth_clients (
  client_id TEXT PRIMARY KEY,
  client_name TEXT NOT NULL,
  redirect_uris TEXT NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;

-- One authorization of a client by an account, from the consent page to the key:
-- pending (asked, not yet decided; id random, bound to the account), then allowed (the
-- SHA-256 of its one-time code, the scopes and key lifetime the holder chose), then
-- redeemed (used_at, and the key it made). Everything the token request is checked
-- against is here: client, exact redirect URI, PKCE S256 challenge, resource.
CREATE TABLE oauth_grants (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  client_id TEXT NOT NULL,
  client_name TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  state TEXT,
  code_challenge TEXT NOT NULL,
  resource TEXT NOT NULL,
  requested_scopes TEXT NOT NULL,
  scopes TEXT,
  key_lifetime INTEGER,
  code_hash TEXT UNIQUE,
  key_id INTEGER REFERENCES api_keys (id),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
) WITHOUT ROWID;
CREATE INDEX oauth_grants_account ON oauth_grants (account_id);
CREATE INDEX oauth_grants_expires_at ON oauth_grants (expires_at);
