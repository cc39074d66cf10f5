-- Baton schema 2: recorded effects (write tools of model steps, later ctx.effect) and token and
-- cost usage per attempt and per run.
CREATE TABLE effects (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_id TEXT NOT NULL,
  key TEXT NOT NULL,
  -- 'intent' (written before the effect) or 'done' (written after, with its result).
  state TEXT NOT NULL,
  result_json TEXT,
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  PRIMARY KEY (run_id, step_id, key)
) WITHOUT ROWID;

ALTER TABLE attempts ADD COLUMN input_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN output_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN cost_usd REAL;
ALTER TABLE runs ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
