import { Draft, isBudgetBlock, planStep, stepState, type Transition } from './draft.js';
import { BatonError } from './errors.js';
import { isExpanded, itemPositions } from './for-each.js';
import type { Plan } from './plan/types.js';
import { planIndex, type RunState, SATISFIED_STEP_STATUSES, type StepState } from './run-state.js';
import { decideWhen, settleUnrunStep } from './when-condition.js';

/**
 * `baton rerun <run> --from <step>`: a step that ran goes back to be run again with fresh tries,
 * and so does every step that depends on it (transitively), in dependency order; every other step
 * keeps its result. Attempt numbers continue and earlier attempts stay in the history. With
 * `only`, the step alone runs again and the steps after it keep results that now rest on an older
 * one: the `run.rerun_requested` event lists them as `stale` (`baton status` marks them).
 *
 * Fan-outs: a group in the rerun runs all its items again (the list it expanded into is kept; a
 * fork expands afresh); a rerun from an item runs that item, then its group settles again and the
 * group's dependents run again. A wait step in the rerun waits again (an event it took is not taken
 * twice: send it again). A running step in the rerun keeps its lease until its attempt reports or
 * the lease runs out (its process stops at the next lease renewal); only then may it start again.
 */
export interface RerunRequest {
  from: string;
  /** Run `from` alone; its dependents keep their results (marked stale). */
  only?: boolean;
  /** Effects recorded by `ctx.effect` in the rerun steps are forgotten, so they happen again. */
  redoEffects?: boolean;
  /**
   * Steps after `from` that keep their results and do not run (`--keep send`): what they did (a mail
   * sent) is not done again, and the steps that rest on them alone keep theirs too.
   */
  keep?: readonly string[];
  /** Keep every succeeded `idempotent` or `unsafe` step after `from` (`--keep-effects`). */
  keepEffects?: boolean;
  /** Who asked (the OS user, or `--by`): recorded on the event. */
  by: string;
}

/** The steps a rerun touches, as `rerunSteps` decides them. */
export interface RerunSelection {
  /** Steps run again, in plan order. */
  steps: string[];
  /** Satisfied steps after `from` that keep a result resting on an older one (`only`). */
  stale: string[];
  /** Steps after `from` kept as they are (`keep`, `keepEffects`), in plan order. */
  kept: string[];
  /** Of `steps`, those with side effects (`idempotent` or `unsafe`): what they did is done again. */
  effects: string[];
}

/**
 * Steps that depend on any of `roots`, transitively (roots excluded), as a set of positions; a step
 * in `cut` is neither found nor followed (a kept step: what rests on it alone is not reached).
 */
export function descendantPositions(
  plan: Plan,
  roots: readonly string[],
  cut: ReadonlySet<string> = new Set(),
): Set<number> {
  const { position, dependents } = planIndex(plan);
  const found = new Set<number>();
  const work = [...roots];
  for (let next = work.pop(); next !== undefined; next = work.pop()) {
    for (const dependent of dependents.get(next) ?? []) {
      const at = position.get(dependent)!;
      if (found.has(at) || cut.has(dependent)) continue;
      found.add(at);
      work.push(dependent);
    }
  }
  for (const root of roots) found.delete(position.get(root)!);
  return found;
}

/**
 * Which steps a rerun from `from` runs again (see rerunFrom): `from`, its descendants (unless
 * `only`), every item of an expanded group among them, and for an item, its group (which settles
 * again) with the group's descendants.
 */
export function rerunSteps(
  run: Pick<RunState, 'plan' | 'steps'>,
  from: string,
  only: boolean,
  keep: { steps?: readonly string[]; effects?: boolean } = {},
): RerunSelection {
  const { plan } = run;
  const all = selectRerun(run, from, only, new Set());
  const kept = keptSteps(run, from, all, keep);
  const selected = kept.size === 0 ? all : selectRerun(run, from, only, kept);
  const after = descendantPositions(plan, rootsOf(plan, from), kept);
  const stale = only
    ? [...after]
        .filter((at) => !selected.has(at) && SATISFIED_STEP_STATUSES.has(run.steps[at]!.status))
        .sort((a, b) => a - b)
        .map((at) => plan.steps[at]!.id)
    : [];
  const steps = [...selected].sort((a, b) => a - b).map((at) => plan.steps[at]!.id);
  return {
    steps,
    stale,
    kept: plan.steps.map((step) => step.id).filter((id) => kept.has(id) && !planStep(plan, id).forEachItem),
    effects: steps.filter(
      (id) => planStep(plan, id).sideEffect !== 'none' && !planStep(plan, id).forEachItem,
    ),
  };
}

