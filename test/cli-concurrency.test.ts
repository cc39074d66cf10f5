/**
 * `baton check` is documented as safe to run several at once: concurrent checks on one home share
 * the work through leases, and no step runs twice.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  agentCommand,
  type BatonResult,
  batonJson,
  countByStep,
  expectExit,
  readCounts,
  removeTempDirs,
  runBaton,
  stopProcesses,
  tempDir,
  writePlan,
} from './helpers/cli.js';

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

const RUN_IDS = ['r1', 'r2', 'r3'];
const STEP_IDS = ['fetch', 'left', 'right', 'extra', 'merge'];

/** fetch -> (left, right, extra in parallel) -> merge (after left and right). */
const diamondPlan = {
  name: 'concurrency-test',
  defaults: {
    agent: { command: agentCommand('agent-count') },
    retry: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 50 },
  },
  steps: [
    { id: 'fetch', instruction: 'fetch' },
    { id: 'left', instruction: 'left', dependsOn: ['fetch'] },
    { id: 'right', instruction: 'right', dependsOn: ['fetch'] },
    { id: 'extra', instruction: 'extra', dependsOn: ['fetch'] },
    { id: 'merge', instruction: 'merge', dependsOn: ['left', 'right'] },
  ],
};

interface RunListEntry {
  id: string;
  status: string;
}

function describeFailures(results: readonly BatonResult[]): string {
  return results
    .filter((r) => r.code !== 0)
    .map((r) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`)
    .join('\n---\n');
}

describe('concurrent baton check processes', () => {
  it('drive 3 runs of 5 steps to the end with every step run exactly once', async () => {
    const dir = tempDir('baton-cli-concurrency-');
    const home = join(dir, 'home');
    const countFile = join(dir, 'counts');
    const env = { COUNT_FILE: countFile, SLEEP_MS: '50' };
    const file = writePlan(dir, diamondPlan);
    for (const id of RUN_IDS) {
      expectExit(await runBaton(['run', file, '--id', id, '--detach'], { home, env }), 0);
    }
    expect(readCounts(countFile)).toEqual([]);

    let rounds = 0;
    let statuses: RunListEntry[] = [];
    while (rounds < 20) {
      rounds++;
      const results = await Promise.all(
        Array.from({ length: 5 }, () => runBaton(['check', '--quiet'], { home, env })),
      );
      expect(describeFailures(results)).toBe('');
      statuses = await batonJson<RunListEntry[]>(['status'], { home });
      if (statuses.every((run) => run.status === 'succeeded')) break;
    }
    expect(statuses.map((run) => [run.id, run.status]).sort()).toEqual(
      RUN_IDS.map((id) => [id, 'succeeded']),
    );

    const lines = readCounts(countFile);
    const counts = countByStep(lines);
    const expected = RUN_IDS.flatMap((run) => STEP_IDS.map((step) => `${run} ${step}`)).sort();
    expect([...counts.keys()].sort()).toEqual(expected);
    for (const [key, n] of counts) expect({ key, n }).toEqual({ key, n: 1 });
    expect(lines.every((line) => line.attempt === 1)).toBe(true);
  }, 120_000);

  it('lets 5 processes open a fresh home at once (creating and migrating the database)', async () => {
    const dir = tempDir('baton-cli-fresh-');
    const home = join(dir, 'home');
    // Commands that write create the home; a check with nothing to do makes none.
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => runBaton(['flow', 'set', `k${i}`, '--concurrency', '1'], { home })),
    );
    expect(describeFailures(results)).toBe('');
    expect(await batonJson<RunListEntry[]>(['status'], { home })).toEqual([]);
    const limits = await batonJson<{ key: string }[]>(['flow', 'list'], { home });
    expect(limits.map((limit) => limit.key).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4']);
    expect(expectExit(await runBaton(['check'], { home }), 0).stdout).toBe('nothing due\n');
  }, 60_000);
});
