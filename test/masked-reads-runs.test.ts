/**
 * A long-lived masked store (the MCP server's, the console's) on a real SQLite file: a run asked
 * for before it exists, then stored (by this process or another), is masked with its own plan's
 * secret variables (a hook's urlEnv), not with the process's alone that its absence was read with.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { prepareRun } from '../src/runtime/commands/start-commands.js';
import { maskedReads } from '../src/runtime/masked-reads.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { removeTempDirs, tempDir } from './helpers/cli.js';

afterEach(() => removeTempDirs());

/** Secret only because the plan names its variable: NOTIFY_TARGET is no secret-looking name. */
const HOOK_URL = 'http://127.0.0.1:9/notify-later-3c8e1f5a7b';
const env = { NOTIFY_TARGET: HOOK_URL };

describe('maskedReads', () => {
  it('masks a run stored after it was asked for by its own plan', async () => {
    const dir = tempDir('baton-masked-later-');
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    const store = SqliteStore.open(join(home, 'baton.db'));
    try {
      const masked = maskedReads(store, env);
      expect(await masked.getRun('later')).toBeNull();
      expect(await masked.getEvents('later')).toEqual([]);

      const plan = validatePlanObject(
        {
          name: 'notify',
          inputs: { topic: null },
          steps: [{ id: 'gate', wait: { for: 'approval' } }],
          hooks: [{ on: ['failed'], urlEnv: 'NOTIFY_TARGET' }],
        },
        'plan.json',
      );
      const prepared = prepareRun(
        { home, env },
        { plan, runId: 'later', workspace: dir, inputs: { topic: `post to ${HOOK_URL}` } },
      );
      await store.createRun(prepared.run);

      const run = await masked.getRun('later');
      expect(run?.inputs.topic).toMatch(/^post to /);
      expect(JSON.stringify(run)).not.toContain(HOOK_URL);
      expect(JSON.stringify(await masked.getEvents('later'))).not.toContain(HOOK_URL);
    } finally {
      await store.close();
    }
  });
});
