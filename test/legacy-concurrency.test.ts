/**
 * Several `baton check <state.json>` processes at once on one file (overlapping heartbeats, an
 * agent calling the check while cron does too): one drives the file, the others leave it alone, and
 * every step runs exactly once.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { countByStep, readCounts, removeTempDirs, runBaton, stopProcesses, tempDir } from './helpers/cli.js';
import {
  legacyAgent,
  legacyState,
  readState,
  reportOf,
  statuses,
  stepIds,
  tmpFilesIn,
  writeState,
} from './helpers/legacy.js';

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

const PROCESSES = 5;
const STEPS = stepIds(6);

describe('concurrent checks on one state file', () => {
  it(`${PROCESSES} checks at once, in rounds until DONE: every step runs exactly once`, async () => {
    const dir = tempDir('baton-legacy-conc-');
    const countFile = join(dir, 'count.txt');
    const statePath = writeState(dir, legacyState(STEPS));
    const env = { STEP_AGENT_CMD: legacyAgent('agent-count'), COUNT_FILE: countFile, SLEEP_MS: '50' };
    const outcomes: string[][] = [];
    for (let round = 1; round <= 6; round++) {
      const results = await Promise.all(
        Array.from({ length: PROCESSES }, () => runBaton(['check', statePath, '--json'], { env })),
      );
      for (const result of results) expect(result.code, result.stderr).toBe(0);
      outcomes.push(results.map((result) => reportOf(result).outcome).sort());
      // Whole and consistent after every round.
      const state = readState(statePath);
      expect(Array.isArray(state.stepQueue)).toBe(true);
      expect(state.blockers).toEqual([]);
      const done = Object.values(statuses(state)).filter((status) => status === 'DONE').length;
      expect(state.currentStep).toBeLessThanOrEqual(done);
      expect(tmpFilesIn(dir)).toEqual([]);
      if (state.status === 'DONE') break;
    }
    console.info(`outcomes per round: ${JSON.stringify(outcomes)}`);
    const state = readState(statePath);
    expect(state.status, `outcomes per round: ${JSON.stringify(outcomes)}`).toBe('DONE');
    expect(state.currentStep).toBe(STEPS.length);
    for (const id of STEPS) expect(state.stepRuns[id]).toMatchObject({ status: 'DONE', tries: 1 });
    const lines = readCounts(countFile);
    const counts = countByStep(lines);
    expect(lines).toHaveLength(STEPS.length);
    for (const id of STEPS) expect(counts.get(`${lines[0]!.run} ${id}`), `${id} ran`).toBe(1);
    // In each round at most one check drove the file; the others found it busy (or nothing to do).
    for (const round of outcomes) {
      const drivers = round.filter((outcome) => outcome === 'progressed' || outcome === 'finished');
      expect(drivers.length, JSON.stringify(round)).toBeLessThanOrEqual(1);
    }
  });
});
