-- Baton schema 3: each step's tokens and cost across its attempts, and when its first attempt
-- started, for step budgets (maxTokens, maxCostUsd, maxWallMs).
ALTER TABLE steps ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN first_started_at INTEGER;
-- 1 once the step's own executor gave up and its fallback runs instead.
ALTER TABLE steps ADD COLUMN on_fallback INTEGER NOT NULL DEFAULT 0;

-- Hook calls owed, written in the transaction of the event that calls for them: each is made once
-- (leased while in flight, retried with backoff), also after a crash or restart.
CREATE TABLE hook_deliveries (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  event_seq INTEGER NOT NULL,
  hook INTEGER NOT NULL,
  -- 'pending', 'done' or 'failed' (retries used up).
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  due_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_expires_at INTEGER,
  last_error TEXT,
  PRIMARY KEY (run_id, event_seq, hook)
) WITHOUT ROWID;
CREATE INDEX hook_deliveries_due ON hook_deliveries (due_at) WHERE state = 'pending';
