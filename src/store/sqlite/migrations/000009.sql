-- Baton schema 9: the index of due steps names its statuses as equalities joined by OR, not as an
-- IN list. SQLite checks a partial index's condition on every UPDATE of a step's status, and for an
-- IN list of three or more constants it first builds a temporary b-tree of the list: about 4 µs per
-- step write in W (bench/workloads/w-sql.mjs), 2 to 3 % of a step. Same rows, same order; the
-- claims' conditions (store/due-steps.ts) are written the same way, so they use it.
DROP INDEX steps_due;
CREATE INDEX steps_due ON steps (due_at, run_id, position)
  WHERE status = 'ready' OR status = 'retry_wait' OR status = 'waiting';
