/**
 * Running a plan (agent, model and fn steps, not a defineWorkflow) from code: `baton.startPlan`,
 * awaited with `baton.result`, the public replacement for the engine and `startRun`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { loadPlanFile } from '../src/workflow/load-plan-file.js';
import { agentCommand, writePlan } from './helpers/cli.js';

const dirs: string[] = [];
const tempHome = () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-plan-api-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const notesPlan = (dir: string) =>
  writePlan(dir, {
    name: 'notes',
    inputs: { topic: {} },
    steps: [
      {
        id: 'fetch',
        agent: { command: agentCommand('agent-succeed') },
        instruction: 'fetch notes on {{inputs.topic}}',
      },
      { id: 'shout', dependsOn: ['fetch'], fn: 'shout' },
    ],
  });

describe('baton.startPlan', () => {
  it('runs a plan file with an agent step and a registered fn step to its results', async () => {
    const dir = tempHome();
    const { plan } = await loadPlanFile(notesPlan(dir));
    const baton = Baton.open({ home: join(dir, '.baton'), pollMs: 20 });
    try {
      baton.functions.register('shout', (ctx) => String(ctx.results.fetch?.summary).toUpperCase());
      const started = await baton.startPlan(plan, { topic: 'otters' }, { runId: 'notes-1' });
      expect(started).toEqual({ runId: 'notes-1', created: true });
      const results = await baton.result('notes-1');
      expect(results.fetch).toMatch(/^ok: .*fetch notes on otters/s);
      expect(results.shout).toBe(String(results.fetch).toUpperCase());
      const run = await baton.store.getRun('notes-1');
      expect(run?.status).toBe('succeeded');
      // No workspace in the plan or the options: the Baton home, as for workflows.
      expect(run?.workspace).toBe(baton.home);
    } finally {
      await baton.close();
    }
  });

  it('is idempotent by run id, and refuses a run id that belongs to another plan', async () => {
    const dir = tempHome();
    const { plan } = await loadPlanFile(notesPlan(dir));
    const baton = Baton.open({ home: join(dir, '.baton'), pollMs: 20 });
    try {
      baton.functions.register('shout', () => 'LOUD');
      await baton.startPlan(plan, { topic: 'otters' }, { runId: 'n1' });
      await baton.result('n1');
      expect(await baton.startPlan(plan, { topic: 'otters' }, { runId: 'n1' })).toEqual({
        runId: 'n1',
        created: false,
      });
      expect(await baton.store.getAttempts('n1')).toHaveLength(2);
      const other = defineWorkflow({ name: 'other' }).step('a', () => 1);
      await expect(baton.start(other, {}, { runId: 'n1' })).rejects.toThrow(
        'a run with id "n1" already exists and is not this run: its plan is named "notes", this one "other"',
      );
    } finally {
      await baton.close();
    }
  });

  it('refuses, storing nothing, a plan naming a function not registered or an agent command the policy refuses', async () => {
    const dir = tempHome();
    const { plan } = await loadPlanFile(notesPlan(dir));
    const baton = Baton.open({ home: join(dir, '.baton'), pollMs: 20 });
    try {
      baton.functions.register('whisper', () => 'quiet');
      const missing = await baton.startPlan(plan, { topic: 'otters' }, { runId: 'm1' }).catch((e) => e);
      expect(isBatonError(missing, 'CONFIG_INVALID')).toBe(true);
      expect(missing.message).toBe(
        'plan notes: step(s) shout (fn: shout) call a function this Baton has not registered: baton.functions.register(name, fn) before starting the run (registered: whisper)',
      );
      const shell = validatePlanObject(
        { name: 'shell', steps: [{ id: 'a', agent: { command: ['sh', '-c'] }, instruction: 'hi' }] },
        'shell-plan',
      );
      const refused = await baton.startPlan(shell, {}, { runId: 's1' }).catch((e) => e);
      expect(isBatonError(refused, 'AGENT_CMD_REFUSED')).toBe(true);
      expect(await baton.store.getRun('m1')).toBeNull();
      expect(await baton.store.getRun('s1')).toBeNull();
    } finally {
      await baton.close();
    }
  });

  it("resolves the plan's relative workspace from planPath's folder; the workspace option overrides it", async () => {
    const dir = tempHome();
    const file = writePlan(dir, {
      name: 'ws',
      workspace: 'work',
      steps: [{ id: 'a', fn: 'noop' }],
    });
    const { plan, absPath } = await loadPlanFile(file);
    const baton = Baton.open({ home: join(dir, '.baton'), pollMs: 20 });
    try {
      baton.functions.register('noop', () => 'done');
      await baton.startPlan(plan, {}, { runId: 'w1', planPath: absPath });
      await baton.startPlan(plan, {}, { runId: 'w2', workspace: join(dir, 'elsewhere') });
      expect((await baton.store.getRun('w1'))?.workspace).toBe(join(dir, 'work'));
      expect((await baton.store.getRun('w2'))?.workspace).toBe(join(dir, 'elsewhere'));
      expect(await baton.result('w1')).toEqual({ a: 'done' });
    } finally {
      await baton.close();
    }
  });
});
