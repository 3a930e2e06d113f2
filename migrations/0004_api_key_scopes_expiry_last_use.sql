-- Restricted keys (docs/keys.md, "Managing keys").
-- scopes: the operations a key may call, space-separated in a fixed order
-- (pets:read pets:write orders:read). Every key that existed before scopes keeps
-- full access through the default.
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'pets:read pets:write orders:read'
  CHECK (length(trim(scopes)) > 0);
-- expires_at: unix seconds from which the key is refused (NULL: never expires).
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
-- last_used_at: unix seconds, accurate to within an hour (written after the response).
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
