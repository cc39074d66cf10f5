/**
 * Real crashes: a `baton worker` is SIGKILLed at several points of a run and restarted. The run must
 * still finish, no committed step may run again, and the database must stay intact.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  type BatonProcess,
  countByStep,
  expectExit,
  isAlive,
  readCounts,
  removeTempDirs,
  runBaton,
  runStatus,
  spawnBaton,
  stopAgentsAfterEach,
  tempDir,
  timeline,
  waitFor,
  writePlan,
} from './helpers/cli.js';

const countFiles = stopAgentsAfterEach();

afterAll(() => removeTempDirs());

const STEP_IDS = ['s1', 's2', 's3', 's4', 's5', 's6'];

function sequentialPlan(sleepMs: number, stepIds: readonly string[]) {
  return {
    name: 'crash-test',
    defaults: {
      agent: { command: agentCommand('agent-count') },
      retry: { maxAttempts: 6, initialDelayMs: 10, maxDelayMs: 50 },
    },
    // Interrupted attempts of one step differ only by worker id; keep no-progress out of the way.
    limits: { noProgressAfter: 6 },
    steps: stepIds.map((id, index) => ({
      id,
      instruction: `step ${id} (sleep ${sleepMs} ms)`,
      ...(index === 0 ? {} : { dependsOn: [stepIds[index - 1]!] }),
    })),
  };
}

interface KillSnapshot {
  label: string;
  /** Steps whose attempt was leased to the dead worker. */
  inFlight: string[];
  /** Steps with a committed step.succeeded event at the time of the kill. */
  succeeded: Set<string>;
  counts: Map<string, number>;
}

/** Read-only view of the database for fast polling while a worker writes. */
function openReadOnly(home: string): Database.Database {
  return new Database(join(home, 'baton.db'), { readonly: true, fileMustExist: true });
}

