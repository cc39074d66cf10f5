-- Baton schema 2 (PostgreSQL): flow control, as SQLite schema 4. Each step row carries the flow
-- key of the executor it runs next (core/flow.ts flowKeyOf, written with every step write);
-- `flow_limits` holds the limits set with `baton flow set` and the recent starts of rate-limited
-- keys. A cycle that claims under a limited key locks its row (FOR UPDATE), so workers on every
-- machine admit attempts one after another against the same counts.
ALTER TABLE steps ADD COLUMN flow_key text COLLATE "C";
-- Running steps are counted per key through steps_leased (what runs now is few): no index of
-- its own, so claims and completions maintain one index less.
-- A cancelled step whose attempt may still run (its lease has not expired): counted as running.
CREATE INDEX steps_stopping_flow ON steps (flow_key, lease_expires_at)
  WHERE status = 'cancelled' AND lease_expires_at IS NOT NULL;

CREATE TABLE flow_limits (
  key text COLLATE "C" PRIMARY KEY,
  concurrency integer,
  rate_count integer,
  rate_window_ms bigint,
  starts bigint[] NOT NULL DEFAULT '{}',
  updated_at bigint NOT NULL
);
