/**
 * The summary `baton propose` shows the person who approves a plan (the MCP server's `propose` and
 * a schedule's summary use the same text): besides each step's instruction it names every wait,
 * condition, fan-out, fallback and step with a side effect, and the plan's hooks, so that a plan
 * that sends mail cannot be approved without saying so.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { agentCommand, expectExit, removeTempDirs, runBaton, writePlan } from './helpers/cli.js';
import { planDir } from './helpers/plans.js';

afterAll(() => removeTempDirs());

/** The daily competitor report, as a new user wrote it from the docs. */
const dailyReport = {
  name: 'competitor-report',
  defaults: { agent: { command: agentCommand('agent-succeed') } },
  steps: [
    {
      id: 'research',
      instruction: 'List the competitors in competitors.json',
      resultFile: 'competitors.json',
    },
    {
      id: 'summarise',
      dependsOn: ['research'],
      forEach: { items: 'steps.research.result.names', as: 'name', maxItems: 20, concurrency: 4 },
      instruction: 'Summarise the news of {{name}}',
    },
    {
      id: 'check',
      dependsOn: ['summarise'],
      instruction: 'Check the summaries; write check.json',
      resultFile: 'check.json',
    },
    {
      id: 'fix-report',
      dependsOn: ['check'],
      when: 'steps.check.result.passed == false',
      instruction: 'Fix what the check found',
    },
    {
      id: 'approve-send',
      dependsOn: ['fix-report'],
      wait: { for: 'approval', prompt: 'Send the report to the team?', timeout: '8h', onTimeout: 'skip' },
    },
    {
      id: 'send',
      dependsOn: ['approve-send'],
      instruction: 'Mail report.md to team@example.com',
      sideEffect: 'unsafe',
      fallback: { instruction: 'Post report.md to the team channel instead' },
    },
  ],
  hooks: [{ on: ['blocked', 'succeeded'], urlEnv: 'TEAM_WEBHOOK_URL' }],
};

describe('the propose summary', () => {
  it('names every wait, condition, fan-out, fallback, side effect and hook of the plan', async () => {
    const { dir, home } = planDir('baton-propose-summary-');
    const file = writePlan(dir, dailyReport);
    const { stdout } = expectExit(await runBaton(['propose', file, '--id', 'p1'], { home }), 0);
    const lines = stdout.split('\n');
    /** The lines under step `n` of the list, up to the next step. */
    const under = (n: number) => {
      const start = lines.findIndex((line) => line.startsWith(`  ${n}. `));
      const end = lines.findIndex((line, i) => i > start && !line.startsWith('     '));
      return lines.slice(start + 1, end).map((line) => line.trim());
    };
    expect(under(2)).toContain('runs once per item of steps.research.result.names (at most 20, 4 at a time)');
    expect(under(4)).toContain('runs only when steps.check.result.passed == false (else it is skipped)');
    // A wait has no instruction: its prompt is what the step does, and its timeout what happens then.
    expect(under(5)).toEqual([
      'waits for a person to approve: Send the report to the team? (after 8 h 0 m it is skipped)',
    ]);
    expect(under(6)).toEqual([
      'Mail report.md to team@example.com',
      'if it cannot succeed: Post report.md to the team channel instead',
      'side effect: acts outside the workspace (unsafe: an attempt cut short is not repeated, a person decides)',
    ]);
    expect(lines).toContain('Side effects: send (unsafe).');
    expect(lines).toContain('Waits: approve-send (for approval).');
    expect(lines).toContain('Hook on blocked, succeeded: posts to the URL in TEAM_WEBHOOK_URL.');
    // Nothing in the summary is an empty line inside the step list.
    expect(lines.filter((line) => /^ +$/.test(line))).toEqual([]);
  });

  it('says when no step declares a side effect', async () => {
    const { dir, home } = planDir('baton-propose-plain-');
    const file = writePlan(dir, { ...dailyReport, steps: dailyReport.steps.slice(0, 1), hooks: [] });
    const { stdout } = expectExit(await runBaton(['propose', file, '--id', 'p2'], { home }), 0);
    expect(stdout).toContain('No step declares a side effect (sideEffect).');
    expect(stdout).not.toContain('Waits:');
  });
});
