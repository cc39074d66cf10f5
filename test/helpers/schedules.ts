/**
 * Schedules in a test's SQLite home, on an injected clock: a schedule is stored as if it had been
 * added earlier, so its slots of that time are due now and no test waits for real time to pass.
 */
import { mkdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import { validatePlanObject } from '../../src/core/plan/parse.js';
import type { Plan } from '../../src/core/plan/types.js';
import type { ScheduleRules } from '../../src/core/schedule/schedule-rules.js';
import { databasePath } from '../../src/runtime/home.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

/**
 * Moves a stored schedule back in time by `ms` (a multiple of its interval), as if added `ms`
 * earlier: its cursor and its next slot both move, so the slots of the last `ms` are due now.
 */
export function scheduleAddedEarlier(home: string, name: string, ms: number): void {
  const db = new Database(databasePath(home));
  try {
    const { changes } = db
      .prepare(
        'UPDATE schedules SET cursor_at = cursor_at - ?, next_fire_at = next_fire_at - ? WHERE name = ?',
      )
      .run(ms, ms, name);
    if (changes !== 1) throw new Error(`no schedule named ${name} in ${home}`);
  } finally {
    db.close();
  }
}

/** A plan whose one step waits for an approval: a run of it starts no process. */
export const waitingPlan = validatePlanObject(
  { name: 'tick', steps: [{ id: 'ask', wait: { for: 'approval' } }] },
  'tick',
);

/**
 * Stores `count` schedules `<prefix>-<i>` of `plan` (default `waitingPlan`) in `home`'s store (made
 * if missing), with `rules`, as if added at `addedAt`: every slot from then to now is due.
 */
export async function addSchedules(
  home: string,
  workspace: string,
  options: { prefix: string; count: number; rules: ScheduleRules; addedAt: number; plan?: Plan },
): Promise<void> {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const store = SqliteStore.open(databasePath(home));
  try {
    for (let i = 0; i < options.count; i++) {
      await store.addSchedule({
        name: `${options.prefix}-${i}`,
        plan: options.plan ?? waitingPlan,
        planHash: 'h',
        inputs: {},
        workspace,
        rules: options.rules,
        now: options.addedAt,
      });
    }
  } finally {
    await store.close();
  }
}

/** The ids of the runs in `home`'s store. */
export async function storedRunIds(home: string): Promise<string[]> {
  const store = SqliteStore.open(databasePath(home));
  try {
    return (await store.listRuns({ limit: 100_000 })).map((run) => run.id);
  } finally {
    await store.close();
  }
}
