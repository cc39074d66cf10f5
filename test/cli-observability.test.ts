/** `baton timeline` draws a Gantt chart; `baton export` writes the event log as JSON lines. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ganttChart } from '../src/cli/gantt.js';
import type { StoredEvent } from '../src/core/events.js';
import {
  agentCommand,
  expectExit,
  removeTempDirs,
  runBaton,
  stopProcesses,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { planDir } from './helpers/plans.js';

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

const at = (type: string, stepId: string, t: number, extra: object = {}) =>
  ({ type, stepId, at: t, seq: t, runId: 'r', attempt: 1, ...extra }) as unknown as StoredEvent;

describe('ganttChart', () => {
  it('draws each attempt on a shared time scale: failed ▒, succeeded █', () => {
    const events = [
      at('step.started', 'a', 0),
      at('step.failed', 'a', 100),
      at('step.started', 'a', 200),
      at('step.succeeded', 'a', 400),
      at('step.started', 'b', 400),
      at('step.succeeded', 'b', 800),
    ];
    const [a, b, scale] = ganttChart(events, ['a', 'b'], 800);
    expect(a).toMatch(/^a {4}\|▒{7} +█{12,13} +\| 2 attempts$/);
    expect(b).toMatch(/^b {4}\| {24}█{24}\| 1 attempt$/);
    expect(scale).toMatch(/0 +800 ms$/);
  });
});

describe('timeline and export', () => {
  it('timeline ends with the chart; export writes every event as one JSON line', async () => {
    const { dir, home } = planDir();
    const file = writePlan(dir, {
      name: 'obs',
      defaults: {
        agent: { command: agentCommand('agent-succeed') },
        retry: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 20 },
      },
      steps: [
        { id: 'flaky', instruction: 'x', agent: { command: agentCommand('agent-flaky') } },
        { id: 'after', instruction: 'y', dependsOn: ['flaky'] },
      ],
    });
    expectExit(
      await runBaton(['run', file, '--id', 'o1'], { home, env: { FLAKY_COUNTER: join(dir, 'flaky.count') } }),
      0,
    );
    const text = expectExit(await runBaton(['timeline', 'o1'], { home }), 0).stdout;
    expect(text).toMatch(/flaky +\|[▒ ]*▒[▒ ]*█+ *\| 2 attempts/);
    expect(text).toMatch(/after +\| +█+ *\| 1 attempt/);
    const exported = expectExit(await runBaton(['export', 'o1'], { home }), 0)
      .stdout.trim()
      .split('\n');
    const events = await timeline(home, 'o1');
    expect(exported.map((line) => JSON.parse(line))).toEqual(events);
    const out = join(dir, 'events.jsonl');
    expectExit(await runBaton(['export', 'o1', '--output', out], { home }), 0);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toEqual(exported);
  });
});
