/**
 * Real crashes of `baton check <state.json>`: the process is SIGKILLed in the middle of an agent,
 * right after an agent exits (before the DONE write), and at random instants of short checks
 * (some land in the middle of a write). After every kill the state file must parse whole; a later
 * check must finish the run; no step that was DONE in the file before a kill may run again; and an
 * agent orphaned by a kill must not outlive the start of the next check.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type BatonProcess,
  type CountLine,
  expectExit,
  isAlive,
  readCounts,
  removeTempDirs,
  sleep,
  spawnBaton,
  stopAgentsAfterEach,
  tempDir,
  waitFor,
} from './helpers/cli.js';
import {
  type LegacyStateJson,
  legacyAgent,
  legacyState,
  readState,
  runLegacy,
  statuses,
  stepIds,
  tmpFilesIn,
  writeState,
} from './helpers/legacy.js';

const countFiles = stopAgentsAfterEach();

afterAll(() => removeTempDirs());

/**
 * One crash scenario: a state file, the agent-count file, and per step the number of count lines
 * it had when the file first showed it DONE (that number must never grow).
 */
class CrashScenario {
  readonly dir = tempDir('baton-legacy-crash-');
  readonly countFile = join(this.dir, 'count.txt');
  /** The file itself (a symlink's target); checks are given `checkPath`. */
  readonly statePath: string;
  /** What the checks are given: the state file, or a symlink to it in another folder (`viaLink`). */
  readonly checkPath: string;
  readonly doneCounts = new Map<string, number>();
  kills = 0;

  constructor(
    readonly ids: readonly string[],
    extra: Record<string, unknown> = {},
    viaLink = false,
  ) {
    const folder = viaLink ? join(this.dir, 'real') : this.dir;
    mkdirSync(folder, { recursive: true });
    this.statePath = writeState(folder, legacyState(ids, extra));
    this.checkPath = this.statePath;
    if (viaLink) {
      mkdirSync(join(this.dir, 'ws'));
      this.checkPath = join(this.dir, 'ws', 'state.json');
      symlinkSync(this.statePath, this.checkPath);
    }
    countFiles.push(this.countFile);
  }

  env(sleepMs: number): Record<string, string> {
    return {
      STEP_AGENT_CMD: legacyAgent('agent-count'),
      COUNT_FILE: this.countFile,
      SLEEP_MS: String(sleepMs),
      // Kills are interruptions, which do not spend STEP_MAX_RETRIES (default 3): only their own
      // cap must allow the many kills of (c).
      STEP_MAX_INTERRUPTIONS: '100',
    };
  }

  /** Reads the file (it must parse whole) and records the DONE steps with their count lines. */
  observe(): LegacyStateJson {
    expect(lstatSync(this.checkPath).isSymbolicLink(), 'the link stays a link').toBe(
      this.checkPath !== this.statePath,
    );
    const state = readState(this.statePath);
    expect(Array.isArray(state.stepQueue), 'the state file has its stepQueue').toBe(true);
    const counts = this.countsByStep();
    for (const [id, status] of Object.entries(statuses(state))) {
      if (status === 'DONE' && !this.doneCounts.has(id)) this.doneCounts.set(id, counts.get(id) ?? 0);
    }
    return state;
  }

  countsByStep(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const line of readCounts(this.countFile)) counts.set(line.step, (counts.get(line.step) ?? 0) + 1);
    return counts;
  }

  /** Observes the file, SIGKILLs the check, and checks the file again. */
  async kill(proc: BatonProcess): Promise<LegacyStateJson> {
    this.observe();
    proc.child.kill('SIGKILL');
    const { signal, code } = await proc.exited;
    if (signal === 'SIGKILL') this.kills++;
    else expect(code, `check ended by itself: ${proc.stderr()}`).not.toBeNull();
    return this.observe();
  }

  /** Runs checks until the file says DONE, then checks that no DONE step ran again. */
  async finish(sleepMs = 0): Promise<LegacyStateJson> {
    for (let i = 0; i < 4; i++) {
      expectExit(await runLegacy('check', this.checkPath, this.env(sleepMs)), 0);
      if (this.observe().status === 'DONE') break;
    }
    const state = this.observe();
    expect(state.status).toBe('DONE');
    expect(state.currentStep).toBe(this.ids.length);
    expect(Object.values(statuses(state)).every((s) => s === 'DONE')).toBe(true);
    expect(state.blockers).toEqual([]);
    const counts = this.countsByStep();
    for (const id of this.ids) expect(counts.get(id) ?? 0, `${id} ran`).toBeGreaterThanOrEqual(1);
    for (const [id, atDone] of this.doneCounts)
      expect(counts.get(id), `${id} ran again after DONE`).toBe(atDone);
    return state;
  }

  /**
   * The logs of `step` by run number (its BATON_ATTEMPT): `<step>.try-<n>.log` is run n, and a run
   * after an interruption is named by its number, `<step>.try-<n>.run-<m>.log`.
   */
  logsOf(step: string): Map<number, string> {
    const dir = join(`${this.statePath}.baton`, 'logs');
    const logs = new Map<number, string>();
    for (const name of existsSync(dir) ? readdirSync(dir) : []) {
      const found = /^(.+)\.try-(\d+)(?:\.run-(\d+))?\.log$/.exec(name);
      if (found?.[1] === step) logs.set(Number(found[3] ?? found[2]), join(dir, name));
    }
    return logs;
  }
}

