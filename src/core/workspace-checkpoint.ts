import type { StoredEvent } from './events.js';
import type { Plan } from './plan/types.js';
import { descendantPositions } from './rerun.js';
import { planIndex, type RunStatus } from './run-state.js';

/**
 * Which recorded workspace (`step.checkpoint` events, `checkpoint: workspace`) stands for "the files
 * as they were before step S": the `before` tree of the first attempt of S in its latest execution,
 * that is since the last `rerun` that ran S again (a human's `retry` of a blocked step goes on with
 * the same execution, so its tree stays). A fan-out group stands for its items: the first of theirs.
 * And what a step changed: from that tree to the `after` tree of its latest attempt.
 */

/** A recorded tree with the attempt and event it came from. */
export interface CheckpointRef {
  stepId: string;
  attempt: number;
  tree: string;
  seq: number;
}

/** The group of an item step (its plan snapshot says: `forEachItem.group`), else the step itself. */
function groupOf(plan: Plan, stepId: string): string {
  const at = planIndex(plan).position.get(stepId);
  return (at === undefined ? undefined : plan.steps[at]?.forEachItem?.group) ?? stepId;
}

/** Whether `stepId` is `target` or, when `target` is a fan-out group, one of its items. */
export function isStepOrItemOf(plan: Plan, stepId: string, target: string): boolean {
  return stepId === target || groupOf(plan, stepId) === target;
}

/** Whether any step of the plan is checkpointed (`checkpoint: workspace`). */
export function planHasCheckpoints(plan: Plan): boolean {
  return plan.steps.some((step) => step.checkpoint !== undefined);
}

/**
 * Per step: the `before` tree of its current execution's first attempt, and the `after` tree of
 * its latest attempt. A rerun event resets the steps it ran again: `from` with its items, and
 * unless `only`, every step that depends on it, but for those it kept (and what rests on them alone).
 */
export function currentCheckpoints(
  plan: Plan,
  events: readonly StoredEvent[],
): Map<string, { before: CheckpointRef | null; after: CheckpointRef | null }> {
  const found = new Map<string, { before: CheckpointRef | null; after: CheckpointRef | null }>();
  for (const event of events) {
    if (event.type === 'run.rerun_requested') {
      const later = event.only
        ? new Set<string>()
        : new Set(
            [...descendantPositions(plan, [groupOf(plan, event.stepId)], new Set(event.kept ?? []))].map(
              (at) => plan.steps[at]!.id,
            ),
          );
      for (const stepId of [...found.keys()]) {
        if (isStepOrItemOf(plan, stepId, event.stepId) || later.has(groupOf(plan, stepId)))
          found.delete(stepId);
      }
      continue;
    }
    if (event.type !== 'step.checkpoint') continue;
    const ref = { stepId: event.stepId, attempt: event.attempt, tree: event.tree, seq: event.seq };
    const entry = found.get(event.stepId) ?? { before: null, after: null };
    if (event.phase === 'before') entry.before ??= ref;
    else entry.after = ref;
    found.set(event.stepId, entry);
  }
  return found;
}

/**
 * The tree that stands for "before `stepId`" (the earliest among a group's items), or null when no
 * attempt of it was checkpointed in its current execution.
 */
export function checkpointBefore(
  plan: Plan,
  events: readonly StoredEvent[],
  stepId: string,
): CheckpointRef | null {
  let first: CheckpointRef | null = null;
  for (const [id, entry] of currentCheckpoints(plan, events)) {
    if (!isStepOrItemOf(plan, id, stepId) || entry.before === null) continue;
    if (first === null || entry.before.seq < first.seq) first = entry.before;
  }
  return first;
}

/** Runs whose files may be put back: nothing of them runs or can start without a person. */
const RESTORABLE: ReadonlySet<RunStatus> = new Set(['blocked', 'succeeded', 'failed', 'cancelled']);

/**
 * Why the files of a run cannot be put back now (null: they can): while it runs (or awaits
 * approval), a step could start in a half-restored folder, or an agent write under the restore.
 */
export function restoreRefusal(
  runId: string,
  status: RunStatus,
  runningSteps: readonly string[],
  keepFilesFlag: string | null,
): string | null {
  if (RESTORABLE.has(status) && runningSteps.length === 0) return null;
  const running = runningSteps.length > 0 ? ` (running: ${runningSteps.slice(0, 5).join(', ')})` : '';
  const keep = keepFilesFlag ? `, or leave the files as they are with ${keepFilesFlag}` : '';
  return `run ${runId} is ${status}${running}: its workspace cannot be put back while steps may run in it; wait until it is blocked or finished, or cancel it (baton cancel ${runId})${keep}`;
}
