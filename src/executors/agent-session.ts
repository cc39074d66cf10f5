import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { FailureClass } from '../core/failure.js';
import type { AgentSpec } from '../core/plan/types.js';
import { hasFlag } from './agent-profiles/prompt-placement.js';
import type { AgentProfile } from './agent-profiles/types.js';

/**
 * The agent CLI's own session across the attempts of a step (`agent.resume`). Each attempt has a
 * session named in advance, a UUID derived from its run, step and attempt number (attempt numbers
 * go on across reruns, so no two attempts share one), which needs no record: a retry after an
 * interruption (the worker died), a stall, a transient failure or `agent_failed` continues the
 * session of the attempt before, forked into its own (claude), or goes on in it under its name
 * (codex, gemini, openclaw: the id read from that attempt's log). Nothing is resumed after a success (a rerun
 * starts fresh) or when the plan says `resume: never`.
 */

/** The failures after which the next attempt continues the conversation. */
const RESUMABLE: ReadonlySet<FailureClass> = new Set(['transient', 'agent_failed', 'interrupted']);

/** What an attempt asks of its CLI's session. */
export interface AttemptSession {
  /** This attempt's own session id, for a CLI whose sessions Baton names. */
  id: string;
  /** The attempt before's session id, when it failed in a way a retry may pick up. */
  previous?: string;
  /** That attempt's log (its output), for a CLI that names its sessions itself (codex). */
  previousLog?: () => string | undefined;
  /** The session that attempt used, as recorded beside its log (sessionRecordPath), on this machine. */
  previousUsed?: () => string | undefined;
  /** Why the attempt before's session is not continued although it could be (its files changed). */
  freshBecause?: string;
}

/** What an attempt did with its session, for its `step.session` event. */
export interface SessionUse {
  /** Unknown until the CLI says it, for a CLI that names its sessions itself. */
  sessionId?: string;
  resumed: boolean;
  /** Why it did not resume the attempt before, when it had meant to. */
  reason?: string;
  /** The CLI said it found no session to continue (agent-attempt.ts then starts it fresh). */
  missing?: true;
}

/** The session id of one attempt: a UUID (version 4 layout) of sha256(run, step, attempt). */
export function attemptSessionId(runId: string, stepId: string, attempt: number): string {
  const hex = createHash('sha256').update(`${runId}\0${stepId}\0${attempt}`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The session of attempt `attempt`, continuing the one before after a failure a retry may pick up.
 * `logOf(attempt)`: the path of an attempt's log, read (its first MiB) only for a CLI that names its
 * sessions itself.
 */
export function attemptSession(
  claim: { runId: string; stepId: string; attempt: number; lastFailureClass?: FailureClass },
  logOf: (attempt: number) => string,
): AttemptSession {
  const id = attemptSessionId(claim.runId, claim.stepId, claim.attempt);
  const resumable =
    claim.attempt > 1 && claim.lastFailureClass !== undefined && RESUMABLE.has(claim.lastFailureClass);
  if (!resumable) return { id };
  return {
    id,
    previous: attemptSessionId(claim.runId, claim.stepId, claim.attempt - 1),
    previousLog: () => readHead(logOf(claim.attempt - 1), LOG_HEAD_BYTES),
    previousUsed: () => {
      const id = readHead(sessionRecordPath(logOf(claim.attempt - 1)), 128)?.trim();
      return id !== undefined && SESSION_ID.test(id) ? id : undefined;
    },
  };
}

/** What Baton names sessions (attemptSessionId): a UUID. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Beside an attempt's log, the session id it used, for a CLI that continues sessions in place. */
function sessionRecordPath(logPath: string): string {
  return logPath.replace(/\.log$/, '.session');
}

/**
 * Records, beside the attempt's log, the session a CLI that continues sessions in place was given:
 * the next attempt goes on in it, whatever this one printed (openclaw says its session only when its
 * turn finished). Written before the CLI starts, so an attempt that dies still leaves it.
 */
export function recordSessionUse(profile: AgentProfile, logPath: string, use: SessionUse | undefined): void {
  if (!profile.session?.inPlace || use?.sessionId === undefined) return;
  mkdirSync(dirname(logPath), { recursive: true, mode: 0o700 });
  writeFileSync(sessionRecordPath(logPath), `${use.sessionId}\n`, { mode: 0o600 });
}

/** How much of the attempt before's log is searched for its session id (codex prints it first). */
const LOG_HEAD_BYTES = 1024 * 1024;

/** The first `bytes` of a file as text, or undefined when it cannot be read (not on this machine). */
function readHead(path: string, bytes: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(bytes);
    const read = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The options that give the CLI its session and what the attempt does with it, or null (Baton
 * leaves the session alone): a CLI without session support, a plan that says `resume: never`, or a
 * command that already chooses its session (`--resume`, `--session-id`).
 */
export function sessionLaunch(
  profile: AgentProfile,
  agent: AgentSpec,
  session: AttemptSession | undefined,
): { args: string[]; use: SessionUse } | null {
  const support = profile.session;
  if (!session || !support || agent.resume === 'never') return null;
  if (hasFlag(agent.command, ...support.ownFlags)) return null;
  if (support.keepsSessions && !support.keepsSessions(agent.command)) return null;
  const fresh = (reason?: string) => ({
    args: support.start ? support.start(session.id) : [],
    use: {
      ...(support.start ? { sessionId: session.id } : {}),
      resumed: false,
      ...(reason ? { reason } : {}),
    },
  });
  if (session.previous === undefined) return fresh(session.freshBecause);
  // A CLI that names its sessions itself said the name in the attempt before's output; one that goes
  // on in a named session continues the one that attempt used (itself perhaps a continued one).
  const previous = support.found
    ? support.found(session.previousLog?.() ?? '')
    : support.inPlace
      ? session.previousUsed?.()
      : session.previous;
  if (previous === undefined)
    return fresh(
      support.inPlace
        ? 'the attempt before left no record of its session on this machine: started a fresh one'
        : 'the attempt before left no session id in its log on this machine: started a fresh one',
    );
  // A named session is forked into the attempt's own; any other goes on under its name.
  const sessionId = support.start && !support.inPlace ? session.id : previous;
  return { args: support.resume(previous, session.id), use: { sessionId, resumed: true } };
}
