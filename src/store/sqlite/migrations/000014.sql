-- Baton schema 14: priority. A step's claim rank (core/priority.ts claimRankAt: its due time moved
-- earlier by its priority, aged) is written with its due time; claims read due steps from
-- steps_claim in the core's claim order (core/due-order.ts: claim_rank, due_at, run_id, position).
-- claim_rank is never later than due_at, so a claim scans no step whose rank is later than now:
-- what is due, and at most the steps of priority above 0 due within one aging period.
-- The run's priority is in its plan snapshot. Existing steps are priority 0: rank = due time.
ALTER TABLE steps ADD COLUMN claim_rank INTEGER;
UPDATE steps SET claim_rank = due_at WHERE due_at IS NOT NULL;
CREATE INDEX steps_claim ON steps (claim_rank, due_at, run_id, position)
  WHERE status = 'ready' OR status = 'retry_wait' OR status = 'waiting';
