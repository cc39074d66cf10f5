-- Baton schema 4 (PostgreSQL): as SQLite schema 6. The runs list is newest first (created_at DESC,
-- id DESC), all runs or those of one status: each is read from an index in that order and stops
-- at its page, so listing (and polling "still running?") costs the page, not the history.
-- runs_by_status gains id, so that a status's page needs no sort either.
CREATE INDEX runs_by_created ON runs (created_at, id);
DROP INDEX runs_by_status;
CREATE INDEX runs_by_status ON runs (status, created_at, id);
