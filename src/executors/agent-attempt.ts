import { isAbsolute, join } from 'node:path';
import { SUMMARY_MAX_CHARS } from '../core/agent-prompt.js';
import type { FailureClass, OutputArtifact } from '../core/failure.js';
import type { AgentSpec } from '../core/plan/types.js';
import { chooseProfile } from './agent-profiles/choose-profile.js';
import { classifyAgentRun } from './agent-profiles/classify-agent-run.js';
import { withOptions } from './agent-profiles/prompt-placement.js';
import type { AgentProfile, AgentReport } from './agent-profiles/types.js';
import { sumAgentUsage } from './agent-profiles/usage-sum.js';
import { applyRetryCap } from './agent-retry-cap.js';
import { type AttemptSession, recordSessionUse, type SessionUse, sessionLaunch } from './agent-session.js';
import { attemptMarkerOf } from './attempt-processes.js';
import { attemptTempDir } from './attempt-temp-dir.js';
import { type CommandPolicyMode, checkAgentCommand } from './command-policy.js';
import { DEFAULT_EXEC_PATH } from './program-lookup.js';
import { readResultFile } from './result-file.js';
import { type ProcessResult, runProcess } from './run-process.js';
import { confineCommand, type SandboxSpec, sandboxStartFailure } from './sandbox.js';
import type { TrustedPrograms } from './trusted-programs.js';
import { checkOutputPath, describeArtifact } from './workspace-paths.js';

/** What is kept in memory of each of stdout and stderr (the whole output is in the attempt log). */
const AGENT_OUTPUT_TAIL_BYTES = 1024 * 1024;

interface AgentAttemptOptions {
  agent: AgentSpec;
  prompt: string;
  /** Working directory of the agent; required outputs are resolved inside it. */
  workspace: string;
  requiredOutputs: readonly string[];
  /** A JSON file in the workspace that becomes the result's `value` (see result-file.ts). */
  resultFile?: string;
  /** The JSON Schema the result file must match. */
  resultSchema?: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  /** The environment for the CLI the chosen profile names (its own API keys); default `env`. */
  envFor?: (profile: AgentProfile) => NodeJS.ProcessEnv;
  timeoutMs: number;
  killGraceMs: number;
  /** Absolute path of the attempt log (full stdout and stderr). */
  logPath: string;
  signal?: AbortSignal;
  onSpawn?: (pid: number) => void;
  /** `legacy`: the skill's stricter rule for STEP_AGENT_CMD (also refuses any -c / -e). */
  policy?: CommandPolicyMode;
  /** The programs the operator trusted; default BATON_TRUSTED_AGENTS of this process only. */
  trust?: TrustedPrograms;
  /** Run the agent confined (`sandbox: workspace`, see sandbox.ts); undefined: unconfined. */
  sandbox?: SandboxSpec;
  /**
   * The stall watchdog (run-process.ts): ms the agent may print nothing and change no file of the
   * workspace before it is stopped as stalled; undefined or 0: no watchdog.
   */
  stallTimeoutMs?: number;
  /** Called when the agent has been silent for half of stallTimeoutMs. */
  onStalling?: (silentMs: number) => void;
  /** Paths in the workspace whose changes are no sign of the agent's life (the Baton home). */
  stallIgnore?: readonly string[];
  /** While true the agent waits for a person (a tool approval): its silence is no stall. */
  stallPaused?: () => boolean;
  /**
   * `agent.approve`: the MCP config file (mcp/tool-approval-server.ts) the CLI asks before a tool
   * runs; a profile that offers no such hook fails the attempt as `invalid`.
   */
  approvalConfig?: string;
  /** The attempt's session of the CLI (agent-session.ts); undefined: Baton leaves sessions alone. */
  session?: AttemptSession;
  /** The prompt when the attempt continues the session before (the troubleshoot turn alone). */
  resumePrompt?: string;
}