/** `from`, and for an item its group, which settles again: the roots of what follows. */
function rootsOf(plan: Plan, from: string): string[] {
  const item = planStep(plan, from).forEachItem;
  // An item's group is the root of what follows (its items depend on the group's dependencies).
  return item ? [from, item.group] : [from];
}

/** The positions a rerun runs again: see rerunSteps; nothing in `cut` is reached. */
function selectRerun(
  run: Pick<RunState, 'plan' | 'steps'>,
  from: string,
  only: boolean,
  cut: ReadonlySet<string>,
): Set<number> {
  const { plan } = run;
  const { position } = planIndex(plan);
  const roots = rootsOf(plan, from);
  const group = planStep(plan, from).forEachItem?.group;
  const selected = new Set(roots.map((id) => position.get(id)!));
  if (!only) for (const at of descendantPositions(plan, roots, cut)) selected.add(at);
  for (const at of [...selected]) {
    const id = plan.steps[at]!.id;
    if (id === group || !isExpanded(run, id)) continue;
    const range = itemPositions(plan, id)!;
    for (let i = range.start; i < range.end; i += 1) selected.add(i);
  }
  return selected;
}

/**
 * The steps a rerun keeps (`keep` named, or with `effects` every succeeded side-effecting step it
 * would run again after `from`), with the items of a kept fan-out; refuses a step it cannot keep.
 */
function keptSteps(
  run: Pick<RunState, 'plan' | 'steps'>,
  from: string,
  would: ReadonlySet<number>,
  keep: { steps?: readonly string[]; effects?: boolean },
): Set<string> {
  const { plan } = run;
  const { position } = planIndex(plan);
  const kept = new Set<string>();
  for (const id of keep.steps ?? []) {
    const step = planStep(plan, id);
    const status = run.steps[position.get(id)!]!.status;
    const refuse = (why: string) => {
      throw new BatonError('INVALID_ARGUMENT', `--keep ${id}: ${why}`);
    };
    if (step.forEachItem)
      refuse(
        `it is one item of the fan-out ${step.forEachItem.group}: keep the whole fan-out (--keep ${step.forEachItem.group})`,
      );
    if (id === from) refuse(`it is the step the rerun starts from`);
    if (!would.has(position.get(id)!))
      refuse(
        `it does not run again in a rerun from ${from} (it does not depend on it): it keeps its result anyway`,
      );
    if (status !== 'succeeded')
      refuse(`it has no result to keep (${status}): only a step that succeeded is kept`);
    kept.add(id);
  }
  if (keep.effects) {
    for (const at of would) {
      const step = plan.steps[at]!;
      if (step.id === from || step.forEachItem || step.sideEffect === 'none') continue;
      if (run.steps[at]!.status === 'succeeded') kept.add(step.id);
    }
  }
  // A kept fan-out keeps its items.
  for (const id of [...kept]) {
    if (!isExpanded(run, id)) continue;
    const range = itemPositions(plan, id)!;
    for (let i = range.start; i < range.end; i += 1) kept.add(plan.steps[i]!.id);
  }
  return kept;
}

/**
 * The core of `Store.rerunFrom`: see RerunRequest. Refuses (BatonError) what cannot be rerun. The
 * transition carries what it selected, for the caller to report.
 */
