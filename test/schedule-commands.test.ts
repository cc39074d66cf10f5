/**
 * The schedule commands of the runtime (every door's `schedule update`) on a real SQLite store:
 * what an update does not give (the plan, its inputs, its workspace) is copied as it is stored,
 * never as the masking boundary answers it, so a secret in a plan survives a change of its timing;
 * the answer is masked.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { commandContext } from '../src/runtime/commands/context.js';
import { addSchedule, updateSchedule } from '../src/runtime/commands/schedule-commands.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { removeTempDirs, tempDir } from './helpers/cli.js';

afterEach(() => removeTempDirs());

const SECRET = 'sk-sched-update-4e9a1c7b3d';
const HOOK_URL = 'http://127.0.0.1:9/notify-update-8b2d6f1a';
const env = { DEPLOY_PHRASE: SECRET, BATON_SECRET_ENV: 'DEPLOY_PHRASE', NOTIFY_TARGET: HOOK_URL };

describe('updateSchedule', () => {
  it('keeps the stored plan and inputs as they are when only the timing changes; answers them masked', async () => {
    const home = tempDir('baton-sched-update-');
    mkdirSync(home, { recursive: true });
    const store = SqliteStore.open(join(home, 'baton.db'));
    try {
      const ctx = commandContext({ store, home, env });
      const plan = validatePlanObject(
        {
          name: 'report',
          inputs: { topic: null },
          steps: [{ id: 'fetch', instruction: `fetch with the phrase ${SECRET}` }],
          hooks: [{ on: ['failed'], urlEnv: 'NOTIFY_TARGET' }],
        },
        'plan.json',
      );
      const snapshot = {
        plan,
        planHash: 'hash-1',
        inputs: { topic: `news for ${HOOK_URL}` },
        workspace: home,
      };
      await addSchedule(ctx, { name: 'daily', snapshot, options: { every: '1h' } });

      const { view } = await updateSchedule(ctx, {
        name: 'daily',
        options: { every: '2h' },
        runOptionsGiven: false,
      });
      expect(view.timing).toBe('every 2h');
      expect(JSON.stringify(view)).not.toContain(SECRET);
      expect(JSON.stringify(view)).not.toContain(HOOK_URL);

      const stored = await store.getSchedule('daily');
      expect(stored?.plan.steps[0]?.instruction).toBe(`fetch with the phrase ${SECRET}`);
      expect(stored?.inputs).toEqual({ topic: `news for ${HOOK_URL}` });
      expect(stored?.planHash).toBe('hash-1');
    } finally {
      await store.close();
    }
  });
});
