/**
 * The tables of a fully migrated Baton schema, the same in both dialects. Kept free of imports:
 * `baton check`'s idle path reads it without loading the store.
 */

/** The `app` a Baton database's `baton_meta` names (SQLite file or PostgreSQL schema alike). */
export const SCHEMA_APP_ID = 'baton';

/**
 * The schema version the SQLite migrations reach: the number of the newest file in
 * sqlite/migrations (a test holds the two equal). The idle check answers only for a database at
 * this version, without reading the migrations folder (it runs bundled, away from that folder).
 */
export const SQLITE_SCHEMA_VERSION = 14;

/**
 * Tables holding a run's rows (what `baton migrate` copies per run, in the order it reports them):
 * `wait_events` holds the events sent to a run before its step waits, kept until taken.
 */
export const RUN_TABLES = [
  'runs',
  'run_plans',
  'steps',
  'attempts',
  'events',
  'artifacts',
  'effects',
  'hook_deliveries',
  'wait_events',
  'run_labels',
] as const;

/**
 * Every index of a fully migrated SQLite database (the migrations create them; a test holds the two
 * equal): the statements of the SQLite store name them (INDEXED BY), and `baton check`'s idle read
 * answers only for a database that has them all, as the full check's open would find it.
 */
export const SQLITE_INDEXES: readonly string[] = [
  'events_by_run',
  'hook_deliveries_due',
  'hook_deliveries_failed',
  'run_labels_by_label',
  'runs_by_created',
  'runs_by_status',
  'schedule_slots_by_run',
  'schedules_due',
  'schedules_queued',
  'steps_claim',
  'steps_due',
  'steps_leased',
  'steps_stopping_flow',
  'steps_waiting_for',
  'trigger_deliveries_by_trigger',
];

/** Every table a store reads: the metadata, the run tables, the flow limits and the schedules. */
export const BATON_TABLES: readonly string[] = [
  'baton_meta',
  ...RUN_TABLES,
  'flow_limits',
  'schedules',
  'schedule_slots',
  'triggers',
  'trigger_deliveries',
];
