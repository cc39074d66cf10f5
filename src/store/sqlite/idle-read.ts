import { dueStepOfRunningRunSql } from '../due-steps.js';
import { hookCallDueSql } from '../hook-calls-due.js';
import { leaseExpiredSql } from '../lease-rules.js';
import { queuedSlotFreeSql, slotDueSql } from '../schedules/slots-due.js';
import { BATON_TABLES, SQLITE_INDEXES } from '../schema-tables.js';

/**
 * What `baton check`'s idle read (cli/commands/check-idle.ts) asks the SQLite store, without
 * loading it: the store's own rules (due-steps.ts, lease-rules.ts, hook-calls-due.ts,
 * schedules/slots-due.ts) and its own list of tables and indexes. Light imports only: the idle read
 * is bundled into the `baton` launcher. Its waiting steps come from waiting-steps.ts.
 */

function quoted(names: readonly string[]): string {
  return names.map((name) => `'${name}'`).join(', ');
}

/**
 * What the full check's open verifies, read at once: the metadata, and every table and index of the
 * schema (`present` is IDLE_SCHEMA_OBJECTS when none is missing).
 */
export const IDLE_SCHEMA_SQL = `SELECT
  (SELECT value FROM baton_meta WHERE key = 'app') AS app,
  (SELECT value FROM baton_meta WHERE key = 'schema_version') AS version,
  (SELECT count(*) FROM sqlite_master WHERE (type = 'table' AND name IN (${quoted(BATON_TABLES)}))
    OR (type = 'index' AND name IN (${quoted(SQLITE_INDEXES)}))) AS present`;

/** How many tables and indexes IDLE_SCHEMA_SQL counts in a complete schema. */
export const IDLE_SCHEMA_OBJECTS = BATON_TABLES.length + SQLITE_INDEXES.length;

/**
 * One read (bound `@now`) of what a check would act on, each from a partial index and by the rule
 * the store itself follows: a due step of a running run (the claim's condition; a waiting step whose
 * timeout came too), a lease that ran out, a hook call owed, a blocked run (reported, exit 1), a
 * schedule's slot come, a queued slot whose run ended. A step that waits and whose timeout has not
 * come is nothing to do: its timeout is a due time like any other.
 */
export const ANYTHING_TO_DO_SQL = `SELECT
  EXISTS (SELECT 1 FROM steps s INDEXED BY steps_due WHERE ${dueStepOfRunningRunSql('@now')})
  OR EXISTS (SELECT 1 FROM steps s INDEXED BY steps_leased WHERE ${leaseExpiredSql('@now')})
  OR EXISTS (SELECT 1 FROM hook_deliveries d INDEXED BY hook_deliveries_due WHERE ${hookCallDueSql('@now')})
  OR EXISTS (SELECT 1 FROM runs INDEXED BY runs_by_status WHERE status = 'blocked')
  OR EXISTS (SELECT 1 FROM schedules s INDEXED BY schedules_due WHERE ${slotDueSql('@now')})
  OR EXISTS (SELECT 1 FROM schedules s INDEXED BY schedules_queued WHERE ${queuedSlotFreeSql()})`;
