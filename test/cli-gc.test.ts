/**
 * `baton gc` over a history larger than one batch: every eligible run goes (in batches), nothing
 * else does, and the space comes back: a new database returns it to the file system at once
 * (auto_vacuum=INCREMENTAL), an older one keeps it on the freelist for later rows until
 * `baton gc --vacuum`. Real SQLite files, the real CLI.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { batonJson, removeTempDirs, tempDir } from './helpers/cli.js';

const DAY = 86_400_000;
/** More than one of gc's batches (500 runs). */
const OLD_RUNS = 1_800;
const plan = validatePlanObject({ name: 'live', steps: [{ id: 's', fn: 'noop' }] }, 'gc');

afterAll(() => removeTempDirs());

/** `count` runs finished 40 days ago, with 5 steps, 5 attempts and 2 events each (bulk SQL). */
function insertOldRuns(db: Database.Database, count: number, prefix: string): void {
  const at = Date.now() - 40 * DAY;
  const g = `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${count})`;
  const k = 'k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < 5)';
  const id = `'${prefix}' || printf('%06d', n)`;
  const filler = `'${'x'.repeat(400)}'`;
  db.exec(`BEGIN;
    ${g} INSERT INTO runs (id, plan_name, plan_hash, inputs_json, workspace, status, created_at, updated_at, finished_at)
      SELECT ${id}, 'history', 'h', '{}', '/w', CASE n % 3 WHEN 0 THEN 'failed' WHEN 1 THEN 'succeeded' ELSE 'cancelled' END,
        ${at}, ${at}, ${at} FROM g;
    ${g} INSERT INTO run_plans (run_id, plan_json) SELECT ${id}, '{}' FROM g;
    ${g}, ${k} INSERT INTO steps (run_id, step_id, position, status, updated_at, result_json)
      SELECT ${id}, 's' || j, j - 1, 'succeeded', ${at}, ${filler} FROM g, k;
    ${g}, ${k} INSERT INTO attempts (run_id, step_id, attempt, outcome, summary)
      SELECT ${id}, 's' || j, 1, 'succeeded', ${filler} FROM g, k;
    ${g} INSERT INTO events (run_id, at, type, data_json)
      SELECT ${id}, ${at}, t, '{}' FROM g, (SELECT 'run.created' AS t UNION ALL SELECT 'run.succeeded');
    COMMIT;`);
}

/** Runs gc must keep: one still running, one blocked long ago, one finished yesterday. */
async function insertKeptRuns(path: string): Promise<string[]> {
  const store = SqliteStore.open(path);
  const old = Date.now() - 40 * DAY;
  for (const id of ['keep-running', 'keep-blocked', 'keep-recent']) {
    await store.createRun({ id, plan, planHash: 'h', inputs: {}, workspace: '/ws', now: old });
  }
  await store.cancelRun('keep-recent', Date.now() - DAY);
  await store.close();
  const db = new Database(path);
  db.prepare("UPDATE runs SET status = 'blocked', finished_at = ? WHERE id = 'keep-blocked'").run(old);
  db.close();
  return ['keep-blocked', 'keep-recent', 'keep-running'];
}

/** The database's size on disk once no connection holds it (its WAL checkpointed into it). */
const fileBytes = (path: string) => statSync(path).size;

function inspect(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;
    return {
      runs: db.prepare('SELECT id FROM runs ORDER BY id').pluck().all() as string[],
      orphanSteps: count('SELECT count(*) FROM steps WHERE run_id NOT IN (SELECT id FROM runs)'),
      orphanEvents: count('SELECT count(*) FROM events WHERE run_id NOT IN (SELECT id FROM runs)'),
      keptSteps: count("SELECT count(*) FROM steps WHERE run_id LIKE 'keep-%'"),
      autoVacuum: count('PRAGMA auto_vacuum'),
      freePages: count('PRAGMA freelist_count'),
    };
  } finally {
    db.close();
  }
}

const gc = (home: string, ...extra: string[]) =>
  batonJson<{ runs: string[]; dryRun: boolean; vacuumed: boolean }>(['gc', '--older-than', '30d', ...extra], {
    home,
  });

describe('baton gc over a long history', () => {
  it('removes every eligible run in batches, keeps the others, and the file shrinks', async () => {
    const home = tempDir('baton-gc-');
    const path = join(home, 'baton.db');
    const kept = await insertKeptRuns(path);
    const db = new Database(path);
    insertOldRuns(db, OLD_RUNS, 'old');
    db.close();
    mkdirSync(join(home, 'runs', 'old000007'), { recursive: true });
    mkdirSync(join(home, 'runs', 'keep-recent'), { recursive: true });
    const eligible = Array.from({ length: OLD_RUNS }, (_, i) => `old${String(i + 1).padStart(6, '0')}`);

    const dry = await gc(home, '--dry-run');
    expect(dry.runs).toEqual(eligible);
    expect(inspect(path).runs).toHaveLength(OLD_RUNS + kept.length);

    const before = fileBytes(path);
    expect(inspect(path).autoVacuum).toBe(2);
    const report = await gc(home);
    expect(report).toMatchObject({ dryRun: false, vacuumed: false });
    expect(report.runs).toEqual(eligible);
    const after = inspect(path);
    expect(after.runs).toEqual(kept);
    expect(after).toMatchObject({ orphanSteps: 0, orphanEvents: 0, keptSteps: 3, freePages: 0 });
    expect(existsSync(join(home, 'runs', 'old000007'))).toBe(false);
    expect(existsSync(join(home, 'runs', 'keep-recent'))).toBe(true);
    // The pages of ~9,000 rows of 400 bytes went back to the file system.
    expect(fileBytes(path)).toBeLessThan(before / 4);
    expect((await gc(home)).runs).toEqual([]);
  }, 120_000);

  it('in a database made before schema 6: the space is reused, and --vacuum gives it back', async () => {
    const home = tempDir('baton-gc-old-');
    const path = join(home, 'baton.db');
    await insertKeptRuns(path);
    const db = new Database(path);
    // As a home made by an older Baton: no auto_vacuum (the mode changes only through VACUUM).
    db.exec('PRAGMA auto_vacuum = NONE; VACUUM;');
    insertOldRuns(db, OLD_RUNS, 'old');
    db.close();
    expect(inspect(path).autoVacuum).toBe(0);
    const before = fileBytes(path);

    expect((await gc(home)).runs).toHaveLength(OLD_RUNS);
    const freed = inspect(path);
    expect(freed.freePages).toBeGreaterThan(100);
    expect(fileBytes(path)).toBe(before);
    // New rows take the free pages rather than growing the file.
    const again = new Database(path);
    insertOldRuns(again, OLD_RUNS / 2, 'new');
    again.close();
    expect(inspect(path).freePages).toBeLessThan(freed.freePages);
    expect(fileBytes(path)).toBe(before);

    const vacuumed = await gc(home, '--vacuum');
    expect(vacuumed).toMatchObject({ vacuumed: true });
    expect(vacuumed.runs).toHaveLength(OLD_RUNS / 2);
    expect(inspect(path)).toMatchObject({ autoVacuum: 2, freePages: 0, keptSteps: 3 });
    expect(inspect(path).runs).toHaveLength(3);
    expect(fileBytes(path)).toBeLessThan(before / 4);
  }, 120_000);
});
