import { classOfExitCode, type DeclarableClass, declaredFailure } from '../../core/declared-failure.js';
import type { FailureClass } from '../../core/failure.js';
import { stallMessage } from '../../core/stall-message.js';
import { classifyModelError } from '../../model-call/classify-model-error.js';
import { classOfAgentText, retryAfterInText } from './error-texts.js';
import { lastLines } from './json-output.js';
import type { AgentProfile, AgentReport, ProviderError } from './types.js';

/** How one agent process ended, and what its profile read from its output. */
interface AgentRun {
  profile: AgentProfile;
  /** The program as the plan names it, for messages. */
  program: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  timeoutMs: number;
  /** Stopped by the stall watchdog after this many ms without output (agent.stallTimeoutMs). */
  stalledAfterMs?: number;
  /** The process could not start (ENOENT, EACCES). */
  spawnErrorCode?: string;
  stdoutTail: string;
  stderrTail: string;
  report: AgentReport;
  /** The plan's `agent.exitCodes` (STEP_EXIT_CODES on the state.json path). */
  exitCodes?: Readonly<Record<string, DeclarableClass>>;
}

type AgentRunVerdict =
  | { ok: true }
  | {
      ok: false;
      failureClass: FailureClass;
      message: string;
      retryAfterMs?: number;
      /** The agent declared this class itself (docs/agent-clis.md, "Declaring a failure class"). */
      declared?: true;
    };

/** What `status`, events and the troubleshoot prompt may show of a failure. */
const AGENT_MESSAGE_MAX_CHARS = 500;

/**
 * Classifies one agent run, structured facts first: a start failure, the timeout, what the agent
 * declared (its `{"baton":{"class":…}}` line, the plan's `agent.exitCodes`, the class its error
 * record's HTTP status names in the generic profile), a setup problem
 * the profile recognised (untrusted folder, no auth, a bad flag), the CLI's own error record (its
 * HTTP status and type through the model-call classifier, text rules only over its message), the
 * exit code's documented meaning, then the exit itself. Exit 0 without an error record is a success
 * whatever the text says (also text a setup rule knows): the one rule for native runs and state.json.
 */
export function classifyAgentRun(run: AgentRun): AgentRunVerdict {
  const name = run.program.split('/').pop() ?? run.program;
  if (run.spawnErrorCode === 'ENOENT') {
    return fail('fatal', `agent command not found: "${run.program}" (is it installed and on PATH?)`);
  }
  if (run.spawnErrorCode)
    return fail('fatal', `agent command "${run.program}" could not start: ${run.spawnErrorCode}`);
  if (run.timedOut) {
    const last = run.report.error ? `; last error: ${run.report.error.message}` : '';
    return fail(
      'transient',
      `timed out after ${run.timeoutMs} ms; every process of the attempt was stopped${last}`,
    );
  }
  if (run.stalledAfterMs !== undefined) {
    const last = run.report.error ? `; last error: ${run.report.error.message}` : '';
    return fail(
      'transient',
      `${stallMessage(run.stalledAfterMs)}; every process of the attempt was stopped${last}`,
    );
  }
  // What the agent declared comes before anything Baton would infer: its JSON line, then the
  // plan's meaning of its exit code (core/declared-failure.ts).
  const declared = declaredFailure(run.stdoutTail);
  if (declared)
    return { ...fail(declared.failureClass, declared.message, declared.retryAfterMs), declared: true };
  const byExit = classOfExitCode(run.exitCodes, run.exitCode);
  if (byExit) {
    const detail = lastLines(run.stderrTail) || lastLines(run.stdoutTail) || '(no output)';
    return {
      ...fail(byExit, `${name} exited with code ${run.exitCode} (${byExit} by agent.exitCodes): ${detail}`),
      declared: true,
    };
  }
  const { report } = run;
  if (report.error?.declaredClass)
    return {
      ...fail(
        report.error.declaredClass,
        report.error.message,
        report.error.declaredClass === 'transient' ? report.error.retryAfterMs : undefined,
      ),
      declared: true,
    };
  // With exit 0 only a structured error record fails an attempt: a setup problem the profile read
  // from loose stderr text counts only on a failed exit (or beside such a record).
  if (report.setup && (run.exitCode !== 0 || report.error))
    return fail(report.setup.failureClass, report.setup.message);
  if (report.error) return classifyReportedError(report.error);
  if (run.exitCode === 0) return { ok: true };
  const meaning = run.exitCode === null ? undefined : run.profile.exitCodes[run.exitCode];
  const detail = lastLines(run.stderrTail) || lastLines(run.stdoutTail) || '(no output)';
  const how =
    run.exitCode === null ? `was killed by ${run.signal ?? 'a signal'}` : `exited with code ${run.exitCode}`;
  const message = `${name} ${how}${meaning ? ` (${meaning.meaning})` : ''}: ${detail}`;
  if (meaning?.failureClass) return fail(meaning.failureClass, message);
  // Only the last lines a CLI printed reach the text rules, never whole records.
  const wait = retryAfterInText(detail);
  const byText = classOfText(detail, wait);
  return fail(byText ?? 'agent_failed', message, byText === 'transient' ? wait : undefined);
}

