-- Baton schema 12: run labels (`baton run -l team=growth`), one row per label of a run. Found by
-- label through run_labels_by_label (`baton status --label`, `retry --blocked --label`); never
-- metric labels. Labels are set when the run is stored and go with it.
CREATE TABLE run_labels (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE INDEX run_labels_by_label ON run_labels (key, value, run_id);
