-- Baton schema 6: history. The runs list is newest first (created_at DESC, id DESC), all runs or
-- those of one status: each is read from an index in that order and stops at its page, so listing
-- (and polling "still running?") costs the page, not the history. runs_by_status (status,
-- created_at) already serves one status (a WITHOUT ROWID table's index ends with its key, id);
-- this one serves the list of every run.
CREATE INDEX runs_by_created ON runs (created_at, id);

-- How many runs have each status, kept by triggers in the transaction that changes a run: the
-- console's counts of an unfiltered list read these few rows instead of counting the history.
-- (PostgreSQL counts instead: one row per status updated by every worker's commits would make
-- them wait for each other.)
CREATE TABLE run_counts (
  status TEXT PRIMARY KEY,
  n INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO run_counts (status, n) SELECT status, count(*) FROM runs GROUP BY status;
CREATE TRIGGER run_counts_insert AFTER INSERT ON runs BEGIN
  INSERT INTO run_counts (status, n) VALUES (NEW.status, 1) ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER run_counts_update AFTER UPDATE OF status ON runs WHEN OLD.status IS NOT NEW.status BEGIN
  UPDATE run_counts SET n = n - 1 WHERE status = OLD.status;
  INSERT INTO run_counts (status, n) VALUES (NEW.status, 1) ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER run_counts_delete AFTER DELETE ON runs BEGIN
  UPDATE run_counts SET n = n - 1 WHERE status = OLD.status;
END;
