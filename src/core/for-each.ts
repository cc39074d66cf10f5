import type { Draft } from './draft.js';
import { evaluateItems, itemStep, itemStepId } from './for-each-items.js';
import type { Plan, PlanStep } from './plan/types.js';
import {
  FINAL_STEP_STATUSES,
  freshStepState,
  planIndex,
  type RunState,
  type StepResult,
  type StepState,
  type StepStatus,
  stepOf,
} from './run-state.js';

/**
 * A fan-out (`forEach`): a group step that runs once per element of a list. When the group is first
 * claimed (its dependencies have succeeded) its `items` expression is evaluated and the group expands,
 * in that one transition, into item steps `<id>[i]` appended to the run's plan snapshot and its step
 * rows: each a full step of its own (attempts, retries, timeout, budget, flow key, log). The group
 * waits `pending` until every item has settled, then succeeds with the list of item results (in item
 * order) when no more than `toleratedFailures` items ended blocked, else it is blocked with the list
 * of failed items. Its dependents wait for it like for any step.
 */

/** Whether the group's items exist already (a human retried the group after it was blocked). */
export function isExpanded(run: Pick<RunState, 'plan' | 'steps'>, groupId: string): boolean {
  return stepOf(run, itemStepId(groupId, 0)) !== undefined;
}

type ItemRange = { start: number; end: number };

/** Item ranges by group, found once per plan object (a plan never changes once a run holds it). */
const itemRanges = new WeakMap<Plan, Map<string, ItemRange | null>>();

/** Positions of the items of `groupId`: contiguous, appended together by the expansion. */
export function itemPositions(plan: Plan, groupId: string): ItemRange | null {
  let ranges = itemRanges.get(plan);
  if (!ranges) {
    ranges = new Map();
    itemRanges.set(plan, ranges);
  }
  let range = ranges.get(groupId);
  if (range === undefined) {
    const start = planIndex(plan).position.get(itemStepId(groupId, 0));
    let end = start ?? 0;
    while (plan.steps[end]?.forEachItem?.group === groupId) end += 1;
    range = start === undefined ? null : { start, end };
    ranges.set(groupId, range);
  }
  return range;
}

/**
 * The group claimed: expands it (or, when a human retried it, reopens it: its blocked items run
 * again). Everything happens in `draft`, which the caller finishes: one transaction.
 */
export function expandForEach(draft: Draft, group: PlanStep): void {
  if (isExpanded(draft.run, group.id)) {
    reopenForEach(draft, group.id);
    return;
  }
  const listed = evaluateItems(draft, group);
  if ('invalid' in listed) {
    blockGroup(draft, group.id, 'invalid', listed.invalid);
    return;
  }
  const items = listed.items;
  if (items.length > group.forEach!.maxItems) {
    blockGroup(
      draft,
      group.id,
      'invalid',
      `forEach.items gave ${items.length} items, more than maxItems ${group.forEach!.maxItems}: raise steps.${group.id}.forEach.maxItems (at most 10000) or give fewer items`,
    );
    return;
  }
  const itemSteps: PlanStep[] = [];
  for (const [index, value] of items.entries()) {
    const step = itemStep(group, index, value);
    if (typeof step === 'string') {
      blockGroup(draft, group.id, 'invalid', step);
      return;
    }
    itemSteps.push(step);
  }
  draft.events.push({ type: 'step.expanded', stepId: group.id, items: items.length });
  if (items.length === 0) {
    settleGroup(draft, group.id);
    return;
  }
  const plan: Plan = { ...draft.run.plan, steps: [...draft.run.plan.steps, ...itemSteps] };
  const states = itemSteps.map((step) => freshStepState(step.id, draft.now, draft.now));
  draft.appendSteps(plan, states);
  draft.setStep(group.id, { status: 'pending', dueAt: null, leaseOwner: null, leaseExpiresAt: null });
}

/** A human retried the blocked group: its blocked and cancelled items run again, with fresh tries. */
function reopenForEach(draft: Draft, groupId: string): void {
  const range = itemPositions(draft.run.plan, groupId)!;
  for (let position = range.start; position < range.end; position += 1) {
    const item = draft.steps[position]!;
    if (item.status !== 'blocked' && item.status !== 'cancelled') continue;
    draft.setStep(item.stepId, {
      status: 'ready',
      dueAt: draft.now,
      tries: 0,
      interruptions: 0,
      fingerprint: null,
      fingerprintRepeats: 0,
      blockedReason: null,
      onFallback: false,
    });
    draft.events.push({ type: 'step.retry_requested', stepId: item.stepId });
  }
  draft.setStep(groupId, { status: 'pending', dueAt: null, leaseOwner: null, leaseExpiresAt: null });
}

function blockGroup(
  draft: Draft,
  groupId: string,
  failureClass: 'invalid' | 'agent_failed',
  why: string,
): void {
  const reason = `${why}; then: baton retry ${draft.run.id} ${groupId}, or: baton skip ${draft.run.id} ${groupId}`;
  draft.setStep(groupId, {
    status: 'blocked',
    dueAt: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    lastError: why,
    lastFailureClass: failureClass,
    blockedReason: reason,
  });
  draft.events.push({ type: 'step.blocked', stepId: groupId, failureClass, reason: reason.slice(0, 2000) });
}

const SETTLED: ReadonlySet<StepStatus> = new Set([...FINAL_STEP_STATUSES, 'blocked']);
const FAILED: ReadonlySet<StepStatus> = new Set(['blocked', 'cancelled']);