describe('SIGKILL of baton check on a state file', () => {
  it('(a) in the middle of the agent: whole file, the orphan is stopped by the next check, run finishes', async () => {
    const scenario = new CrashScenario(stepIds(5));
    // The killed check's agent sleeps 10 minutes: only a kill can end it within the deadline below.
    const proc = spawnBaton(['check', scenario.statePath], { env: scenario.env(600_000) });
    const line = await waitFor(() => readCounts(scenario.countFile)[0], 15_000, 'the first agent to start');
    const killed = await scenario.kill(proc);
    expect(killed.stepRuns['step-1']).toMatchObject({ status: 'IN_PROGRESS', tries: 1 });
    expect(isAlive(line.pid), 'the agent outlives the killed check').toBe(true);

    const next = spawnBaton(['check', scenario.statePath], { env: scenario.env(300) });
    // The next check stops the orphan before it runs anything: once it has exited, the orphan is gone.
    expect((await next.exited).code).toBe(0);
    await waitFor(() => !isAlive(line.pid), 30_000, `the orphaned agent ${line.pid} to be stopped`);
    const state = await scenario.finish(300);
    // The interrupted try does not count: step-1 ran twice, on one try and one interruption.
    expect(state.stepRuns['step-1']).toMatchObject({ tries: 1, interruptions: 1 });
    expect(scenario.logsOf('step-1').get(2)).toMatch(/step-1\.try-1\.run-2\.log$/);
    expect(Object.fromEntries(scenario.countsByStep())).toEqual({
      'step-1': 2,
      'step-2': 1,
      'step-3': 1,
      'step-4': 1,
      'step-5': 1,
    });
  });

  it('each run of a step has its own BATON_ATTEMPT, and the orphan of every interrupted run is stopped', async () => {
    const scenario = new CrashScenario(stepIds(1));
    // Two checks killed in the middle of the agent, each leaving its agent running (10 minutes).
    const orphans: CountLine[] = [];
    for (let kill = 0; kill < 2; kill++) {
      const proc = spawnBaton(['check', scenario.statePath], { env: scenario.env(600_000) });
      const line = await waitFor(
        () => readCounts(scenario.countFile)[kill],
        15_000,
        `agent ${kill + 1} to start`,
      );
      // The runs before it were stopped by this check (before it started this one).
      for (const orphan of orphans)
        await waitFor(
          () => !isAlive(orphan.pid),
          10_000,
          `the orphan of run ${orphan.attempt} to be stopped`,
        );
      await scenario.kill(proc);
      expect(isAlive(line.pid), 'the agent outlives the killed check').toBe(true);
      orphans.push(line);
    }
    await scenario.finish(0);
    for (const orphan of orphans)
      await waitFor(() => !isAlive(orphan.pid), 10_000, `the orphan of run ${orphan.attempt} to be stopped`);
    // One try, run three times: three markers, three logs, never one shared by two runs.
    expect(readCounts(scenario.countFile).map((line) => line.attempt)).toEqual([1, 2, 3]);
    expect(readState(scenario.statePath).stepRuns['step-1']).toMatchObject({ tries: 1, interruptions: 2 });
    expect([...scenario.logsOf('step-1').keys()].sort((a, b) => a - b)).toEqual([1, 2, 3]);
  });

  it('an agent its killed check had not yet recorded is stopped by its marker before the step runs again', async () => {
    const scenario = new CrashScenario(stepIds(1));
    const proc = spawnBaton(['check', scenario.statePath], { env: scenario.env(600_000) });
    const orphan = await waitFor(() => readCounts(scenario.countFile)[0], 15_000, 'the first agent to start');
    await scenario.kill(proc);
    // As a check killed between starting its agent and recording it leaves the pid file.
    writeFileSync(join(`${scenario.statePath}.baton`, 'agent.json'), '');
    const next = spawnBaton(['check', scenario.statePath], { env: scenario.env(600_000) });
    const resumed = await waitFor(
      () => readCounts(scenario.countFile)[1],
      15_000,
      'the resumed agent to start',
    );
    // Stopped before the resumed run, not left beside it (nor taken by it for its own at its end).
    await waitFor(() => !isAlive(orphan.pid), 10_000, `the unrecorded orphan ${orphan.pid} to be stopped`);
    expect(isAlive(resumed.pid), 'the resumed agent runs').toBe(true);
    expect([orphan.attempt, resumed.attempt]).toEqual([1, 2]);
    await scenario.kill(next);
  });

  it('(d) three kills spend none of the default STEP_MAX_RETRIES; past STEP_MAX_INTERRUPTIONS the step is blocked', async () => {
    const scenario = new CrashScenario(stepIds(1));
    const killMidAgent = async (interruptionsCap: string) => {
      const seen = readCounts(scenario.countFile).length;
      const env = { ...scenario.env(20_000), STEP_MAX_INTERRUPTIONS: interruptionsCap };
      const proc = spawnBaton(['check', scenario.statePath], { env });
      await waitFor(() => readCounts(scenario.countFile)[seen], 15_000, 'an agent to start');
      await scenario.kill(proc);
    };
    for (let kill = 0; kill < 3; kill++) await killMidAgent('10');
    expect(readState(scenario.statePath).stepRuns['step-1']).toMatchObject({ tries: 1, interruptions: 2 });
    // With a cap of 2, the third interruption blocks the step: it does not run a fourth time.
    const blocked = await runLegacy('check', scenario.statePath, {
      ...scenario.env(0),
      STEP_MAX_INTERRUPTIONS: '2',
    });
    expect(blocked.stderr + blocked.stdout).toContain(
      'BLOCKED step-1: interrupted 3 times (STEP_MAX_INTERRUPTIONS 2)',
    );
    expect(readState(scenario.statePath).blockers).toEqual(['step-1']);
    expect(readCounts(scenario.countFile)).toHaveLength(3);
    // With the default cap of 10 the step runs to DONE, on its first try still.
    expectExit(await runLegacy('check', scenario.statePath, scenario.env(0)), 0);
    expect(readState(scenario.statePath).stepRuns['step-1']).toMatchObject({ status: 'DONE', tries: 1 });
    expect(readCounts(scenario.countFile)).toHaveLength(4);
  });

  it('(b) right after the agent exits, before the DONE write (polled, then at random small delays)', async () => {
    const scenario = new CrashScenario(stepIds(5));
    let inWindow = 0;
    for (let round = 0; round < 5; round++) {
      if (Object.values(statuses(scenario.observe())).every((s) => s === 'DONE')) break;
      const seen = readCounts(scenario.countFile).length;
      const proc = spawnBaton(['check', scenario.statePath], { env: scenario.env(300) });
      const line = await waitFor(() => readCounts(scenario.countFile)[seen], 15_000, 'an agent to start');
      // agent-count prints `counted <step>` as it exits: kill as soon as a log shows it. The logs
      // are looked up at each poll: the line counted may be that of an agent the previous kill
      // orphaned (the check had just started it), whose log never gets its last line; this check
      // stops it and runs the step again, as a later run with a log of its own.
      await waitFor(
        () =>
          [...scenario.logsOf(line.step)].some(
            ([run, log]) => run >= line.attempt && readFileSync(log, 'utf8').includes('counted'),
          ),
        15_000,
        `a log of ${line.step} from run ${line.attempt} on to show the agent's last line`,
        1,
      );
      if (round > 0) await sleep(Math.floor(Math.random() * 6));
      const after = await scenario.kill(proc);
      if (after.stepRuns[line.step]?.status === 'IN_PROGRESS') inWindow++;
    }
    expect(scenario.kills).toBeGreaterThanOrEqual(3);
    await scenario.finish(0);
    // How often the kill landed between the agent's exit and the DONE write (timing-dependent).
    console.info(`(b) ${scenario.kills} kills, ${inWindow} of them before the DONE write`);
  });

  it.each([
    ['', false, 25],
    [', through a symlink to the file', true, 12],
  ])('(c) at random instants of short checks, some in the middle of a write%s', async (_label, viaLink, rounds) => {
    // A large unknown field makes each write take a while, so random kills land inside writes.
    const scenario = new CrashScenario(stepIds(5), { padding: 'p'.repeat(2 * 1024 * 1024) }, viaLink);
    let tmpLeft = 0;
    for (let round = 0; round < rounds; round++) {
      const state = scenario.observe();
      if (state.status === 'DONE') break;
      const proc = spawnBaton(['check', scenario.checkPath], { env: scenario.env(0) });
      await sleep(60 + Math.floor(Math.random() * 400));
      const after = await scenario.kill(proc);
      expect(after.padding).toHaveLength(2 * 1024 * 1024);
      tmpLeft = tmpFilesIn(dirname(scenario.statePath)).length;
    }
    const state = await scenario.finish(0);
    expect(state.padding).toHaveLength(2 * 1024 * 1024);
    console.info(`(c) ${scenario.kills} kills; ${tmpLeft} temporary file(s) left by kills inside a write`);
  });
});
