import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { Engine } from '../src/engine/engine.js';
import { startRun } from '../src/engine/start-run.js';
import { AgentCliExecutor } from '../src/executors/agent-cli-executor.js';
import { FunctionExecutor, FunctionRegistry } from '../src/executors/function-executor.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { agentCommand } from './helpers/cli.js';

describe('what agents inherit', () => {
  it('never the database URL (it may hold a password); the rest of the environment and BATON_* ids', async () => {
    const home = mkdtempSync(join(tmpdir(), 'baton-env-'));
    const store = SqliteStore.open(join(home, 'baton.db'));
    try {
      const plan = validatePlanObject(
        {
          name: 'env',
          defaults: { agent: { command: agentCommand('agent-print-env') } },
          steps: [
            { id: 'db', instruction: 'BATON_DATABASE_URL' },
            { id: 'other', instruction: 'SOME_SETTING' },
            { id: 'key', instruction: 'BATON_IDEMPOTENCY_KEY' },
          ],
        },
        'test',
      );
      await startRun(store, { plan, runId: 'e1', workspace: home });
      const env = {
        ...process.env,
        BATON_DATABASE_URL: 'postgres://baton:hunter2@db.example/baton',
        SOME_SETTING: 'kept',
      };
      await new Engine({
        store,
        home,
        owner: 't',
        executors: { agent: new AgentCliExecutor({ env }), fn: new FunctionExecutor(new FunctionRegistry()) },
      }).run({ kind: 'until-settled', runId: 'e1' });
      const results = await store.getStepResults('e1', ['db', 'other', 'key']);
      expect(results.db?.summary).toBe('BATON_DATABASE_URL=(unset)');
      expect(results.other?.summary).toBe('SOME_SETTING=kept');
      expect(results.key?.summary).toBe('BATON_IDEMPOTENCY_KEY=e1:key');
    } finally {
      await store.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
