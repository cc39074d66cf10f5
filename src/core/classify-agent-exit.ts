import type { FailureClass } from './failure.js';

/** What an agent CLI process came to, as seen by the executor (no I/O here). */
export interface AgentExit {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  timeoutMs: number;
  spawnErrorCode?: string;
  command: string;
  stdoutTail: string;
  stderrTail: string;
}

export type AgentExitVerdict =
  | { ok: true }
  | { ok: false; failureClass: FailureClass; message: string; retryAfterMs?: number };

interface TextRule {
  pattern: RegExp;
  failureClass: FailureClass;
  hint: string;
}

/**
 * Failure text of the agent CLIs (../shared/AGENT-CLIS.md), most specific first.
 * Fatal rules come before transient ones: "billing_error ... 429" is still a billing problem.
 */
const TEXT_RULES: readonly TextRule[] = [
  {
    pattern: /authentication_failed|invalid api key|invalid x-api-key|unauthori[sz]ed|\b401\b/i,
    failureClass: 'fatal',
    hint: 'authentication failed',
  },
  {
    pattern: /billing_error|out of credits|spend cap|credit balance is too low/i,
    failureClass: 'fatal',
    hint: 'billing or credits',
  },
  {
    pattern: /cannot be used with root\/sudo privileges/i,
    failureClass: 'fatal',
    hint: 'the CLI refuses to run as root',
  },
  {
    pattern: /permission denied|\bEACCES\b|\b403\b|forbidden/i,
    failureClass: 'fatal',
    hint: 'permission denied',
  },
  {
    pattern: /model[^\n]{0,40}not found|unknown model|\b404\b[^\n]{0,40}model/i,
    failureClass: 'fatal',
    hint: 'unknown model',
  },
  {
    pattern: /you've hit your (usage )?limit|usage limit reached|monthly usage limit reached/i,
    failureClass: 'transient',
    hint: 'usage limit reached',
  },
  {
    pattern: /rate_limit_error|rate limit|ratelimit|too many requests|\b429\b|litellm\.RateLimitError/i,
    failureClass: 'transient',
    hint: 'rate limited',
  },
  {
    pattern: /overloaded_error|overloaded|\b529\b|\b50[234]\b|service unavailable|bad gateway/i,
    failureClass: 'transient',
    hint: 'provider overloaded or unavailable',
  },
  {
    pattern: /RESOURCE_EXHAUSTED|resource has been exhausted|exceeded your current quota|quota exceeded/i,
    failureClass: 'transient',
    hint: 'quota exhausted',
  },
  {
    pattern:
      /\bECONNRESET\b|\bECONNREFUSED\b|\bETIMEDOUT\b|\bEAI_AGAIN\b|\bEPIPE\b|socket hang up|network error/i,
    failureClass: 'transient',
    hint: 'connection problem',
  },
];

/** Exit 0 is not proof of success: these markers on a zero exit still mean the work did not happen. */
const ZERO_EXIT_FAILURES: readonly RegExp[] = [/litellm\.RateLimitError/, /you've hit your (usage )?limit/i];

/** gemini's documented exit codes that no retry can fix (41 auth, 42 input, 44 sandbox, 52 config). */
const FATAL_EXIT_CODES_BY_COMMAND: Readonly<Record<string, readonly number[]>> = {
  gemini: [41, 42, 44, 52],
};

const RETRY_IN =
  /(?:retrying|try again) in (\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec(?:ond)?s?|m|min(?:ute)?s?|h|hours?)\b/i;

function retryAfterFrom(text: string): number | undefined {
  const match = RETRY_IN.exec(text);
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = (match[2] ?? 's').toLowerCase();
  const factor =
    unit.startsWith('ms') || unit.startsWith('milli')
      ? 1
      : unit.startsWith('h')
        ? 3_600_000
        : unit.startsWith('m')
          ? 60_000
          : 1000;
  return Math.round(amount * factor);
}

/** The last few non-empty lines of the output: what a human needs to see first. */
export function lastLines(text: string, maxChars = 500): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.length > 0);
  let out = '';
  for (let i = lines.length - 1; i >= 0; i--) {
    const next = out.length === 0 ? lines[i]! : `${lines[i]}\n${out}`;
    if (next.length > maxChars) break;
    out = next;
  }
  if (out.length === 0 && lines.length > 0) out = lines[lines.length - 1]!.slice(-maxChars);
  return out;
}

/** A claude `--output-format json` final record that says the run failed although the exit code is 0. */
function claudeResultError(stdoutTail: string): string | null {
  const lastLine = lastLines(stdoutTail, 100_000).split('\n').pop() ?? '';
  if (!lastLine.startsWith('{')) return null;
  try {
    const record = JSON.parse(lastLine) as {
      type?: unknown;
      is_error?: unknown;
      subtype?: unknown;
      result?: unknown;
    };
    if (record.type === 'result' && record.is_error === true) {
      return `agent reported an error (${String(record.subtype ?? 'is_error')})${typeof record.result === 'string' ? `: ${record.result}` : ''}`;
    }
  } catch {
    return null;
  }
  return null;
}

function baseName(command: string): string {
  return command.split('/').pop() ?? command;
}

/** Classifies one agent process ending into the shared failure vocabulary. Structured facts first, text last. */
export function classifyAgentExit(exit: AgentExit): AgentExitVerdict {
  const name = baseName(exit.command);
  if (exit.spawnErrorCode === 'ENOENT') {
    return {
      ok: false,
      failureClass: 'fatal',
      message: `agent command not found: "${exit.command}" (is it installed and on PATH?)`,
    };
  }
  if (exit.spawnErrorCode) {
    return {
      ok: false,
      failureClass: 'fatal',
      message: `agent command "${exit.command}" could not start: ${exit.spawnErrorCode}`,
    };
  }
  if (exit.timedOut) {
    return {
      ok: false,
      failureClass: 'transient',
      message: `timed out after ${exit.timeoutMs} ms; the process group was killed`,
    };
  }
  const text = `${exit.stderrTail}\n${exit.stdoutTail}`;
  if (exit.exitCode === 0) {
    const reported = claudeResultError(exit.stdoutTail);
    const zeroExitFailure = ZERO_EXIT_FAILURES.some((pattern) => pattern.test(text));
    if (!reported && !zeroExitFailure) return { ok: true };
    const message = reported ?? lastLines(text);
    const rule = TEXT_RULES.find((candidate) => candidate.pattern.test(message));
    return withRetryAfter({ ok: false, failureClass: rule?.failureClass ?? 'agent_failed', message }, text);
  }
  const detail = lastLines(exit.stderrTail) || lastLines(exit.stdoutTail) || '(no output)';
  const how =
    exit.exitCode === null
      ? `was killed by ${exit.signal ?? 'a signal'}`
      : `exited with code ${exit.exitCode}`;
  const message = `${name} ${how}: ${detail}`;
  if (exit.exitCode !== null && FATAL_EXIT_CODES_BY_COMMAND[name]?.includes(exit.exitCode)) {
    return { ok: false, failureClass: 'fatal', message };
  }
  const rule = TEXT_RULES.find((candidate) => candidate.pattern.test(text));
  return withRetryAfter({ ok: false, failureClass: rule?.failureClass ?? 'agent_failed', message }, text);
}

function withRetryAfter(
  verdict: { ok: false; failureClass: FailureClass; message: string },
  text: string,
): AgentExitVerdict {
  if (verdict.failureClass !== 'transient') return verdict;
  const retryAfterMs = retryAfterFrom(text);
  return retryAfterMs === undefined ? verdict : { ...verdict, retryAfterMs };
}
