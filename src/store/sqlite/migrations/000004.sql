-- Baton schema 4: flow control. Each step row carries the flow key of the executor it runs next
-- (core/flow.ts flowKeyOf, written with every step write); `flow_limits` holds the limits set with
-- `baton flow set`, and the recent starts of rate-limited keys. Steps stored before this version
-- have no key until their next write: the claim computes it from the plan, so limits still hold.
ALTER TABLE steps ADD COLUMN flow_key TEXT;
CREATE INDEX steps_running_flow ON steps (flow_key) WHERE status = 'running';

CREATE TABLE flow_limits (
  key TEXT PRIMARY KEY,
  -- Attempts under the key running at once (null: no limit).
  concurrency INTEGER,
  -- At most rate_count starts in any rate_window_ms (both null: no rate limit).
  rate_count INTEGER,
  rate_window_ms INTEGER,
  -- JSON array of the start times (ms) that still count against the rate.
  starts_json TEXT NOT NULL DEFAULT '[]',
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