type AgentAttemptResult =
  | {
      ok: true;
      summary: string;
      outputs: OutputArtifact[];
      /** The result file's JSON value, when the step has a resultFile. */
      value?: unknown;
      exitCode: number | null;
      process: ProcessResult;
      report: AgentReport;
      session?: SessionUse;
    }
  | {
      ok: false;
      failureClass: FailureClass;
      message: string;
      exitCode: number | null;
      retryAfterMs?: number;
      /** Stopped by the signal (cancel, lease lost, shutdown, --max-time): not the agent's failure. */
      aborted: boolean;
      /** Null when the command was refused before anything ran. */
      process: ProcessResult | null;
      /** What the profile read of the output (usage counts even when the attempt failed). */
      report?: AgentReport;
      /** Declared outputs that are missing or resolve outside the workspace, in declared order. */
      failedOutputs?: string[];
      /** The agent declared the class itself (classify-agent-run.ts): the state.json path honours it. */
      declared?: true;
      /** Stopped by the stall watchdog (stallTimeoutMs). */
      stalled?: true;
      /** The CLI's session this attempt started or continued. */
      session?: SessionUse;
    };

/**
 * One supervised agent attempt, the same for native runs and state.json files: the command is
 * checked against the policy, its profile chosen (claude, codex, gemini, … or generic), the CLI's own
 * retries capped, the prompt placed where the CLI keeps it one argument (or on stdin), every process
 * of the attempt timed out and stopped, the output read and classified from its structure (exit 0
 * is not proof: an error record still fails), then required outputs must exist inside the workspace,
 * and the result file, if the step has one, must hold JSON that matches its schema.
 */
export async function runAgentAttempt(options: AgentAttemptOptions): Promise<AgentAttemptResult> {
  const result = await runAgentOnce(options);
  const session = result.session;
  if (!session?.missing) return result;
  // The CLI found no session to continue (the attempt before died before it saved one, its files
  // were removed): this attempt starts fresh, with the whole troubleshoot prompt, and says why. A
  // CLI that said so only after a turn (openclaw starts an unknown session empty) spent that turn's
  // tokens: they count in the attempt's usage.
  const fresh = await runAgentOnce({ ...options, session: { id: options.session!.id } });
  const why = `the CLI found no session ${session.sessionId} to continue: started a fresh one`;
  const usage = sumAgentUsage(result.report?.usage, fresh.report?.usage);
  const report = fresh.report || usage ? { ...fresh.report, ...(usage ? { usage } : {}) } : undefined;
  return {
    ...fresh,
    ...(report ? { report } : {}),
    session: { ...fresh.session, resumed: false, reason: why },
  };
}

