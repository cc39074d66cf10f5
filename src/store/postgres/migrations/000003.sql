-- Baton schema 3 (PostgreSQL): as SQLite schema 5. Attempts ended `interrupted` (a dead worker, an
-- expired lease) have a budget of their own (retry.maxInterruptions) and no longer spend the
-- step's tries.
ALTER TABLE steps ADD COLUMN interruptions integer NOT NULL DEFAULT 0;
