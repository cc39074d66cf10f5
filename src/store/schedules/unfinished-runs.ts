/**
 * Statuses of a run that has not ended, as SQL: a queued slot waits while its schedule's previous
 * run is in one. Kept free of imports: `baton check`'s idle path reads it without loading the store.
 */
export const UNFINISHED_RUN_SQL = `('awaiting_approval', 'running', 'blocked')`;
