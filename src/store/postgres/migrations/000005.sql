-- Baton schema 5 (PostgreSQL): as SQLite schema 8. Steps that wait for a person or an event
-- (core/waits.ts): `waiting_for` is what a waiting step waits for (an event's name, an approval's
-- prompt), found by `baton send` without a run; its timeout is its due time, counted in
-- runs.next_due_at like any due step. Events sent to a run before its step waits are kept in
-- wait_events, the first per (run, event) wins, taken when the step starts waiting.
ALTER TABLE steps DROP CONSTRAINT steps_status_check;
ALTER TABLE steps ADD CONSTRAINT steps_status_check CHECK (
  status IN ('pending', 'ready', 'running', 'succeeded', 'retry_wait', 'waiting', 'blocked', 'skipped', 'degraded',
    'cancelled')
);
ALTER TABLE steps ADD COLUMN waiting_for text;
CREATE INDEX steps_waiting_for ON steps (waiting_for) WHERE status = 'waiting';
CREATE TABLE wait_events (
  run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  event text NOT NULL,
  data_json text NOT NULL,
  sent_at bigint NOT NULL,
  PRIMARY KEY (run_id, event)
);
