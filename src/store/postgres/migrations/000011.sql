-- Baton schema 11 (PostgreSQL): priority, as SQLite schema 14. `next_rank` is the lowest claim rank
-- of a run's ready, retry_wait and waiting steps (core/priority.ts claimRankAt: the due time moved
-- earlier by the step's priority, aged), kept with every write of the run as next_due_at is. Claims
-- lock running runs through runs_claim in the core's claim order (next_rank, next_due_at, id); a
-- rank is never later than its due time, so they read what is due, and at most the runs with work
-- of priority above 0 due within one aging period. The run's priority is in its plan snapshot.
-- Existing runs are priority 0: rank = due time.
ALTER TABLE runs ADD COLUMN next_rank bigint;
UPDATE runs SET next_rank = next_due_at WHERE next_due_at IS NOT NULL;
CREATE INDEX runs_claim ON runs (next_rank, next_due_at, id) WHERE status = 'running';
