-- Pets. `id` is the rowid (monotonic, never reused thanks to AUTOINCREMENT),
-- which gives creation order and keyset pagination on the primary key.
CREATE TABLE pets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  category_id INTEGER NOT NULL CHECK (category_id BETWEEN 1 AND 9007199254740991),
  status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
  created_at INTEGER NOT NULL
);

-- Serves `GET /v1/pets?status=...` in id order without a scan or a sort.
CREATE INDEX pets_status_id ON pets (status, id);
