-- Baton schema 10: /metrics (runtime/metrics.ts) counts the hook calls given up (state 'failed')
-- from an index of those rows alone, as it counts the ones still owed from hook_deliveries_due, so a
-- scrape costs what failed, not every hook call stored.
CREATE INDEX hook_deliveries_failed ON hook_deliveries (run_id) WHERE state = 'failed';
