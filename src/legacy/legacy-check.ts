import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { childEnvironment } from '../core/child-env.js';
import { redactSecrets } from '../core/redact.js';
import { runSecrets } from '../core/run-secrets.js';
import { runAgentAttempt } from '../executors/agent-attempt.js';
import { AgentPidFile } from './agent-pid-file.js';
import type { LegacyConfig } from './legacy-config.js';
import { nextLegacyAction } from './legacy-rules.js';
import type { LegacyState } from './state-file.js';
import { LegacyStateWriter, readLegacyState } from './state-file-io.js';
import { StateLock } from './state-lock.js';

export interface LegacyCheckOptions {
  statePath: string;
  config: LegacyConfig;
  env: NodeJS.ProcessEnv;
  /** `check` drives every step it can; `step` runs the current step once, as the skill's runner. */
  mode: 'check' | 'step';
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
  const statePath = resolve(options.statePath);
  const now = options.now ?? Date.now;
  const secrets = runSecrets({ env: options.env });
  // What the check prints is masked too: a state file may hold an error written before masking.
  const log = (line: string) => options.log?.(redactSecrets(line, secrets));
  if (!existsSync(statePath)) return { outcome: 'missing', stepsRun: 0, blockers: [] };
  // Validate before taking the lock, so a malformed file is refused even while another check runs.
  const first = readLegacyState(statePath);
  if (!first || first.status === 'DONE')
    return { outcome: first ? 'done' : 'missing', stepsRun: 0, blockers: first?.blockers ?? [] };
  const sidecar = sidecarDir(statePath);
  const lock = StateLock.tryAcquire(sidecar);
  if (!lock) {
    log(`another baton check is working on ${statePath}; leaving it to that one`);
    return { outcome: 'busy', stepsRun: 0, blockers: first.blockers };
  }
  try {
    AgentPidFile.stopOrphan(sidecar);
    removeTornTempFiles(statePath);
    // Read again under the lock: another check may have finished the file meanwhile.
    const state = readLegacyState(statePath);
    if (!state) return { outcome: 'missing', stepsRun: 0, blockers: [] };
    if (state.status === 'DONE') return { outcome: 'done', stepsRun: 0, blockers: state.blockers };
    return await drive(statePath, state, options, now, log, secrets);
  } finally {
    lock.release();
  }
}

async function drive(
  statePath: string,
  state: LegacyState,
  options: LegacyCheckOptions,
  now: () => number,
  log: (line: string) => void,
  secrets: readonly string[],
): Promise<LegacyReport> {
  state.lastHeartbeatIso = new Date(now()).toISOString();
  let dirty = true;
  let stepsRun = 0;
  let reachedEndNow = false;
  const writer = new LegacyStateWriter(statePath);
  const save = () => {
    writer.write(state);
    dirty = false;
  };
  const pidFile = new AgentPidFile(sidecarDir(statePath));
  const driver: Driver = {
    statePath,
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
  try {
    for (;;) {
      const action = nextLegacyAction(state, now(), options.config, reachedEndNow);
      if (action.kind === 'idle')
        return {
          outcome: state.status === 'DONE' ? 'done' : 'progressed',
          stepsRun,
          blockers: state.blockers,
        };
      if (action.kind === 'finish') {
        state.status = 'DONE';
        log(`all ${state.stepQueue.length} steps are DONE: state marked DONE`);
        return { outcome: 'finished', stepsRun, blockers: state.blockers };
      }
      if (action.kind === 'advance') {
        // Recomputed from DONE after a crash, so it is written together with the next change.
        state.currentStep += 1;
        dirty = true;
        if (state.currentStep >= state.stepQueue.length) reachedEndNow = true;
        continue;
      }
      if (action.kind === 'block') {
        if (!action.alreadyListed) {
          state.blockers.push(action.stepId);
          dirty = true;
          log(`BLOCKED ${action.stepId}: ${action.reason}`);
        }
        return { outcome: 'blocked', stepsRun, blockers: state.blockers };
      }
      if (action.kind === 'wait') {
        const until = new Date(action.until).toISOString();
        log(`${action.stepId} waits for stepDelayMinutes until ${until}`);
        return { outcome: 'waiting', stepsRun, blockers: state.blockers, waitingUntil: until };
      }
      if (options.signal?.aborted) return { outcome: 'stopped', stepsRun, blockers: state.blockers };
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
      if (status === 'STOPPED') return { outcome: 'stopped', stepsRun, blockers: state.blockers };
      stepsRun++;
      if (options.mode === 'step') {
        return { outcome: status === 'FAILED' ? 'failed' : 'progressed', stepsRun, blockers: state.blockers };
      }
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
interface Driver {
  statePath: string;
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
  const { statePath, state, options, now, log, save, pidFile } = driver;
  const workspace = dirname(statePath);
  // Once the step has been interrupted a try may run more than once: each run keeps its own log,
  // named by the step's run number too.
  const rerun = interruptions > 0 ? `.run-${tries + interruptions}` : '';
  const logName = `${fileNameFor(stepId)}.try-${tries}${rerun}.log`;
  const logRel = join(`${basename(statePath)}.baton`, 'logs', logName);
  const previous = state.stepRuns[stepId];
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
  const timeoutMs = options.timeoutMs ?? 3_600_000;
  const result = await runAgentAttempt({
    agent: { command: options.config.agentArgv, promptVia: 'arg' },
    prompt,
    workspace,
    requiredOutputs: state.plan.steps[stepId]?.requiredOutputs ?? [],
    env: {
      ...driver.env,
      BATON_RUN_ID: runId,
      BATON_STEP_ID: stepId,
      BATON_ATTEMPT: String(tries),
      BATON_WORKSPACE: workspace,
    },
    timeoutMs,
    killGraceMs: 5000,
    logPath: join(workspace, logRel),
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
    log(`${stepId}: stopped before it finished; the next check runs it again`);
    return 'STOPPED';
  }
  let error: string | null = null;
  if (!result.ok) {
    // As the skill: an output outside the workspace counts as missing; otherwise stderr when there is any.
    const stderr = result.process?.stderrTail.trim() ?? '';
    error = result.failedOutputs
      ? `Missing required outputs: ${result.failedOutputs.join(', ')}`
      : result.process?.timedOut
        ? 'Timeout'
        : redactSecrets(stderr || result.message, driver.secrets);
  } else {
    for (const output of result.outputs)
      if (!state.artifacts.includes(output.path)) state.artifacts.push(output.path);
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