/**
 * The CLI's own error record: an HTTP status or provider type decides through the model-call
 * classifier (500 is transient like 502–504 and 529; 401 and 404 are fatal); a context overflow is
 * the agent's to fix in a fresh session; otherwise the message's words, else `agent_failed`.
 */
export function classifyReportedError(error: ProviderError): AgentRunVerdict {
  const retryAfterMs = error.retryAfterMs ?? retryAfterInText(error.message);
  const message = cutMessage(error.message);
  // A 429 that names its wait is a rate limit, even in words that also fit a spent quota (Gemini's
  // free tier says "exceeded your current quota … Please retry in 34s").
  if (error.status === 429 && retryAfterMs !== undefined) return fail('transient', message, retryAfterMs);
  if (error.status !== undefined || error.type !== undefined) {
    const failure = classifyModelError(
      {
        ...(error.status === undefined ? {} : { status: error.status }),
        ...(error.type === undefined ? {} : { type: error.type }),
        message: error.message,
      },
      retryAfterMs === undefined ? {} : { statedWaitMs: retryAfterMs },
    );
    if (failure.reason !== 'unknown') {
      const failureClass = classOf(failure.kind);
      return fail(failureClass, message, failureClass === 'transient' ? retryAfterMs : undefined);
    }
  }
  const byText = classOfText(error.message, retryAfterMs);
  if (byText !== undefined) return fail(byText, message, byText === 'transient' ? retryAfterMs : undefined);
  return fail('agent_failed', message);
}

/**
 * The class a failure text names: the providers' texts first, through the model-call classifier and
 * the one table they share (core/provider-error-texts.ts), so an agent gets the verdict a model call
 * would; then the CLIs' own words; undefined when neither knows it. `statedWaitMs` is a wait the
 * text asked for: a quota that says when it resets is a rate limit.
 */
function classOfText(message: string, statedWaitMs: number | undefined): FailureClass | undefined {
  const failure = classifyModelError(message, statedWaitMs === undefined ? {} : { statedWaitMs });
  if (failure.reason !== 'unknown') return classOf(failure.kind);
  return classOfAgentText(message);
}

/** A model-call failure kind as an agent attempt's class: an overflow is the agent's to fix afresh. */
function classOf(kind: ReturnType<typeof classifyModelError>['kind']): FailureClass {
  return kind === 'transient' ? 'transient' : kind === 'fatal' ? 'fatal' : 'agent_failed';
}

function fail(
  failureClass: FailureClass,
  message: string,
  retryAfterMs?: number,
): Extract<AgentRunVerdict, { ok: false }> {
  return {
    ok: false,
    failureClass,
    message: cutMessage(message),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

function cutMessage(message: string): string {
  const text = message.trim();
  return text.length <= AGENT_MESSAGE_MAX_CHARS ? text : `${text.slice(0, AGENT_MESSAGE_MAX_CHARS - 1)}…`;
}
