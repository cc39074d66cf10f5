-- Baton schema 7: due steps are claimed in one order on both stores, the core's (compareDueSteps:
-- due time, run id, then plan position, never step id). The index of due steps holds that order,
-- so a claim's page is read from it and stops at its limit: a fan-out of many steps due at the
-- same time is not read whole and sorted at every claim.
DROP INDEX steps_due;
CREATE INDEX steps_due ON steps (due_at, run_id, position) WHERE status IN ('ready', 'retry_wait');