/** One launch of the CLI for the attempt (runAgentAttempt launches a second when a resume finds nothing). */
async function runAgentOnce(options: AgentAttemptOptions): Promise<AgentAttemptResult> {
  // Checked before every attempt: the binary behind a name may change between attempts.
  const verdict = checkAgentCommand(options.agent.command, {
    cwd: options.workspace,
    ...(options.policy ? { mode: options.policy } : {}),
    ...(options.trust ? { trust: options.trust } : {}),
    // The child's own PATH, as spawn will search it (none: spawn's default, not this process's).
    pathEnv: options.env.PATH ?? DEFAULT_EXEC_PATH,
  });
  if (!verdict.ok)
    return {
      ok: false,
      failureClass: 'invalid',
      message: verdict.reason,
      exitCode: null,
      aborted: false,
      process: null,
    };
  const profile = chooseProfile(options.agent, verdict.programIndex);
  const attemptBase = options.logPath.replace(/\.log$/, '');
  const capped = applyRetryCap(
    profile,
    options.agent,
    options.envFor?.(profile) ?? options.env,
    attemptBase,
    verdict.programIndex,
  );
  if (options.approvalConfig !== undefined && !profile.toolApprovals)
    return {
      ok: false,
      failureClass: 'invalid',
      message: `agent.approve: ${toolApprovalsRefusal(profile.name)}`,
      exitCode: null,
      aborted: false,
      process: null,
    };
  const launch = sessionLaunch(profile, options.agent, options.session);
  const approvalArgs =
    options.approvalConfig === undefined ? [] : (profile.toolApprovals?.args(options.approvalConfig) ?? []);
  // The attempt's own options: its session's, and its permission tool's.
  const added = [...(launch?.args ?? []), ...approvalArgs];
  const addedArgs = added.length > 0 ? added : null;
  const session: SessionUse | undefined = launch?.use;
  recordSessionUse(profile, options.logPath, session);
  const resumed = session?.resumed === true;
  const { argv, stdinText } = profile.invocation(
    {
      ...options.agent,
      command: addedArgs ? withOptions(capped.command, addedArgs, verdict.programIndex) : capped.command,
    },
    resumed && options.resumePrompt !== undefined ? options.resumePrompt : options.prompt,
    verdict.programIndex,
  );
  const withSession = <T extends object>(value: T): T & { session?: SessionUse } =>
    session ? { ...value, session } : value;
  const temp = attemptTempDir(profile, capped.env, attemptBase);
  const env = temp.env;
  const cleanup = () => {
    capped.cleanup();
    temp.cleanup();
  };
  const marker = attemptMarkerOf(env);
  // Not found (null): nothing runs, confined or not.
  const confined = withCleanupOnThrow(cleanup, () =>
    options.sandbox && verdict.executable !== null
      ? confineCommand({
          ...options.sandbox,
          workspace: options.workspace,
          // The user's environment: the CLI's real folders, also behind an overlay's links.
          writable: profile.confinedWritable?.(options.env) ?? [],
          attemptPaths: [...capped.attemptPaths, ...temp.attemptPaths],
          executable: verdict.executable,
          // The plan's own elements only: a prompt never chooses what stays visible.
          programFiles: options.agent.command.map((arg) =>
            isAbsolute(arg) ? arg : join(options.workspace, arg),
          ),
          argv,
          env,
          marker,
        })
      : undefined,
  );
  const result = await runProcess({
    // Enough of stdout for a CLI's final record or JSON object however long its answer.
    tailBytes: AGENT_OUTPUT_TAIL_BYTES,
    argv: confined?.argv ?? argv,
    // The file the policy checked, or null (not found: nothing runs) – never a new search by name.
    executable: confined?.executable ?? verdict.executable,
    cwd: options.workspace,
    env: confined?.env ?? env,
    ...(confined ? { launcher: true, statusFd: true } : {}),
    ...(stdinText === undefined ? {} : { stdinText }),
    timeoutMs: options.timeoutMs,
    killGraceMs: options.killGraceMs,
    logPath: options.logPath,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}),
    ...(options.stallTimeoutMs
      ? {
          stallTimeoutMs: options.stallTimeoutMs,
          watchFolder: options.workspace,
          ...(options.stallIgnore ? { watchIgnore: options.stallIgnore } : {}),
          ...(options.onStalling ? { onStalling: options.onStalling } : {}),
          ...(options.stallPaused ? { stallPaused: options.stallPaused } : {}),
        }
      : {}),
    ...(marker ? { marker } : {}),
  }).finally(cleanup);
  const unconfinable = confined ? sandboxStartFailure(result) : undefined;
  if (unconfinable !== undefined) {
    // Never retried: the next attempt would fail the same way, and running unconfined is no option.
    return withSession({
      ok: false,
      failureClass: 'fatal',
      message: unconfinable,
      exitCode: null,
      aborted: false,
      process: result,
    });
  }
  const output = { stdout: result.stdoutTail, stderr: result.stderrTail, exitCode: result.exitCode };
  const report = profile.read(output);
  if (session?.resumed && !result.aborted && profile.session?.missing(output)) session.missing = true;
  // A CLI that names its sessions: this attempt's own, from its output.
  if (session && session.sessionId === undefined) {
    // (gemini prints its record on stderr when it fails.)
    const found = profile.session?.found?.(output.stdout) ?? profile.session?.found?.(output.stderr);
    if (found !== undefined) session.sessionId = found;
  }
  if (result.aborted) {
    const message = 'stopped before it finished (cancelled, lease lost, shutting down or out of time)';
    return withSession({
      ok: false,
      failureClass: 'interrupted',
      message,
      exitCode: result.exitCode,
      aborted: true,
      process: result,
      report,
    });
  }
  const exit = classifyAgentRun({
    profile,
    program: options.agent.command[verdict.programIndex] ?? options.agent.command[0] ?? '',
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    timeoutMs: options.timeoutMs,
    ...(result.stalled ? { stalledAfterMs: options.stallTimeoutMs ?? 0 } : {}),
    stdoutTail: result.stdoutTail,
    stderrTail: result.stderrTail,
    report,
    ...(options.agent.exitCodes ? { exitCodes: options.agent.exitCodes } : {}),
    ...(result.spawnError ? { spawnErrorCode: result.spawnError.code } : {}),
  });
  if (!exit.ok) {
    const retryAfter = exit.retryAfterMs === undefined ? {} : { retryAfterMs: exit.retryAfterMs };
    return withSession({
      ok: false,
      failureClass: exit.failureClass,
      message: exit.message,
      exitCode: result.exitCode,
      aborted: false,
      process: result,
      report,
      ...retryAfter,
      ...(exit.declared ? { declared: true as const } : {}),
      ...(result.stalled ? { stalled: true as const } : {}),
    });
  }
  const missing: string[] = [];
  const refused: string[] = [];
  const failedOutputs: string[] = [];
  const outputs: OutputArtifact[] = [];
  for (const relPath of options.requiredOutputs) {
    const check = await checkOutputPath(options.workspace, relPath);
    if (check.ok) outputs.push(await describeArtifact(options.workspace, check.absPath));
    else {
      failedOutputs.push(relPath);
      if (check.problem === 'missing') missing.push(relPath);
      else refused.push(check.message);
    }
  }
  const failed = (failureClass: FailureClass, message: string): AgentAttemptResult =>
    withSession({
      ok: false as const,
      failureClass,
      message,
      exitCode: result.exitCode,
      aborted: false,
      process: result,
      report,
      failedOutputs,
    });
  // An output resolving outside the workspace is a safety problem for a human, not something to retry.
  if (refused.length > 0) return failed('invalid', `Refused outputs: ${refused.join('; ')}`);
  if (missing.length > 0) return failed('agent_failed', `Missing required outputs: ${missing.join(', ')}`);
  // What is wrong with the result file is the agent's to fix: the retry's prompt says what.
  const resultFile =
    options.resultFile === undefined
      ? undefined
      : await readResultFile(options.workspace, options.resultFile, options.resultSchema);
  if (resultFile?.ok === false) return failed('agent_failed', resultFile.message);
  return withSession({
    ok: true,
    summary: (report.answer ?? '').slice(-SUMMARY_MAX_CHARS),
    outputs,
    ...(resultFile?.ok ? { value: resultFile.value } : {}),
    exitCode: result.exitCode,
    process: result,
    report,
  });
}

/** Why `agent.approve` cannot work with a profile (one place for the run's start and the attempt). */
export function toolApprovalsRefusal(profile: string): string {
  return `the ${profile} agent CLI offers no hook that asks Baton before a tool runs (claude does, with --permission-prompt-tool): remove "approve", or approve between steps with a wait step`;
}

/** `make()`, running `cleanup` when it throws (what the attempt made is not left behind). */
function withCleanupOnThrow<T>(cleanup: () => void, make: () => T): T {
  try {
    return make();
  } catch (error) {
    cleanup();
    throw error;
  }
}
