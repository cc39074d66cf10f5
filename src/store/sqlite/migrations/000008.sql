-- Baton schema 8: steps that wait for a person or an event (core/waits.ts). A waiting step holds
-- no lease; its timeout is its due time, so the index of due steps holds waiting steps too (their
-- timeouts fire through the same claim statements), and nothing is polled per waiting step.
-- `waiting_for` is what it waits for, rendered when it started (an event's name, an approval's
-- prompt); `baton send` without a run finds the steps waiting for its event by it. An event sent
-- to a run before its step waits is kept in wait_events, the first per (run, event) wins, and the
-- step takes (deletes) it in the transaction where it starts waiting.
ALTER TABLE steps ADD COLUMN waiting_for TEXT;
DROP INDEX steps_due;
CREATE INDEX steps_due ON steps (due_at, run_id, position) WHERE status IN ('ready', 'retry_wait', 'waiting');
CREATE INDEX steps_waiting_for ON steps (waiting_for) WHERE status = 'waiting';
CREATE TABLE wait_events (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  data_json TEXT NOT NULL,
  sent_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, event)
) WITHOUT ROWID;
