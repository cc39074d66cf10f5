import { isBatonError } from '../core/errors.js';
import type { AttemptResult, ExecutionContext } from './step-executor.js';
import {
  type CheckpointPlace,
  lastStepTree,
  rememberStepTree,
  snapshotWorkspace,
} from './workspace-checkpoints.js';

/**
 * An agent attempt between two workspace checkpoints (`checkpoint: workspace`): the tree before it
 * starts and after it ends, each as a `step.checkpoint` event. Without a checkpoint to go back to,
 * a rerun could not restore the files, so a `before` that cannot be recorded fails the attempt
 * (git missing or refusing: fatal, with git's reason; the store not taking the event: transient).
 * An `after` that cannot be recorded only leaves `diff --files` without that attempt's end.
 */
export async function betweenCheckpoints(
  context: ExecutionContext,
  /** The folders never recorded (the Baton home): asked only when the step is checkpointed. */
  hidden: () => readonly string[],
  attempt: (changedSince: string | null) => Promise<AttemptResult>,
): Promise<AttemptResult> {
  const { claim } = context;
  const checkpoint = claim.step.checkpoint;
  if (checkpoint === undefined) return attempt(null);
  const place: CheckpointPlace = {
    home: context.home,
    runId: claim.runId,
    workspace: claim.workspace,
    exclude: checkpoint.exclude,
    hidden: hidden(),
  };
  const event = { type: 'step.checkpoint' as const, stepId: claim.stepId, attempt: claim.attempt };
  let before: string;
  try {
    before = await snapshotWorkspace(place);
  } catch (error) {
    const message = isBatonError(error) ? error.message : `checkpoint: ${(error as Error).message}`;
    return { outcome: { ok: false, failureClass: 'fatal', message }, logPath: null };
  }
  try {
    await context.recordEvents([{ ...event, phase: 'before', tree: before }]);
  } catch (error) {
    const message = `checkpoint: the store did not take the workspace's record: ${(error as Error).message}`;
    return { outcome: { ok: false, failureClass: 'transient', message }, logPath: null };
  }
  // The folder is not as the attempt before left it (a rollback, a restore, a person's edit): an
  // agent session that remembers those files must not be continued.
  const left = claim.attempt > 1 ? lastStepTree(context.home, claim.runId, claim.stepId) : null;
  const changedSince =
    left !== null && left !== before
      ? `the workspace changed since attempt ${claim.attempt - 1} ended (restored or edited): started a fresh session`
      : null;
  const result = await attempt(changedSince);
  if (!context.signal.aborted) {
    try {
      const after = await snapshotWorkspace(place);
      rememberStepTree(context.home, claim.runId, claim.stepId, after);
      await context.recordEvents([{ ...event, phase: 'after', tree: after }]);
    } catch {
      // The attempt's outcome stands; only its `after` record is missing (diff --files says so).
    }
  }
  return result;
}
