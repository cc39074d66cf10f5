-- Baton schema 4: flow control. Each step row carries the flow key of the executor it runs next
-- (core/flow.ts flowKeyOf, written with every step write); `flow_limits` holds the limits set with
-- `baton flow set`, and the recent starts of rate-limited keys. Steps stored before this version
-- get theirs when the database is migrated (store/flow-backfill.ts).
ALTER TABLE steps ADD COLUMN flow_key TEXT;
-- Running steps are counted per key through steps_leased (what runs now is few): no index of
-- its own, so claims and completions maintain one index less.
-- A cancelled step whose attempt may still run (its lease has not expired): counted as running.
CREATE INDEX steps_stopping_flow ON steps (flow_key, lease_expires_at)
  WHERE status = 'cancelled' AND lease_expires_at IS NOT NULL;

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
