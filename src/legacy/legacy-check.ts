import { createHash } from 'node:crypto';
import { readdirSync, realpathSync, rmSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { childEnvironment } from '../core/child-env.js';
import { redactSecrets } from '../core/redact.js';
import { runSecrets } from '../core/run-secrets.js';
import { runAgentAttempt } from '../executors/agent-attempt.js';
import { AgentPidFile } from './agent-pid-file.js';
import type { LegacyConfig } from './legacy-config.js';
import { legacyOutputs } from './legacy-outputs.js';
import { type LegacyBlocker, legacyBlockers, nextLegacyAction } from './legacy-rules.js';
import { type LegacyState, requiredOutputsOf } from './state-file.js';
import { LegacyStateWriter, readLegacyState } from './state-file-io.js';
import { StateLock } from './state-lock.js';

export interface LegacyCheckOptions {
  statePath: string;
  config: LegacyConfig;
  env: NodeJS.ProcessEnv;
  /**
   * `check` drives every step it can; `step` too, as the skill's runner chained into its check,
   * and its report says `failed` when the step it was called for is FAILED at the end.
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

export interface LegacyReport {
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

/** The sidecar folder beside a state file: the lock, the agent logs and the running agent's pid. */
export function sidecarDir(statePath: string): string {
  return `${statePath}.baton`;
}

/** The skill keeps 500 characters of stderr in `error`; the full output is in the log named beside it. */
const ERROR_CHARS = 500;

function legacyRunId(statePath: string): string {
  return `statefile-${createHash('sha256').update(statePath).digest('hex').slice(0, 12)}`;
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

/** Where a check works: the state file itself (a symlink's target) and the folder outputs are relative to. */
interface LegacyPaths {
  statePath: string;
  /** The folder of the path as given (a symlink's folder, as the skill's `Path(state).parent`). */
  workspace: string;
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
  const driver: Driver = {
    ...paths,
    state,
    options,
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
      const action = nextLegacyAction(state, now(), options.config);
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
      // runStep writes IN_PROGRESS (with every change so far, e.g. the previous step's DONE) before
      // the agent starts; its own outcome is written with the next step's start, or at the end.
      const status = await runStep(
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

/** What every step of one check shares. */
interface Driver extends LegacyPaths {
  state: LegacyState;
  options: LegacyCheckOptions;
  now: () => number;
  log: (line: string) => void;
  save: () => void;
  pidFile: AgentPidFile;
  /** The agent's environment without the step's own variables, built once (copying process.env is slow). */
  env: NodeJS.ProcessEnv;
  /** Masked in the `error` a failed step leaves in the state file and in the check's output (see runSecrets). */
  secrets: readonly string[];
}

async function runStep(
  driver: Driver,
  stepId: string,
  prompt: string,
  tries: number,
  interruptions: number,
): Promise<'DONE' | 'FAILED' | 'STOPPED'> {
  const { statePath, workspace, state, options, now, log, save, pidFile } = driver;
  // Once the step has been interrupted a try may run more than once: each run keeps its own log,
  // named by the step's run number too.
  const rerun = interruptions > 0 ? `.run-${tries + interruptions}` : '';
  const logName = `${fileNameFor(stepId)}.try-${tries}${rerun}.log`;
  const logPath = join(sidecarDir(statePath), 'logs', logName);
  // Relative to the workspace, as the skill's paths are; absolute when a symlink put it elsewhere.
  const fromWorkspace = relative(workspace, logPath);
  const logRel = fromWorkspace.startsWith('..') || isAbsolute(fromWorkspace) ? logPath : fromWorkspace;
  const previous = state.stepRuns[stepId];
  const blockersBefore = state.blockers;
  // Running again (STEP_MAX_RETRIES raised, the file fixed): no longer blocked; listed again if it blocks again.
  state.blockers = state.blockers.filter((id) => id !== stepId);
  state.stepRuns[stepId] = {
    ...previous,
    status: 'IN_PROGRESS',
    tries,
    ...(interruptions > 0 ? { interruptions } : {}),
    lastRunIso: new Date(now()).toISOString(),
  };
  delete state.stepRuns[stepId]!.error;
  save();
  log(`${stepId}: started (try ${tries})`);
  const runId = legacyRunId(statePath);
  const outputs = legacyOutputs(workspace, requiredOutputsOf(state.plan.steps[stepId]!));
  const timeoutMs = options.timeoutMs ?? 3_600_000;
  const result = await runAgentAttempt({
    agent: { command: options.config.agentArgv, promptVia: 'arg' },
    prompt,
    workspace,
    requiredOutputs: outputs.map((output) => output.path),
    env: {
      ...driver.env,
      BATON_RUN_ID: runId,
      BATON_STEP_ID: stepId,
      BATON_ATTEMPT: String(tries),
      BATON_WORKSPACE: workspace,
    },
    timeoutMs,
    killGraceMs: 5000,
    logPath,
    policy: 'legacy',
    trust: options.config.trust,
    // The state file is this driver's database, the sidecar folder its home.
    ...(options.bwrap
      ? { sandbox: { bwrap: options.bwrap, hidden: [statePath, sidecarDir(statePath)] } }
      : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    onSpawn: (pid) => pidFile.record({ pid, runId, stepId, attempt: tries }),
  });
  pidFile.clear();
  const entry = state.stepRuns[stepId]!;
  if (!result.ok && result.aborted) {
    // Out of time (--max-time) or told to stop: this try does not count; the next check runs it again.
    state.stepRuns[stepId] = previous ?? { status: 'PENDING', tries: 0 };
    state.blockers = blockersBefore;
    log(`${stepId}: stopped before it finished; the next check runs it again`);
    return 'STOPPED';
  }
  // Named as the plan declared them (an absolute path stays absolute).
  const declaredAs = (path: string) => outputs.find((output) => output.path === path)?.declared ?? path;
  let error: string | null = null;
  if (!result.ok) {
    // As the skill: an output outside the workspace counts as missing; otherwise stderr when there is any.
    const stderr = result.process?.stderrTail.trim() ?? '';
    error = result.failedOutputs
      ? `Missing required outputs: ${result.failedOutputs.map(declaredAs).join(', ')}`
      : result.process?.timedOut
        ? 'Timeout'
        : redactSecrets(stderr || result.message, driver.secrets);
  } else {
    for (const [index, output] of result.outputs.entries()) {
      const declared = outputs[index]?.declared ?? output.path;
      const name = isAbsolute(declared) ? declared : output.path;
      if (!state.artifacts.includes(name)) state.artifacts.push(name);
    }
  }
  entry.status = error === null ? 'DONE' : 'FAILED';
  entry.lastRunIso = new Date(now()).toISOString();
  entry.log = logRel;
  if (error !== null) entry.error = shortError(error);
  log(`${stepId}: ${entry.status}${error ? `: ${error.split('\n')[0]}` : ''}`);
  return entry.status;
}

/** Step ids of the skill's format are free text: file names get a safe form (and a hash when changed). */
function fileNameFor(stepId: string): string {
  const safe = stepId
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 80);
  return safe === stepId ? safe : `${safe}-${createHash('sha256').update(stepId).digest('hex').slice(0, 8)}`;
}

/** The skill keeps 500 characters; the end of the output is where the reason usually is. */
function shortError(error: string): string {
  const text = error.trim();
  return text.slice(-ERROR_CHARS);
}

/** A check killed in the middle of a write leaves its temporary file: the lock holder removes them. */
function removeTornTempFiles(statePath: string): void {
  const prefix = `.${basename(statePath)}.`;
  for (const name of readdirSync(dirname(statePath))) {
    if (name.startsWith(prefix) && name.endsWith('.tmp'))
      rmSync(join(dirname(statePath), name), { force: true });
  }
}
