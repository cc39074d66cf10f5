/**
 * `when` on a workflow step: the daily competitor report's fix-report runs only when the quality
 * check failed; skipped, the steps after it still run, and `baton status` and `baton timeline`
 * say why it was skipped. Runs on a real SQLite home; the CLI is the built dist/cli/main.js.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { repoRoot } from './helpers/cli.js';

const run = promisify(execFile);
const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});
const open = () => {
  const home = mkdtempSync(join(tmpdir(), 'baton-when-'));
  homes.push(home);
  return Baton.open({ home, pollMs: 20 });
};

function dailyReport(calls: string[]) {
  return defineWorkflow<{ quality: string }>({ name: 'daily-report', inputs: { quality: null } })
    .step('analyse', () => ({ competitors: 3 }))
    .step('check', { dependsOn: ['analyse'] }, (ctx) => ({ passed: ctx.inputs.quality === 'good' }))
    .step('fix-report', { dependsOn: ['check'], when: 'steps.check.result.passed == false' }, () => {
      calls.push('fix-report');
      return 'fixed';
    })
    .step('send', { dependsOn: ['fix-report'] }, (ctx) => {
      calls.push('send');
      return ctx.results['fix-report'] ?? 'sent as it was';
    });
}

const cli = async (home: string, ...args: string[]) =>
  (await run(process.execPath, [join(repoRoot, 'dist/cli/main.js'), '--home', home, ...args])).stdout;

describe('when on a workflow step', () => {
  it('runs fix-report only when the check failed; skipped, send still runs; status and timeline say why', async () => {
    const calls: string[] = [];
    const baton = open();
    try {
      const poor = await baton.run(dailyReport(calls), { quality: 'poor' }, { runId: 'poor' });
      expect(calls).toEqual(['fix-report', 'send']);
      expect(poor).toMatchObject({ check: { passed: false }, 'fix-report': 'fixed', send: 'fixed' });
      calls.length = 0;
      const good = await baton.run(dailyReport(calls), { quality: 'good' }, { runId: 'good' });
      expect(calls).toEqual(['send']);
      expect(good).toMatchObject({ check: { passed: true }, send: 'sent as it was' });
    } finally {
      await baton.close();
    }
    const status = await cli(baton.home, 'status', 'good');
    // The skip's reason is filed under the table, apart from errors.
    expect(status).toMatch(/fix-report\s+skipped\s+0\s+-\s*\n/);
    expect(status).toContain('fix-report skipped: when steps.check.result.passed == false was false');
    const timeline = await cli(baton.home, 'timeline', 'good');
    expect(timeline).toMatch(/fix-report.*skipped: when steps\.check\.result\.passed == false was false/);
  });

  it('refuses a condition naming a step it does not depend on, before anything runs', () => {
    const wf = defineWorkflow({ name: 'bad' })
      .step('a', () => 1)
      .step('b', { when: 'steps.a.result == 1' }, () => 2);
    expect(() => wf.toPlan()).toThrow(
      'workflow bad: steps.b.when: names step "a", which "b" does not depend on: add "a" to steps.b.dependsOn',
    );
  });
});
