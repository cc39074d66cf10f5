import '../core-libraries.js';
import { claimableStep, claimResults, type FlowAdmits } from '../../core/claim-rules.js';
import type { BatonEvent } from '../../core/events.js';
import type { OutputArtifact } from '../../core/failure.js';
import type { FlowGate, FlowLimit } from '../../core/flow.js';
import type { HookSpec } from '../../core/plan/types.js';
import { planSecretEnv } from '../../core/run-secrets.js';
import { FINAL_RUN_STATUSES, planIndex, type RunState, stepOf } from '../../core/run-state.js';
import {
  isForeignReport,
  mayRepeatUsage,
  type StoredAttemptVerdict,
  settleReport,
} from '../../core/settle-report.js';
import { claimStep, expireLease, type Transition } from '../../core/transitions.js';
import {
  type KeptEvent,
  renderWaitText,
  startWaiting,
  timeOutWait,
  waitPositions,
  waitStepDue,
} from '../../core/waits.js';
import { flowAllows, flowStarted, type HeldRun } from '../flow-accounting.js';
import type { LoadedRun } from '../loaded-run.js';
import type {
  AttemptKey,
  ClaimedStep,
  Completion,
  CycleRequest,
  CycleResult,
  ReclaimedAttempt,
} from '../store.js';
import {
  type AttemptRow,
  attemptKeyText,
  completionAttemptRow,
  interruptedAttemptRow,
} from '../store-rows.js';

/**
 * Where a cycle's rows go as its transitions happen: written at once (SQLite, inside its
 * transaction) or gathered into one statement (PostgreSQL's WriteBatch). Runs and steps are not
 * written here: the dialect writes each changed one once, at the end (`changedRuns`).
 */
export interface CycleSink {
  /** An event of a run and the hook calls it owes (`hooks`: the plan's); whether it owes any. */
  event(runId: string, at: number, event: BatonEvent, hooks?: readonly HookSpec[]): boolean;
  attempt(row: AttemptRow): void;
  artifact(key: AttemptKey, output: OutputArtifact): void;
  /**
   * The event named `event` kept for the run (sent before its step waited), deleted as it is taken,
   * in the cycle's transaction; null: none was sent.
   */
  takeKeptEvent(runId: string, event: string): KeptEvent | null;
}

/** No steps added: what a held run starts with (a fan-out's expansion replaces it). */
const NO_STEPS: ReadonlySet<string> = new Set();

/** A run a cycle holds: as loaded, as its transitions left it, and what they changed. */
interface HeldSlot<E extends LoadedRun> {
  entry: E;
  /** The run as loaded (what is stored while the cycle's transaction holds it). */
  loaded: RunState;
  changed: Set<string>;
  planChanged: boolean;
  /** Steps the cycle's transitions appended to the plan (a fan-out's items): rows to insert. */
  added: ReadonlySet<string>;
  dirty: boolean;
}

/**
 * The decisions of one cycle, once for both stores, on runs its dialect loaded under its write
 * lock (SQLite's BEGIN IMMEDIATE, PostgreSQL's row locks): what a completion, an expired lease and
 * a claim do to a run, through the core's transitions, in the order the dialect calls them
 * (completions, then reclaims, then claims). Which runs and steps to look at, and how the result is
 * written, is the dialect's.
 */
export class CycleRuns<E extends LoadedRun> {
  /** Runs held, by id; null: no such run. */
  private readonly slots = new Map<string, HeldSlot<E> | null>();
  private readonly claimed: ClaimedStep[] = [];
  private readonly reclaimed: ReclaimedAttempt[] = [];
  /** Runs this cycle ended (see CycleResult.endedRuns). */
  private readonly ended: string[] = [];
  private readonly accepted: boolean[] = [];
  /** Reports already settled in this cycle (attemptKeyText): a repeat's tokens count once. */
  private readonly reported = new Set<string>();
  private hooksOwed = false;
  private settledUnclaimed = false;
  /** The flow limits claims obey; null: none is set (or none is locked yet). */
  gate: FlowGate | null = null;

  constructor(
    readonly request: CycleRequest,
    private readonly sink: CycleSink,
  ) {}

  /** Holds a run as the dialect loaded it (null: it does not exist); a run held already is kept as it is. */
  hold(runId: string, entry: E | null): void {
    if (this.slots.has(runId)) return;
    this.slots.set(
      runId,
      entry && {
        entry,
        loaded: entry.state,
        changed: new Set(),
        planChanged: false,
        added: NO_STEPS,
        dirty: false,
      },
    );
  }

  isHeld(runId: string): boolean {
    return this.slots.has(runId);
  }

