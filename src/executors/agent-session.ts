import { createHash } from 'node:crypto';
import type { FailureClass } from '../core/failure.js';
import type { AgentSpec } from '../core/plan/types.js';
import { hasFlag } from './agent-profiles/prompt-placement.js';
import type { AgentProfile } from './agent-profiles/types.js';

/**
 * The agent CLI's own session across the attempts of a step (`agent.resume`). Each attempt has a
 * session named in advance, a UUID derived from its run, step and attempt number (attempt numbers
 * go on across reruns, so no two attempts share one), which needs no record: a retry after an
 * interruption (the worker died), a stall, a transient failure or `agent_failed` continues the
 * session of the attempt before, forked into its own. Nothing is resumed after a success (a rerun
 * starts fresh) or when the plan says `resume: never`.
 */

/** The failures after which the next attempt continues the conversation. */
const RESUMABLE: ReadonlySet<FailureClass> = new Set(['transient', 'agent_failed', 'interrupted']);

/** What an attempt asks of its CLI's session. */
export interface AttemptSession {
  /** This attempt's own session id. */
  id: string;
  /** The session to continue, when the attempt before failed in a way a retry may pick up. */
  previous?: string;
}

/** What an attempt did with its session, for its `step.session` event. */
export interface SessionUse {
  sessionId: string;
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

/** The session of attempt `attempt`, continuing the one before after a failure a retry may pick up. */
export function attemptSession(claim: {
  runId: string;
  stepId: string;
  attempt: number;
  lastFailureClass?: FailureClass;
}): AttemptSession {
  const id = attemptSessionId(claim.runId, claim.stepId, claim.attempt);
  const resumable =
    claim.attempt > 1 && claim.lastFailureClass !== undefined && RESUMABLE.has(claim.lastFailureClass);
  return resumable
    ? { id, previous: attemptSessionId(claim.runId, claim.stepId, claim.attempt - 1) }
    : { id };
}

/**
 * The options that give the CLI its session, or none: a CLI without session support, a plan that
 * says `resume: never`, or a command that already chooses its session (`--resume`, `--session-id`).
 */
export function sessionOptions(
  profile: AgentProfile,
  agent: AgentSpec,
  session: AttemptSession | undefined,
  resume: boolean,
): string[] | null {
  const support = profile.session;
  if (!session || !support || agent.resume === 'never') return null;
  if (hasFlag(agent.command, ...support.ownFlags)) return null;
  return resume && session.previous !== undefined
    ? support.resume(session.previous, session.id)
    : support.start(session.id);
}
