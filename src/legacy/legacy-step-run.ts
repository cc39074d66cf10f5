import { createHash } from 'node:crypto';
import { isAbsolute, join, relative } from 'node:path';
import { redactSecrets } from '../core/redact.js';
import { runAgentAttempt } from '../executors/agent-attempt.js';
import type { AgentPidFile } from './agent-pid-file.js';
import type { LegacyConfig } from './legacy-config.js';
import { legacyOutputs } from './legacy-outputs.js';
import { runNumberOf } from './legacy-rules.js';
import { type LegacyState, requiredOutputsOf } from './state-file.js';

/** The sidecar folder beside a state file: the lock, the agent logs and the running agent's pid. */
export function sidecarDir(statePath: string): string {
  return `${statePath}.baton`;
}

/** The BATON_RUN_ID of a state file's agents: one per file (its real path). */
export function legacyRunId(statePath: string): string {
  return `statefile-${createHash('sha256').update(statePath).digest('hex').slice(0, 12)}`;
}

/** The skill keeps 500 characters of stderr in `error`; the full output is in the log named beside it. */
const ERROR_CHARS = 500;

/** Where a check works: the state file itself (a symlink's target) and the folder outputs are relative to. */
export interface LegacyPaths {
  statePath: string;
  /** The folder of the path as given (a symlink's folder, as the skill's `Path(state).parent`). */
  workspace: string;
}

/** What every step of one check shares. */
export interface LegacyDriver extends LegacyPaths {
  state: LegacyState;
  config: LegacyConfig;
  timeoutMs: number;
  /** Aborts a running agent (--max-time, SIGTERM); its try does not count. */
  signal?: AbortSignal;
  /** Confine the agents with this bwrap: the state file and its sidecar hidden. */
  bwrap?: string;
  now: () => number;
  log: (line: string) => void;
  save: () => void;
  pidFile: AgentPidFile;
  /** The agent's environment without the step's own variables, built once (copying process.env is slow). */
  env: NodeJS.ProcessEnv;
  /** Masked in the `error` a failed step leaves in the state file and in the check's output (see runSecrets). */
  secrets: readonly string[];
}

/**
 * One run of a step: IN_PROGRESS written before the agent starts, its outcome (DONE with its
 * required outputs added to `artifacts`, or FAILED with `error`) left in the state for the caller
 * to write. STOPPED: aborted, the entry as it was before (that try does not count).
 */
export async function runLegacyStep(
  driver: LegacyDriver,
  stepId: string,
  prompt: string,
  tries: number,
  interruptions: number,
): Promise<'DONE' | 'FAILED' | 'STOPPED'> {
  const { statePath, workspace, state, now, log, save, pidFile } = driver;
  const run = runNumberOf({ tries, interruptions });
  // Once the step has been interrupted a try may run more than once: each run keeps its own log,
  // named by the step's run number too.
  const rerun = interruptions > 0 ? `.run-${run}` : '';
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
  delete state.stepRuns[stepId]!.failureClass;
  save();
  log(`${stepId}: started (try ${tries})`);
  const runId = legacyRunId(statePath);
  const outputs = legacyOutputs(workspace, requiredOutputsOf(state.plan.steps[stepId]!));
  const result = await runAgentAttempt({
    agent: {
      command: driver.config.agentArgv,
      promptVia: 'arg',
      ...(driver.config.exitCodes ? { exitCodes: driver.config.exitCodes } : {}),
    },
    prompt,
    workspace,
    requiredOutputs: outputs.map((output) => output.path),
    env: {
      ...driver.env,
      BATON_RUN_ID: runId,
      BATON_STEP_ID: stepId,
      // The run number, not the try: a resumed run must not carry the marker of the interrupted
      // one, whose leftovers it would otherwise take for its own (and an agent for its own retry).
      BATON_ATTEMPT: String(run),
      BATON_WORKSPACE: workspace,
    },
    timeoutMs: driver.timeoutMs,
    killGraceMs: 5000,
    logPath,
    policy: 'legacy',
    trust: driver.config.trust,
    // The state file is this driver's database, the sidecar folder its home.
    ...(driver.bwrap ? { sandbox: { bwrap: driver.bwrap, hidden: [statePath, sidecarDir(statePath)] } } : {}),
    ...(driver.signal ? { signal: driver.signal } : {}),
    onSpawn: (pid) => pidFile.record({ pid, runId, stepId, attempt: run }),
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
        : // What the agent declared is its own word on the failure; otherwise stderr, as the skill.
          redactSecrets(result.declared ? result.message : stderr || result.message, driver.secrets);
  } else {
    // Beyond the skill, which leaves `artifacts` to its agent: "paths to files created, for the
    // final summary" is what a step's required outputs are, so a step that succeeds lists them.
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
  // A class the agent declared that needs a person: the step is blocked, not tried again.
  if (!result.ok && result.declared && (result.failureClass === 'invalid' || result.failureClass === 'fatal'))
    entry.failureClass = result.failureClass;
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