  /** The run as this cycle holds it now; undefined: not held, null: no such run. */
  entry(runId: string): E | null | undefined {
    const slot = this.slots.get(runId);
    return slot === undefined ? undefined : (slot?.entry ?? null);
  }

  get heldRunIds(): string[] {
    return [...this.slots.keys()];
  }

  get claimsLeft(): number {
    return this.request.claimLimit - this.claimed.length;
  }

  /** Runs held, as loaded and as changed: flow control counts their attempts from these. */
  *held(): Iterable<HeldRun> {
    for (const slot of this.slots.values()) if (slot) yield { loaded: slot.loaded, state: slot.entry.state };
  }

  /** Every held run a transition changed: what the dialect writes, once each. */
  *changedRuns(): Iterable<HeldSlot<E>> {
    for (const slot of this.slots.values()) if (slot?.dirty) yield slot;
  }

  private apply(slot: HeldSlot<E>, transition: Transition): void {
    const runId = slot.entry.state.id;
    for (const event of transition.events) {
      if (this.sink.event(runId, this.request.now, event, transition.run.plan.hooks)) this.hooksOwed = true;
    }
    for (const stepId of transition.changedSteps) slot.changed.add(stepId);
    slot.planChanged ||= transition.planChanged ?? false;
    if (transition.addedSteps) slot.added = new Set([...slot.added, ...transition.addedSteps]);
    slot.dirty = true;
    if (FINAL_RUN_STATUSES.has(transition.run.status) && !FINAL_RUN_STATUSES.has(slot.entry.state.status))
      this.ended.push(runId);
    slot.entry.state = transition.run;
  }

  /**
   * Whether the dialect must look up this report's attempt row (see mayRepeatUsage): before
   * `complete`, which takes what the row says (storedAttemptSays).
   */
  mayRepeatUsage(completion: Completion): boolean {
    const slot = this.slots.get(completion.runId);
    return slot !== undefined && slot !== null && mayRepeatUsage(slot.entry.state, completion);
  }

  /**
   * A reported attempt (its run held): committed when its worker still holds the lease, else
   * recorded as discarded; dropped when its run no longer exists or the report is of an earlier
   * run under the same id. `stored`: what its attempt row, looked up, says of it.
   */
  complete(completion: Completion, stored: StoredAttemptVerdict = 'none'): void {
    const { now, random } = this.request;
    const held = this.slots.get(completion.runId);
    const usageRecorded = stored === 'usage';
    // The run is gone (gc deleted it while the attempt ran), or the id is another run's now: the
    // report is dropped. An attempt row of a run that does not exist would fail the whole cycle,
    // this one and every next one, which hold the report again.
    if (held === null || stored === 'foreign' || (held && isForeignReport(held.entry.state, completion))) {
      this.accepted.push(false);
      return;
    }
    const slot = held ?? null;
    const key = attemptKeyText(completion);
    // The same report twice in one request counts once.
    const counted = usageRecorded || this.reported.has(key);
    this.reported.add(key);
    const settled = slot && settleReport(slot.entry.state, completion, now, random, counted);
    if (slot && settled?.transition) this.apply(slot, settled.transition);
    const live = settled?.live ?? false;
    const step = slot ? stepOf(slot.entry.state, completion.stepId) : undefined;
    this.sink.attempt(completionAttemptRow(completion, live, step));
    if (live && completion.outcome.ok)
      for (const output of completion.outcome.outputs) this.sink.artifact(completion, output);
    this.accepted.push(live);
  }

  /**
   * Ends an attempt whose lease ran out (its run held), as interrupted; nothing when the step is no
   * longer running that attempt (a completion in this same cycle settled it: its worker was late).
   */
  reclaim(
    runId: string,
    stepId: string,
    attempt: number,
    proc: { pid: number | null; host: string | null },
  ): void {
    const slot = this.slots.get(runId);
    if (!slot) return;
    const { now, random } = this.request;
    const before = stepOf(slot.entry.state, stepId);
    if (!before || before.status !== 'running' || before.attempt !== attempt) return;
    this.apply(slot, expireLease(slot.entry.state, stepId, now, random));
    const after = stepOf(slot.entry.state, stepId)!;
    this.sink.attempt(interruptedAttemptRow(runId, before, after, now));
    this.reclaimed.push({ runId, stepId, attempt, pid: proc.pid, host: proc.host });
  }

  /** Flow control's say in claimableStep: the limits this cycle holds, with its own claims counted. */
  private readonly flowAdmits: FlowAdmits = (run, position) =>
    flowAllows(
      this.gate,
      run,
      position,
      () => this.held(),
      (limit) => {
        this.flowDeclarations.set(limit.key, limit);
        // The step is due and admitted by the next cycle, under the limit this one stores: look again.
        this.settledUnclaimed = true;
      },
    );

