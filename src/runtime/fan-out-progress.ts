import type { Plan } from '../core/plan/types.js';
import type { StepStatus } from '../core/run-state.js';

/** Where a fan-out's items are: what `baton status` and the console show of a group. */
export interface FanOutProgress {
  groupId: string;
  total: number;
  done: number;
  running: number;
  blocked: number;
}

/** Item states that are not done yet; an item is never pending (it is created ready). */
const NOT_DONE: ReadonlySet<StepStatus> = new Set(['ready', 'running', 'retry_wait', 'blocked']);

/**
 * The progress of each expanded fan-out of a run, in plan order. `steps` may be only some of the
 * run's steps, as long as it holds every step not done (what `status` reads of a large run): items
 * not among them are done.
 */
export function fanOutProgress(
  plan: Plan,
  steps: readonly { stepId: string; status: StepStatus }[],
): FanOutProgress[] {
  const groups = new Map<string, FanOutProgress>();
  for (const step of plan.steps) {
    const group = step.forEachItem?.group;
    if (group === undefined) continue;
    let progress = groups.get(group);
    if (!progress) {
      progress = { groupId: group, total: 0, done: 0, running: 0, blocked: 0 };
      groups.set(group, progress);
    }
    progress.total += 1;
    progress.done += 1;
  }
  const itemGroup = new Map<string, string>();
  for (const step of plan.steps) if (step.forEachItem) itemGroup.set(step.id, step.forEachItem.group);
  for (const step of steps) {
    const group = itemGroup.get(step.stepId);
    if (group === undefined || !NOT_DONE.has(step.status)) continue;
    const progress = groups.get(group)!;
    progress.done -= 1;
    if (step.status === 'running') progress.running += 1;
    if (step.status === 'blocked') progress.blocked += 1;
  }
  return [...groups.values()];
}

/** `summarise 12/40 done, 2 running` (and `, 1 blocked` when some are). */
export function fanOutLine(progress: FanOutProgress): string {
  const blocked = progress.blocked > 0 ? `, ${progress.blocked} blocked` : '';
  return `${progress.groupId} ${progress.done}/${progress.total} done, ${progress.running} running${blocked}`;
}
