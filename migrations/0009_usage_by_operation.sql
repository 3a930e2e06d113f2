-- Usage per key, per UTC hour, per operation, status code and Error code (docs/platform.md,
-- "Usage"), instead of per outcome class: the platform groups them by class (2xx and 3xx,
-- 4xx other than 429, 429, 5xx) and the 4xx by Error code. `operation`: the operationId
-- of the document, '' for a path or method no operation has (404, 405); `code`: the Error
-- code of an error answer, '' otherwise. The API worker adds to a row with
--   INSERT ... ON CONFLICT DO UPDATE SET count = count + excluded.count
CREATE TABLE api_key_usage_by_operation (
  api_key_id INTEGER NOT NULL,
  hour_start INTEGER NOT NULL CHECK (hour_start % 3600 = 0),
  operation TEXT NOT NULL,
  status INTEGER NOT NULL CHECK (status BETWEEN 100 AND 599),
  code TEXT NOT NULL,
  count INTEGER NOT NULL CHECK (count >= 0),
  PRIMARY KEY (api_key_id, hour_start, operation, status, code)
) WITHOUT ROWID;
-- Counts kept from before have a class only: each keeps it as the class's first status.
INSERT INTO api_key_usage_by_operation (api_key_id, hour_start, operation, status, code, count)
  SELECT api_key_id, hour_start, '',
         CASE outcome WHEN 'success' THEN 200 WHEN 'client_error' THEN 400 WHEN 'rate_limited' THEN 429 ELSE 500 END,
         CASE outcome WHEN 'rate_limited' THEN 'rate_limited' ELSE '' END,
         count
  FROM api_key_usage;
DROP TABLE api_key_usage;
ALTER TABLE api_key_usage_by_operation RENAME TO api_key_usage;
-- Serves the hourly purge of counts older than 400 days (the API worker's cron).
CREATE INDEX api_key_usage_hour_start ON api_key_usage (hour_start);
