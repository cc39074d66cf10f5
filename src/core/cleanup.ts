import type { Draft } from './draft.js';
import { executorFields } from './fallback.js';
import type { CleanupMark, EndStatus, Plan, PlanStep } from './plan/types.js';
import {
  DUE_STEP_STATUSES,
  FINAL_STEP_STATUSES,
  freshStepState,
  type RunStatus,
  SATISFIED_STEP_STATUSES,
  type StepState,
} from './run-state.js';

/**
 * Cleanup that always runs (`compensate:` on steps, `finally:` on the plan). When a run ends
 * (every step satisfied, cancelled, or given up under `onFailure: compensate`) and it has cleanup
 * to do, the cleanup steps are appended to its plan snapshot in that one transition, like a
 * fan-out's items: ordinary steps with leases, retries and logs, so a crash during cleanup resumes
 * it. The snapshot's `closing` says how the run ended; the run stays `running` (or `blocked`, when
 * a cleanup step is) until every cleanup step is done, then takes that status.
 *
 * Compensations run one after the other, in the reverse of the plan's order, for each step that
 * completed (succeeded or degraded), never for one that did not; the `finally:` steps after them.
 */

/** The id of the step that compensates `stepId` (`:` is never in a declared step id). */
export function compensationId(stepId: string): string {
  return `${stepId}:compensate`;
}

/**
 * Appends the cleanup steps of a run ending as `status` (compensations only when `compensate`) and
 * marks the snapshot `closing`. Returns how many steps it appended; with none, nothing changes
 * unless `always` (a run given up ends `failed` even with nothing to clean).
 */
export function startCleanup(
  draft: Draft,
  status: EndStatus,
  options: { compensate: boolean; reason?: string; always?: boolean },
): number {
  const plan = draft.run.plan;
  const added: PlanStep[] = [];
  let previous: string | undefined;
  if (options.compensate) {
    for (let position = plan.steps.length - 1; position >= 0; position -= 1) {
      const step = plan.steps[position]!;
      // A fan-out's items carry its `compensate:` (one compensation per item that completed).
      if (step.compensate === undefined || step.forEach !== undefined) continue;
      if (!SATISFIED_STEP_STATUSES.has(draft.steps[position]!.status)) continue;
      if (draft.steps[position]!.status === 'skipped') continue;
      const compensation = compensationStep(step, status, previous);
      added.push(compensation);
      previous = compensation.id;
    }
  }
  for (const step of plan.finally ?? []) {
    const cleanup: CleanupMark = { runStatus: status };
    const dependsOn = previous === undefined ? step.dependsOn : [...step.dependsOn, previous];
    added.push({ ...step, dependsOn, cleanup });
  }
  if (added.length === 0 && options.always !== true) return 0;
  const closing = {
    status,
    from: plan.steps.length,
    ...(options.reason === undefined ? {} : { reason: options.reason.slice(0, 2000) }),
  };
  const next: Plan = { ...plan, steps: [...plan.steps, ...added], closing };
  const ids = new Set(added.map((step) => step.id));
  draft.appendSteps(
    next,
    added.map((step) => cleanupState(step, ids, draft.now)),
  );
  draft.events.push({ type: 'run.cleanup_started', ending: status, steps: added.length });
  return added.length;
}

/** A step that compensates `step`: its `compensate:` body, with the step's retries and timeout. */
function compensationStep(step: PlanStep, runStatus: EndStatus, previous: string | undefined): PlanStep {
  const body = step.compensate!;
  const item = step.forEachItem;
  return {
    id: compensationId(step.id),
    title: `undo ${step.title}`,
    ...executorFields(body),
    dependsOn: previous === undefined ? [] : [previous],
    requiredOutputs: [],
    // Written to be run again harmlessly: a crash mid-way runs it again rather than asking a person.
    sideEffect: 'idempotent',
    ...(body.kind === 'agent' && step.sandbox !== undefined ? { sandbox: step.sandbox } : {}),
    retry: step.retry,
    timeoutMs: step.timeoutMs,
    delayBeforeMs: 0,
    cleanup: {
      runStatus,
      compensates: step.id,
      ...(item?.as === undefined ? {} : { item: { as: item.as, value: item.value } }),
    },
  };
}

function cleanupState(step: PlanStep, added: ReadonlySet<string>, now: number): StepState {
  // A finally step's own dependencies are other cleanup steps, all appended now and none done.
  const ready = step.dependsOn.every((dep) => !added.has(dep));
  return freshStepState(step.id, ready ? now : null, now);
}

/**
 * The status of a run running its cleanup: `running` while a cleanup step can go on, `blocked`
 * when one is blocked and nothing else can, and the status it ended with once all are done.
 */
export function closingStatus(plan: Plan, steps: readonly StepState[]): RunStatus {
  const closing = plan.closing!;
  let blocked = false;
  let open = false;
  for (let position = closing.from; position < steps.length; position += 1) {
    const status = steps[position]!.status;
    if (status === 'running' || DUE_STEP_STATUSES.has(status)) return 'running';
    if (status === 'blocked') blocked = true;
    else if (!FINAL_STEP_STATUSES.has(status)) open = true;
  }
  if (blocked) return 'blocked';
  return open ? 'running' : closing.status;
}

/** How far a run's cleanup got: for `cancelled (cleanup 2/2 done)`. Null: it has none. */
export interface CleanupProgress {
  ending: EndStatus;
  done: number;
  total: number;
}

export function cleanupProgress(
  plan: Pick<Plan, 'closing' | 'steps'>,
  steps: readonly Pick<StepState, 'stepId' | 'status'>[],
): CleanupProgress | null {
  const closing = plan.closing;
  if (closing === undefined || closing.from >= plan.steps.length) return null;
  // By id: a large run's view may hold only some of its steps.
  const status = new Map(steps.map((step) => [step.stepId, step.status]));
  let done = 0;
  for (let position = closing.from; position < plan.steps.length; position += 1) {
    const state = status.get(plan.steps[position]!.id);
    if (state !== undefined && SATISFIED_STEP_STATUSES.has(state)) done += 1;
  }
  return { ending: closing.status, done, total: plan.steps.length - closing.from };
}

/** `cancelled (cleanup 2/2 done)`, or `running (cancelling, cleanup 1/2 done)` while it runs. */
export function statusWithCleanup(
  status: RunStatus,
  plan: Pick<Plan, 'closing' | 'steps'>,
  steps: readonly Pick<StepState, 'stepId' | 'status'>[],
): string {
  const progress = cleanupProgress(plan, steps);
  if (progress === null) return status;
  const counted = `cleanup ${progress.done}/${progress.total} done`;
  return status === progress.ending
    ? `${status} (${counted})`
    : `${status} (${ENDING[progress.ending]}, ${counted})`;
}

const ENDING: Record<EndStatus, string> = {
  succeeded: 'succeeding',
  failed: 'failing',
  cancelled: 'cancelling',
};
