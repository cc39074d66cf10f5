import { readdirSync, realpathSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { childEnvironment } from '../core/child-env.js';
import { redactSecrets } from '../core/redact.js';
import { runSecrets } from '../core/run-secrets.js';
import { AgentPidFile, stopInterruptedAgents } from './agent-pid-file.js';
import type { LegacyConfig } from './legacy-config.js';
import { type LegacyBlocker, legacyBlockers, nextLegacyAction } from './legacy-rules.js';
import {
  type LegacyDriver,
  type LegacyPaths,
  legacyRunId,
  runLegacyStep,
  sidecarDir,
} from './legacy-step-run.js';
import type { LegacyState } from './state-file.js';
import { LegacyStateWriter, readLegacyState } from './state-file-io.js';
import { StateLock } from './state-lock.js';

interface LegacyCheckOptions {
  statePath: string;
  config: LegacyConfig;
  env: NodeJS.ProcessEnv;
  /**
   * `check` drives every step it can; `step` too, as the skill's runner chained into its check,
   * and its report says `failed` when the step it was called for is FAILED at the end. `step` runs
   * that step once more even when it is blocked: the skill's runner never looks at the cap.
   */
  mode: 'check' | 'step';
  /** `baton step --one`: run the current step once and stop (the cursor moves on the next check). */
  oneStep?: boolean;
  timeoutMs?: number;
  /** Aborts a running agent (--max-time, SIGTERM); its try does not count. */
  signal?: AbortSignal;
  now?: () => number;
  log?: (line: string) => void;
  /** Confine the agents with this bwrap (BATON_SANDBOX=workspace): the state file and its sidecar hidden. */
  bwrap?: string;
}

interface LegacyReport {
  outcome:
    | 'missing'
    | 'busy'
    | 'done'
    | 'finished'
    | 'progressed'
    | 'waiting'
    | 'blocked'
    | 'failed'
    | 'stopped';
  stepsRun: number;
  blockers: string[];
  /** The steps listed in `blockers` that are not DONE, with their reasons (masked): the BLOCKED lines. */
  blocked: LegacyBlocker[];
  waitingUntil?: string;
}

/** `baton check <state.json>` / `baton step <state.json>`: the skill's check and runner, made safe. */
export async function runLegacyCheck(options: LegacyCheckOptions): Promise<LegacyReport> {
  const givenPath = resolve(options.statePath);
  const now = options.now ?? Date.now;
  const secrets = runSecrets({ env: options.env });
  // What the check prints is masked too: a state file may hold an error written before masking.
  const mask = (line: string) => redactSecrets(line, secrets);
  const log = (line: string) => options.log?.(mask(line));
  const ended = (outcome: LegacyReport['outcome'], state: LegacyState | null): LegacyReport => ({
    outcome,
    stepsRun: 0,
    blockers: state?.blockers ?? [],
    blocked: state && state.status !== 'DONE' ? blockedOf(state, options, mask) : [],
  });
  // A state.json that is a symlink is read, locked and written at its target (the link stays).
  const statePath = targetOf(givenPath);
  if (statePath === null) return ended('missing', null);
  // Validate before taking the lock, so a malformed file is refused even while another check runs.
  // Read through the path as given, so that messages name the file the user named.
  const first = readLegacyState(givenPath);
  if (!first || first.status === 'DONE') return ended(first ? 'done' : 'missing', first);
  const sidecar = sidecarDir(statePath);
  const lock = StateLock.tryAcquire(sidecar);
  if (!lock) {
    log(`another baton check is working on ${givenPath}; leaving it to that one`);
    return ended('busy', first);
  }
  try {
    AgentPidFile.stopOrphan(sidecar);
    removeTornTempFiles(statePath);
    // Read again under the lock: another check may have finished the file meanwhile.
    const state = readLegacyState(givenPath);
    // What the pid file could not name (a check killed before it recorded its agent) is found by
    // the marker of each run the file shows IN_PROGRESS: nobody else runs it while we hold the lock.
    if (state) stopInterruptedAgents(state, legacyRunId(statePath));
    if (!state || state.status === 'DONE') return ended(state ? 'done' : 'missing', state);
    const report = await drive(
      { statePath, workspace: dirname(givenPath) },
      state,
      options,
      now,
      log,
      secrets,
    );
    return { ...report, blocked: blockedOf(state, options, mask) };
  } finally {
    lock.release();
  }
}

/** The file a state path names, through any symlinks; null when there is none. */
function targetOf(path: string): string | null {
  try {
    return realpathSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

function blockedOf(
  state: LegacyState,
  options: LegacyCheckOptions,
  mask: (text: string) => string,
): LegacyBlocker[] {
  return legacyBlockers(state, options.config).map((entry) => ({ ...entry, reason: mask(entry.reason) }));
}

async function drive(
  paths: LegacyPaths,
  state: LegacyState,
  options: LegacyCheckOptions,
  now: () => number,
  log: (line: string) => void,
  secrets: readonly string[],
): Promise<Omit<LegacyReport, 'blocked'>> {
  const { statePath } = paths;
  state.lastHeartbeatIso = new Date(now()).toISOString();
  let dirty = true;
  let stepsRun = 0;
  /** The step `baton step` was called for: the first one it runs or finds blocked. */
  let ownStep: string | undefined;
  const writer = new LegacyStateWriter(statePath);
  const save = () => {
    writer.write(state);
    dirty = false;
  };
  const pidFile = new AgentPidFile(sidecarDir(statePath));
  const driver: LegacyDriver = {
    ...paths,
    state,
    config: options.config,
    timeoutMs: options.timeoutMs ?? 3_600_000,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.bwrap ? { bwrap: options.bwrap } : {}),
    now,
    log,
    save,
    pidFile,
    // STEP_AGENT_CMD gets the policy's default: no plan names secrets, Baton's own are withheld.
    env: childEnvironment({ env: options.env }),
    secrets,
  };
  // `baton step` reports `failed` when the step it was called for is FAILED when it returns.
  const report = (
    outcome: LegacyReport['outcome'],
    extra: { waitingUntil?: string } = {},
  ): Omit<LegacyReport, 'blocked'> => {
    const ownFailed =
      options.mode === 'step' && ownStep !== undefined && state.stepRuns[ownStep]?.status === 'FAILED';
    return { outcome: ownFailed ? 'failed' : outcome, stepsRun, blockers: state.blockers, ...extra };
  };
  try {
    for (;;) {
      // `baton step` runs the step it was called for even when blocked, once (as the skill's runner).
      const runBlocked = options.mode === 'step' && ownStep === undefined;
      const action = nextLegacyAction(state, now(), options.config, { runBlocked });
      if (action.kind === 'idle') return report('done');
      if (action.kind === 'finish') {
        // Written by the check that finished the last step, not left to the next one.
        state.status = 'DONE';
        dirty = true;
        log(`all ${state.stepQueue.length} steps are DONE: state marked DONE`);
        return report('finished');
      }
      if (action.kind === 'advance') {
        // Recomputed from DONE after a crash, so it is written together with the next change.
        state.currentStep += 1;
        dirty = true;
        continue;
      }
      ownStep ??= action.stepId;
      if (action.kind === 'block') {
        if (!action.alreadyListed) {
          state.blockers.push(action.stepId);
          dirty = true;
        }
        return report('blocked');
      }
      if (action.kind === 'wait') {
        const until = new Date(action.until).toISOString();
        log(`${action.stepId} waits for stepDelayMinutes until ${until}`);
        return report('waiting', { waitingUntil: until });
      }
      if (options.signal?.aborted) return report('stopped');
      if (action.overCap) log(`${action.stepId}: blocked (${action.overCap}); baton step runs it once more`);
      // runLegacyStep writes IN_PROGRESS (with every change so far, e.g. the previous step's DONE)
      // before the agent starts; its own outcome is written with the next step's start, or at the end.
      const status = await runLegacyStep(
        driver,
        action.stepId,
        action.prompt,
        action.tries + 1,
        action.interruptions,
      );
      dirty = true;
      if (status === 'STOPPED') return report('stopped');
      stepsRun++;
      if (options.oneStep) return report('progressed');
    }
  } finally {
    try {
      if (dirty) save();
    } finally {
      writer.close();
      pidFile.close();
    }
  }
}

/** A check killed in the middle of a write leaves its temporary file: the lock holder removes them. */
function removeTornTempFiles(statePath: string): void {
  const prefix = `.${basename(statePath)}.`;
  for (const name of readdirSync(dirname(statePath))) {
    if (name.startsWith(prefix) && name.endsWith('.tmp'))
      rmSync(join(dirname(statePath), name), { force: true });
  }
}
