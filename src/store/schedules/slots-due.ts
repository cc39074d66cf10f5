import { UNFINISHED_RUN_SQL } from '../unfinished-runs.js';

/**
 * When a schedule has a slot to decide, in SQL for both dialects and `baton check`'s idle read:
 * written here once (light imports only; the idle read bundles it). The `schedules` row is `s`.
 * A paused schedule has no next slot (`next_fire_at` null): store/schedules/schedule-rows.ts
 * (`storedNextFire`) is where that is decided.
 */

/** The schedule `s` has a slot come by `dueBy`: its next slot (the partial index schedules_due). */
export function slotDueSql(dueBy: string): string {
  return `s.next_fire_at IS NOT NULL AND s.next_fire_at <= ${dueBy}`;
}

/**
 * The schedule `s`, not paused, has a slot queued behind a run that has ended: the slot starts now
 * (the partial index schedules_queued). `runs`: the runs table, schema-qualified in PostgreSQL.
 */
export function queuedSlotFreeSql(runs = 'runs'): string {
  return `s.queued_slot_at IS NOT NULL AND NOT s.paused
    AND NOT EXISTS (SELECT 1 FROM ${runs} r WHERE r.id = s.last_run_id AND r.status IN ${UNFINISHED_RUN_SQL})`;
}