  /**
   * Limits plans declare (`flow:`) for keys the store held none for, found by this cycle's claims:
   * the store records each (unless one was set meanwhile) in the same transaction.
   */
  readonly flowDeclarations = new Map<string, FlowLimit>();

  /**
   * Claims a step of a held run if the core's claim predicate (claimableStep) admits it as held now:
   * due, its run running below its concurrency, a function this process has, flow control. Whether
   * it was claimed.
   */
  tryClaim(runId: string, stepId: string): boolean {
    const { request } = this;
    const slot = this.slots.get(runId);
    if (!slot) return false;
    // Rows of runs this cycle changed are not written yet: the state held decides.
    const state = slot.entry.state;
    const position = planIndex(state.plan).position.get(stepId);
    if (position === undefined) return false;
    // A wait moves whatever the claims left: it takes no slot.
    if (state.plan.steps[position]!.kind === 'wait') {
      this.moveWait(slot, position);
      return false;
    }
    if (this.claimsLeft <= 0) return false;
    // What this attempt runs: the step's own executor, or its fallback once that took over.
    const planStep = claimableStep(state, position, request, this.flowAdmits);
    if (!planStep) return false;
    const transition = claimStep(state, stepId, request.owner, request.now, request.leaseMs);
    this.apply(slot, transition);
    const step = stepOf(transition.run, stepId)!;
    // A budget may stop the run (or the step) instead, or its `when` skip it (or block it), or a
    // fan-out expand (its items are due now) or, with no item, succeed.
    if (step.status !== 'running') {
      if (step.status === 'skipped' || step.status === 'succeeded' || transition.addedSteps)
        this.settledUnclaimed = true;
      return false;
    }
    flowStarted(this.gate, transition.run, position);
    this.claimed.push({
      runId,
      stepId,
      attempt: step.attempt,
      owner: request.owner,
      leaseExpiresAt: step.leaseExpiresAt!,
      step: planStep,
      planName: state.plan.name,
      inputs: slot.entry.inputs,
      workspace: slot.entry.workspace,
      lastError: step.lastError,
      ...(step.lastFailureClass ? { lastFailureClass: step.lastFailureClass } : {}),
      secretEnv: planSecretEnv(state.plan),
      results: claimResults(transition.run, planStep),
      ...(step.onFallback ? { fallback: true } : {}),
      ...(state.plan.shadow ? { shadow: true } : {}),
      ...(step.firstStartedAt ? { firstStartedAt: step.firstStartedAt } : {}),
    });
    return true;
  }

  /**
   * Moves the due wait steps of every held run (see moveWait), whatever this cycle claims: a cycle
   * with no slot free, a run at its concurrency or blocked by another step, still starts the waits
   * its completions made due and fires the timeouts that came. The dialects call it after their
   * claims, having held the runs whose timeouts came. Waits these moves make due (a timeout's skip
   * releasing the next wait step) move in the next cycle.
   */
  moveDueWaits(): void {
    for (const slot of this.slots.values()) {
      if (!slot) continue;
      const state = slot.entry.state;
      const due = waitPositions(state.plan).filter((position) => waitStepDue(state, position, this.request));
      for (const position of due) this.moveWait(slot, position);
    }
  }

  /**
   * A due wait step of a held run: a ready one starts waiting (taking an event kept for it), a
   * waiting one has timed out. Neither is a claim: no lease, no slot.
   */
  private moveWait(slot: HeldSlot<E>, position: number): void {
    const { request } = this;
    const state = slot.entry.state;
    if (!waitStepDue(state, position, request)) return;
    const step = state.steps[position]!;
    const declared = state.plan.steps[position]!;
    this.settledUnclaimed = true;
    if (step.status === 'waiting') {
      this.apply(slot, timeOutWait(state, step.stepId, request.now));
      return;
    }
    const waitingFor = renderWaitText(state, declared, slot.entry);
    const kept = declared.wait?.for === 'event' ? this.sink.takeKeptEvent(state.id, waitingFor) : null;
    this.apply(slot, startWaiting(state, step.stepId, waitingFor, kept, request.now));
  }

  result(): CycleResult {
    return {
      claimed: this.claimed,
      accepted: this.accepted,
      reclaimed: this.reclaimed,
      ...(this.hooksOwed ? { hooksOwed: true } : {}),
      ...(this.settledUnclaimed ? { settledUnclaimed: true } : {}),
      ...(this.ended.length > 0 ? { endedRuns: this.ended } : {}),
    };
  }
}
