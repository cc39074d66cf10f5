import type { AttemptRecord, Store } from '../store/store.js';

/**
 * A step's attempts as `baton logs --json` and the console list them: each with the agent CLI's
 * session it started or continued (`agent.resume`), from the attempt's `step.session` event, and
 * why it did not continue the one before when it meant to.
 */

export interface AttemptSessionView {
  sessionId: string;
  resumed: boolean;
  reason?: string;
}

export type AttemptWithSession = AttemptRecord & { session?: AttemptSessionView };

/** The step's attempts (read through `store`, masked when it is), each with its session when it had one. */
export async function attemptsWithSessions(
  store: Store,
  runId: string,
  stepId: string,
): Promise<AttemptWithSession[]> {
  const [attempts, events] = await Promise.all([store.getAttempts(runId, stepId), store.getEvents(runId)]);
  const sessions = new Map<number, AttemptSessionView>();
  for (const event of events) {
    if (event.type !== 'step.session' || event.stepId !== stepId) continue;
    const { sessionId, resumed, reason } = event;
    sessions.set(event.attempt, { sessionId, resumed, ...(reason === undefined ? {} : { reason }) });
  }
  return attempts.map((attempt) => {
    const session = sessions.get(attempt.attempt);
    return session ? { ...attempt, session } : attempt;
  });
}
