/**
 * The console's actions are translations of the runtime's commands (runtime/commands/): it takes
 * an approval's delay as `baton approve --delay` does (`none` in any case, `0`, ms or a duration),
 * through the one parser of a delay. (That everything it answers is masked: console-masking.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { csrfOf, startTestConsole, withSession } from './helpers/console.js';

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: withSession({ 'content-type': 'application/x-www-form-urlencoded' }),
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

describe('console: actions as the runtime commands take them', () => {
  let dir: string;
  let store: SqliteStore;
  let console: RunningConsole;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-console-commands-'));
    store = SqliteStore.open(join(dir, 'baton.db'));
    console = await startTestConsole(store, join(dir, 'home'));
  });
  afterEach(async () => {
    await console.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('approves a proposed run with the delay "None", as baton approve --delay takes it', async () => {
    const plan = validatePlanObject(
      {
        name: 'proposal',
        steps: [
          { id: 'a', fn: 'noop' },
          { id: 'b', fn: 'noop', dependsOn: ['a'] },
        ],
      },
      'proposal',
    );
    const run = { plan, planHash: 'h', inputs: {}, workspace: dir, now: 1000, awaitingApproval: true };
    await store.createRun({ ...run, id: 'p1' });
    await store.createRun({ ...run, id: 'p2' });
    const csrf = await csrfOf(console.origin, '/inbox');
    const approved = await fetch(`${console.origin}/runs/p1/approve`, form({ csrf, delay: 'None' }));
    expect(approved.status).toBe(303);
    expect((await store.getRun('p1'))?.status).toBe('running');
    const event = (await store.getEvents('p1')).find((e) => e.type === 'run.approved');
    expect(event).toMatchObject({ delayMs: 0 });
    // A delay that is none of those is refused, naming the field, and nothing changes.
    const refused = await fetch(`${console.origin}/runs/p2/approve`, form({ csrf, delay: 'soon' }));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('delay: ');
    expect((await store.getRun('p2'))?.status).toBe('awaiting_approval');
  });
});
