import { FINAL_RUN_STATUSES, RUN_STATUSES } from '../core/run-state.js';

/**
 * Statuses of a run that has not ended, as an SQL list (both dialects): a queued slot waits while
 * its schedule's previous run is in one, `/metrics` counts the steps of these runs, an upgrade
 * backfills their flow keys. The complement of the core's FINAL_RUN_STATUSES. Light imports only:
 * `baton check`'s idle read uses it without loading the store.
 */
export const UNFINISHED_RUN_SQL = `(${RUN_STATUSES.filter((status) => !FINAL_RUN_STATUSES.has(status))
  .map((status) => `'${status}'`)
  .join(', ')})`;