describe('baton worker killed with SIGKILL', () => {
  it('finishes the run after three kills; committed steps never run again; the database stays intact', async () => {
    const dir = tempDir('baton-cli-crash-');
    const home = join(dir, 'home');
    const countFile = join(dir, 'counts');
    countFiles.push(countFile);
    const env = { COUNT_FILE: countFile, SLEEP_MS: '400' };
    const file = writePlan(dir, sequentialPlan(400, STEP_IDS));
    expectExit(await runBaton(['run', file, '--id', 'crash', '--detach'], { home, env }), 0);

    const db = openReadOnly(home);
    const succeededCount = db.prepare(
      "SELECT count(*) FROM events WHERE run_id = 'crash' AND type = 'step.succeeded'",
    );
    const runStatusRow = db.prepare("SELECT status FROM runs WHERE id = 'crash'");
    const lines = () => readCounts(countFile).length;
    const snapshots: KillSnapshot[] = [];
    const workers: BatonProcess[] = [];
    const startWorker = () => {
      const worker = spawnBaton(['worker', '--lease', '1s'], { home, env });
      workers.push(worker);
      return worker;
    };
    const kill = async (worker: BatonProcess, label: string) => {
      worker.child.kill('SIGKILL');
      const exit = await worker.exited;
      expect(exit.signal).toBe('SIGKILL');
      const run = await runStatus(home, 'crash');
      const events = await timeline(home, 'crash');
      snapshots.push({
        label,
        inFlight: run.steps.filter((s) => s.status === 'running').map((s) => s.stepId),
        succeeded: new Set(events.filter((e) => e.type === 'step.succeeded').map((e) => e.stepId!)),
        counts: countByStep(readCounts(countFile)),
      });
    };

    try {
      // 1. Right after the run starts: the first agent has just been spawned.
      const first = startWorker();
      await waitFor(() => lines() >= 1, 30_000, 'the first agent to start');
      await kill(first, 'at start');

      // 2. Mid-step: an agent has run for a while (it sleeps 400 ms) when its worker dies.
      const second = startWorker();
      await waitFor(() => lines() >= 2, 30_000, 'a second agent to start');
      await new Promise((resolve) => setTimeout(resolve, 150));
      await kill(second, 'mid-step');

      // 3. Between steps: just after a step.succeeded commit (its successor claimed in the same cycle).
      const third = startWorker();
      const committed = succeededCount.pluck().get() as number;
      await waitFor(
        () => (succeededCount.pluck().get() as number) > committed,
        30_000,
        'another step to succeed',
        5,
      );
      await kill(third, 'between steps');

      const last = startWorker();
      await waitFor(
        () => runStatusRow.pluck().get() === 'succeeded',
        60_000,
        'the run to succeed after the restarts',
        50,
      );
      last.child.kill('SIGTERM');
      expect((await last.exited).code).toBe(0);
    } finally {
      db.close();
    }

    for (const worker of workers) expect(worker.stderr()).not.toContain('internal error');
    expect(snapshots.map((s) => s.label)).toEqual(['at start', 'mid-step', 'between steps']);
    expect(snapshots[0]!.inFlight).toEqual(['s1']);
    expect(snapshots[1]!.inFlight).toHaveLength(1);

    const run = await runStatus(home, 'crash');
    expect(run.status).toBe('succeeded');
    const events = await timeline(home, 'crash');
    const finalCounts = countByStep(readCounts(countFile));
    for (const id of STEP_IDS) {
      expect(events.filter((e) => e.type === 'step.succeeded' && e.stepId === id)).toHaveLength(1);
      const killsInFlight = snapshots.filter((s) => s.inFlight.includes(id)).length;
      const ran = finalCounts.get(`crash ${id}`) ?? 0;
      expect({ id, ran: ran >= 1 }).toEqual({ id, ran: true });
      expect({ id, ranAtMost: ran <= 1 + killsInFlight }).toEqual({ id, ranAtMost: true });
      // Every attempt interrupted by a kill is recorded as such in the timeline.
      const interrupted = events.filter(
        (e) => e.type === 'step.failed' && e.stepId === id && e.failureClass === 'interrupted',
      ).length;
      expect({ id, interrupted }).toEqual({ id, interrupted: killsInFlight });
    }
    for (const snapshot of snapshots) {
      for (const id of snapshot.succeeded) {
        expect({ after: snapshot.label, id, runs: finalCounts.get(`crash ${id}`) }).toEqual({
          after: snapshot.label,
          id,
          runs: snapshot.counts.get(`crash ${id}`),
        });
      }
    }

    const check = new Database(join(home, 'baton.db'), { readonly: true, fileMustExist: true });
    try {
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(check.pragma('foreign_key_check')).toEqual([]);
    } finally {
      check.close();
    }
  }, 120_000);

  it('stops the orphaned agent of a killed worker when the lease is reclaimed', async () => {
    const dir = tempDir('baton-cli-orphan-');
    const home = join(dir, 'home');
    const countFile = join(dir, 'counts');
    countFiles.push(countFile);
    const env = { COUNT_FILE: countFile, SLEEP_MS: '30000' };
    const file = writePlan(dir, sequentialPlan(30_000, ['long']));
    expectExit(await runBaton(['run', file, '--id', 'orphan', '--detach'], { home, env }), 0);

    const doomed = spawnBaton(['worker', '--lease', '1s'], { home, env });
    const orphan = await waitFor(() => readCounts(countFile)[0], 30_000, 'the agent to start');
    expect(orphan.attempt).toBe(1);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    // The agent runs in its own process group: it outlives its worker.
    expect(isAlive(orphan.pid)).toBe(true);

    const rescuer = spawnBaton(['worker', '--lease', '1s'], { home, env });
    await waitFor(() => !isAlive(orphan.pid), 15_000, `orphan ${orphan.pid} to be stopped`);
    const retried = await waitFor(
      () => readCounts(countFile).find((line) => line.attempt === 2),
      15_000,
      'attempt 2 to start',
    );
    expect(retried.pid).not.toBe(orphan.pid);
    const events = await timeline(home, 'orphan');
    expect(events.find((e) => e.type === 'step.failed')?.failureClass).toBe('interrupted');

    // Cancelling the run stops the agent that is running now, too.
    expectExit(await runBaton(['cancel', 'orphan'], { home }), 0);
    await waitFor(() => !isAlive(retried.pid), 15_000, `agent ${retried.pid} to stop after cancel`);
    rescuer.child.kill('SIGTERM');
    expect((await rescuer.exited).code).toBe(0);
    expect((await runStatus(home, 'orphan')).status).toBe('cancelled');
  }, 90_000);
});