/** Groups whose items `draft` settled: each is settled in turn once all its items are (see settleGroup). */
export function settleChangedGroups(draft: Draft): void {
  const { position, hasItems } = planIndex(draft.run.plan);
  // Every transition finishes here: a plan that never expanded a fan-out costs one flag.
  if (!hasItems) return;
  const groups = new Set<string>();
  for (const stepId of draft.changed) {
    const item = draft.run.plan.steps[position.get(stepId)!]?.forEachItem;
    if (item && SETTLED.has(draft.get(stepId).status)) groups.add(item.group);
  }
  for (const groupId of groups) {
    const status = draft.get(groupId).status;
    // A group a human skipped or cancelled meanwhile stays so; a blocked one may settle again.
    if (status === 'pending' || status === 'blocked') settleGroup(draft, groupId);
  }
}

/**
 * Settles a group whose items have all settled: succeeded with the item results in item order (a
 * failed item's is null, its error in `failedItems`) when at most `toleratedFailures` failed, else
 * blocked with the list of failed items. Does nothing while an item is still to settle.
 */
function settleGroup(draft: Draft, groupId: string): void {
  const group = draft.run.plan.steps[planIndex(draft.run.plan).position.get(groupId)!]!;
  const range = itemPositions(draft.run.plan, groupId) ?? { start: 0, end: 0 };
  // From the last item: items start in order, so an unsettled one is most likely found at once.
  for (let position = range.end - 1; position >= range.start; position -= 1) {
    if (!SETTLED.has(draft.steps[position]!.status)) return;
  }
  const values: unknown[] = [];
  const outputs: StepResult['outputs'] = [];
  const failedItems: { item: number; error: string }[] = [];
  for (let position = range.start; position < range.end; position += 1) {
    const item = draft.steps[position]!;
    const index = position - range.start;
    if (FAILED.has(item.status)) {
      failedItems.push({ item: index, error: item.blockedReason ?? item.lastError ?? item.status });
      values.push(null);
      continue;
    }
    const result = item.resultJson === null ? null : (JSON.parse(item.resultJson) as StepResult);
    values.push(result?.value ?? result?.summary ?? null);
    if (result) outputs.push(...result.outputs);
  }
  const count = range.end - range.start;
  const tolerated = toleratedCount(group.forEach!.toleratedFailures, count);
  const list = failedItems
    .slice(0, 20)
    .map(({ item, error }) => `[${item}] ${error.slice(0, 200)}`)
    .join('; ');
  if (failedItems.length > tolerated) {
    const why = `${failedItems.length} of ${count} items failed (toleratedFailures ${group.forEach!.toleratedFailures}): ${list}${failedItems.length > 20 ? '; …' : ''}`;
    blockGroup(draft, groupId, 'agent_failed', why);
    return;
  }
  // A tolerated failure no longer holds the run: the item ends skipped, its error kept (lastError,
  // the group's failedItems, its step.failed events).
  for (const { item, error } of failedItems) {
    const stepId = itemStepId(groupId, item);
    if (draft.get(stepId).status !== 'blocked') continue;
    draft.setStep(stepId, { status: 'skipped', blockedReason: null, lastError: error });
    draft.events.push({
      type: 'step.skipped',
      stepId,
      reason: `a tolerated failure of fan-out ${groupId}: ${error.slice(0, 300)}`,
    });
  }
  const summary =
    failedItems.length === 0
      ? `${count} of ${count} items succeeded`
      : `${count - failedItems.length} of ${count} items succeeded; failed (tolerated): ${list}`;
  const result: StepResult = {
    summary,
    outputs,
    value: values,
    ...(failedItems.length === 0 ? {} : { failedItems }),
  };
  draft.setStep(groupId, {
    status: 'succeeded',
    resultJson: JSON.stringify(result),
    dueAt: null,
    lastError: null,
    lastFailureClass: null,
    blockedReason: null,
  });
  draft.events.push({
    type: 'step.succeeded',
    stepId: groupId,
    attempt: 0,
    durationMs: null,
    summary: summary.slice(0, 200),
  });
  draft.releaseDependents(groupId);
}

/** `toleratedFailures` as a count of `items`: a percentage rounds down. */
export function toleratedCount(tolerated: number | string, items: number): number {
  if (typeof tolerated === 'number') return tolerated;
  return Math.floor((Number.parseFloat(tolerated) / 100) * items + 1e-9);
}

/**
 * Whether the item step at `position` may start under its group's `forEach.concurrency` (steps
 * that are not items always may).
 */
export function itemAdmitted(run: RunState, position: number): boolean {
  const item = run.plan.steps[position]?.forEachItem;
  if (!item) return true;
  const group = run.plan.steps[planIndex(run.plan).position.get(item.group)!]!;
  const cap = group.forEach?.concurrency;
  if (cap === undefined) return true;
  return runningItems(run, item.group) < cap;
}

const runningByGroup = new WeakMap<readonly StepState[], Map<string, number>>();

/** Items of the group running now, counted once per step array (a claim copies the array). */
function runningItems(run: RunState, groupId: string): number {
  let counts = runningByGroup.get(run.steps);
  if (!counts) {
    counts = new Map();
    runningByGroup.set(run.steps, counts);
  }
  let count = counts.get(groupId);
  if (count === undefined) {
    const range = itemPositions(run.plan, groupId)!;
    count = 0;
    for (let position = range.start; position < range.end; position += 1) {
      if (run.steps[position]!.status === 'running') count += 1;
    }
    counts.set(groupId, count);
  }
  return count;
}
