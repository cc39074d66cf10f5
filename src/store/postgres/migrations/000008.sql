-- Baton schema 8 (PostgreSQL only; SQLite finds due steps from its steps_due index, whatever the
-- run's concurrency). `next_wait_at` is the earliest due time of a run's wait steps (a ready one
-- starting to wait, a waiting one's timeout; core/waits.ts nextWaitAt), kept with every write of
-- the run as next_due_at is: their moves hold no slot, so a claim locks a run at its concurrency
-- when a wait of it is due, from the run row alone.
ALTER TABLE runs ADD COLUMN next_wait_at bigint;
UPDATE runs r SET next_wait_at = w.at
FROM (
  SELECT s.run_id, min(s.due_at) AS at FROM steps s
  WHERE s.due_at IS NOT NULL AND (s.status = 'waiting' OR (s.status = 'ready' AND s.flow_key = 'wait'))
  GROUP BY s.run_id
) w
WHERE r.id = w.run_id;
