/**
 * Flow control's pure parts (keys, rates, the per-transaction gate) and the `baton flow` command's
 * answers to bad input: exit 2, one message naming the problem, nothing stored.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FlowGate, flowKeyOf, formatFlowRate, parseFlowRate } from '../src/core/flow.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { expectExit, removeTempDirs, runBaton, tempDir, writePlan } from './helpers/cli.js';
import { claimAsWorker, fixturePlan, planDir } from './helpers/plans.js';

afterAll(() => removeTempDirs());

const stepsOf = (steps: Record<string, unknown>[], defaults: Record<string, unknown> = {}) =>
  validatePlanObject({ name: 'keys', defaults, steps }, 'keys').steps;

describe('flow keys', () => {
  it("name a step's executor unless the plan names a key", () => {
    const steps = stepsOf([
      { id: 'a', instruction: 'x', agent: { command: ['/usr/local/bin/claude', '-p'] } },
      { id: 'b', instruction: 'x', agent: { command: ['codex', 'exec'] } },
      { id: 'c', instruction: 'x', agent: { command: ['C:\\tools\\gemini.cmd', '-p'] } },
      { id: 'd', instruction: 'x' },
      { id: 'e', model: { provider: 'anthropic', model: 'claude-sonnet-4-5', prompt: 'x' } },
      { id: 'f', fn: 'fetch' },
      { id: 'g', fn: 'fetch', flowKey: 'api/github' },
    ]);
    expect(steps.map((step) => flowKeyOf(step))).toEqual([
      'claude',
      'codex',
      'gemini',
      'agent',
      'anthropic',
      'fn:fetch',
      'api/github',
    ]);
  });

  it('take defaults.flowKey, and the fallback executor once the fallback runs', () => {
    const [step] = stepsOf(
      [{ id: 'a', instruction: 'x', agent: { command: ['claude'] }, fallback: { fn: 'template' } }],
      { flowKey: 'shared' },
    );
    expect(flowKeyOf(step!)).toBe('shared');
    expect(flowKeyOf(step!, true)).toBe('fn:template');
  });

  it('are checked in plans with a message naming the step', () => {
    expect(() => stepsOf([{ id: 'a', fn: 'x', flowKey: 'has space' }])).toThrow(
      /steps\[0\]\.flowKey|steps\.a\.flowKey/,
    );
  });
});

describe('flow rates', () => {
  it('parse <starts>/<window> in the usual spellings, and print back', () => {
    expect(parseFlowRate('10/1m', 'r')).toEqual({ count: 10, windowMs: 60_000 });
    expect(parseFlowRate('10/min', 'r')).toEqual({ count: 10, windowMs: 60_000 });
    expect(parseFlowRate('100/h', 'r')).toEqual({ count: 100, windowMs: 3_600_000 });
    expect(parseFlowRate('1/2m', 'r')).toEqual({ count: 1, windowMs: 120_000 });
    expect(parseFlowRate('5 / 30s', 'r')).toEqual({ count: 5, windowMs: 30_000 });
    expect(parseFlowRate('10/1min', 'r')).toEqual({ count: 10, windowMs: 60_000 });
    expect(parseFlowRate('5000/1hour', 'r')).toEqual({ count: 5000, windowMs: 3_600_000 });
    expect(parseFlowRate('3/2hours', 'r')).toEqual({ count: 3, windowMs: 7_200_000 });
    expect(parseFlowRate('1/90sec', 'r')).toEqual({ count: 1, windowMs: 90_000 });
    expect(parseFlowRate('1/day', 'r')).toEqual({ count: 1, windowMs: 86_400_000 });
    expect(formatFlowRate({ count: 1, windowMs: 120_000 })).toBe('1/2m');
    expect(formatFlowRate({ count: 3, windowMs: 1500 })).toBe('3/1500ms');
    for (const bad of ['10', '0/1m', '10/0s', '10/500ms', 'x/1m', '10/fortnight', '-1/1m']) {
      expect(() => parseFlowRate(bad, '--rate')).toThrow(/--rate: .* is not a rate/);
    }
  });
});

describe('the flow gate of one transaction', () => {
  it("counts the store's running attempts plus the transaction's own changes against the concurrency", () => {
    const gate = new FlowGate(
      [{ limit: { key: 'claude', concurrency: 2, rate: null }, running: 2, starts: [] }],
      1000,
    );
    expect(gate.allows('claude', 0)).toBe(false);
    // One of the two completed in this transaction: a slot is free.
    expect(gate.allows('claude', -1)).toBe(true);
    expect(gate.allows('unlimited', 99)).toBe(true);
    expect(gate.saturatedKeys(() => 0)).toEqual(['claude']);
  });

  it('admits up to the rate within the window, forgetting starts older than it', () => {
    const gate = new FlowGate(
      [
        {
          limit: { key: 'k', concurrency: null, rate: { count: 3, windowMs: 10_000 } },
          running: 0,
          starts: [1, 5000, 9000],
        },
      ],
      10_500,
    );
    // The start at 1 is out of the window (10_500 - 10_000): two count.
    expect(gate.allows('k', 0)).toBe(true);
    gate.started('k');
    expect(gate.allows('k', 0)).toBe(false);
    expect(gate.changedStarts()).toEqual([{ key: 'k', starts: [5000, 9000, 10_500] }]);
  });

  it('admits nothing under a limited key another transaction holds', () => {
    const gate = new FlowGate([], 1);
    gate.block('k');
    expect(gate.has('k')).toBe(true);
    expect(gate.allows('k', -5)).toBe(false);
    gate.add([{ limit: { key: 'k', concurrency: 1, rate: null }, running: 0, starts: [] }]);
    expect(gate.allows('k', 0)).toBe(true);
  });
});

describe('baton flow', () => {
  it('status names the flow key a due step waits for, and why', async () => {
    const { dir, home } = planDir('baton-flow-status-');
    // The fixture agent runs as `node <script>`: its key is `node`.
    const plan = writePlan(dir, fixturePlan([{ id: 'ask', instruction: 'go' }]));
    expectExit(await runBaton(['flow', 'set', 'node', '--concurrency', '1'], { home }), 0);
    for (const id of ['first', 'second'])
      expectExit(await runBaton(['run', plan, '--detach', '--id', id], { home }), 0);
    // A worker holds the only slot (claimed in process, never finished).
    const held = await claimAsWorker(home, 'busy-worker', 600_000);
    expect(held.map((c) => c.runId)).toEqual(['first']);
    const text = expectExit(await runBaton(['status', 'second'], { home }), 0).stdout;
    expect(text).toContain('ask is due and waits for flow key node: 1 of 1 running (baton flow list)');
    const json = JSON.parse(expectExit(await runBaton(['status', 'second', '--json'], { home }), 0).stdout);
    expect(json.flowWaits).toEqual([{ stepId: 'ask', key: 'node', reason: '1 of 1 running' }]);
    // check leaves it waiting: nothing to start while the slot is held.
    const check = expectExit(await runBaton(['check', '--json'], { home }), 0);
    expect(JSON.parse(check.stdout)).toMatchObject({ attemptsStarted: 0 });
  });

  it('refuses bad limits with exit 2 and one message, and stores nothing', async () => {
    const home = join(tempDir('baton-flow-cli-'), 'home');
    const cases: [string[], RegExp][] = [
      [['flow', 'set', 'has space', '--concurrency', '2'], /flow key "has space"/],
      [['flow', 'set', 'claude', '--concurrency', '0'], /--concurrency: expected a whole number/],
      [['flow', 'set', 'claude', '--rate', 'ten per minute'], /--rate: "ten per minute" is not a rate/],
      [['flow', 'set', 'claude'], /give a concurrency, a rate or both/],
      [['flow', 'rm', 'claude'], /flow claude: no limit is set/],
    ];
    for (const [args, message] of cases) {
      const result = expectExit(await runBaton(args, { home }), 2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    const listed = expectExit(await runBaton(['flow', 'list', '--json'], { home }), 0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    expectExit(
      await runBaton(['flow', 'set', 'claude', '--concurrency', '2', '--rate', '10/min'], { home }),
      0,
    );
    const text = expectExit(await runBaton(['flow', 'list'], { home }), 0).stdout;
    expect(text).toMatch(/claude\s+0\/2\s+0 of 10\/1m/);
  });
});
