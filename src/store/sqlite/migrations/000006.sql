-- Baton schema 6: history. The runs list is newest first (created_at DESC, id DESC), all runs or
-- those of one status: each is read from an index in that order and stops at its page, so listing
-- (and polling "still running?") costs the page, not the history. runs_by_status (status,
-- created_at) already serves one status (a WITHOUT ROWID table's index ends with its key, id);
-- this one serves the list of every run.
CREATE INDEX runs_by_created ON runs (created_at, id);