export function rerunFrom(
  run: RunState,
  request: RerunRequest,
  now: number,
): Transition & { selection: RerunSelection } {
  const { from } = request;
  const state = stepState(run, from);
  if (run.status === 'cancelled') {
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} was cancelled: a cancelled run never runs again; start a new run from its results with: baton fork ${run.id} --from ${from}`,
    );
  }
  if (run.plan.closing !== undefined) {
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} ended ${run.plan.closing.status} and ran its cleanup (compensate:, finally:): it does not run again; start a new run from its results with: baton fork ${run.id} --from ${from}`,
    );
  }
  if (run.status === 'awaiting_approval') {
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} is awaiting approval: nothing has run yet; approve it with: baton approve ${run.id}`,
    );
  }
  if (isBudgetBlock(run)) {
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} is stopped by its budget (${run.blockedReason}); give it more first: baton resume ${run.id}`,
    );
  }
  if (
    state.attempt === 0 &&
    (state.status === 'pending' || state.status === 'ready') &&
    !isExpanded(run, from)
  ) {
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${from} of run ${run.id} has not run yet (${state.status}): nothing to rerun; it runs when the steps before it are done`,
    );
  }
  const only = request.only === true;
  const redoEffects = request.redoEffects === true;
  const keeping = (request.keep?.length ?? 0) > 0 || request.keepEffects === true;
  if (only && keeping)
    throw new BatonError(
      'INVALID_ARGUMENT',
      '--keep and --keep-effects do not go with --only: --only already keeps every step after the one it runs',
    );
  const selection = rerunSteps(run, from, only, {
    ...(request.keep ? { steps: request.keep } : {}),
    ...(request.keepEffects ? { effects: true } : {}),
  });
  if (!redoEffects) refuseUnsafe(run, selection.steps, from);

  const draft = new Draft({ ...run, status: 'running', blockedReason: null, finishedAt: null }, now);
  for (const stepId of selection.steps) draft.setStep(stepId, freshState(draft.get(stepId)));
  draft.events.push({
    type: 'run.rerun_requested',
    stepId: from,
    by: request.by,
    only,
    redoEffects,
    steps: selection.steps.length,
    ...(selection.stale.length > 0 ? { stale: selection.stale } : {}),
    ...(selection.kept.length > 0 ? { kept: selection.kept } : {}),
  });
  startAgain(draft, from);
  const transition = draft.finish();
  return { ...transition, selection, ...(redoEffects ? { clearEffects: selection.steps } : {}) };
}

/** An unsafe step that ran is rerun only when its effects are to be redone: say so. */
function refuseUnsafe(run: RunState, steps: readonly string[], from: string): void {
  for (const stepId of steps) {
    if (planStep(run.plan, stepId).sideEffect !== 'unsafe' || stepState(run, stepId).attempt === 0) continue;
    const keep = stepId === from ? '' : `keep its result (--keep ${stepId}, or --keep-effects), `;
    throw new BatonError(
      'INVALID_ARGUMENT',
      `step ${stepId} is unsafe (sideEffect: unsafe): running it again repeats what it did; ${keep}pass --redo-effects (redoEffects: true) if you mean it, or rerun --only an earlier step`,
    );
  }
}

/**
 * A step back to pending with fresh tries: its attempt number stays (the next one continues it), a
 * running attempt keeps its lease until it reports (settleReport releases it), and its result,
 * error and wait are cleared.
 */
function freshState(step: StepState): Partial<StepState> {
  const running = step.status === 'running' || (step.leaseOwner !== null && step.leaseExpiresAt !== null);
  return {
    status: 'pending',
    dueAt: null,
    tries: 0,
    interruptions: 0,
    fingerprint: null,
    fingerprintRepeats: 0,
    blockedReason: null,
    lastError: null,
    lastFailureClass: null,
    resultJson: null,
    onFallback: false,
    firstStartedAt: null,
    waitingFor: undefined,
    leaseOwner: running ? step.leaseOwner : null,
    leaseExpiresAt: running ? step.leaseExpiresAt : null,
  };
}

/**
 * `from` (its dependencies are all satisfied: it ran) starts again: an item or a plain step becomes
 * due (after its condition, decided again); an expanded group waits for its items, which become due.
 */
function startAgain(draft: Draft, from: string): void {
  const step = planStep(draft.run.plan, from);
  if (isExpanded(draft.run, from)) {
    const range = itemPositions(draft.run.plan, from)!;
    for (let i = range.start; i < range.end; i += 1) makeDue(draft, draft.run.plan.steps[i]!.id);
    return;
  }
  if (!step.dependsOn.every((dep) => SATISFIED_STEP_STATUSES.has(draft.get(dep).status))) return;
  const decision = step.when === undefined ? null : decideWhen(draft.run, step, draft.run.inputs ?? {});
  if (decision === null || decision.run) makeDue(draft, from);
  else if (settleUnrunStep(draft, from, decision)) draft.releaseDependents(from);
}

/** Due now, or once the lease of an attempt still stopping has run out (its report makes it due sooner). */
function makeDue(draft: Draft, stepId: string): void {
  const { leaseExpiresAt } = draft.get(stepId);
  draft.setStep(stepId, { status: 'ready', dueAt: Math.max(draft.now, leaseExpiresAt ?? draft.now) });
}
