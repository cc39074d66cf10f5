import type { StepUsage } from '../../core/failure.js';
import { FlowGate, type FlowKeyState } from '../../core/flow.js';
import type { Plan } from '../../core/plan/types.js';
import { planSecretEnv } from '../../core/run-secrets.js';
import { DUE_STEP_STATUSES, type RunState, stepOf } from '../../core/run-state.js';
import { claimStep, expireLease, type Transition } from '../../core/transitions.js';
import {
  flowAllows,
  flowStarted,
  freedLimitedKeys,
  type HeldRun,
  runningDelta,
  stepFlowKey,
} from '../flow-accounting.js';
import { claimResults, mayRepeatUsage, runningCount, settleCompletion, stepToRun } from '../loaded-run.js';
import type {
  AttemptKey,
  ClaimedStep,
  Completion,
  CycleRequest,
  CycleResult,
  ReclaimedAttempt,
} from '../store.js';
import { attemptKeyText, completionAttemptRow, interruptedAttemptRow } from '../store-rows.js';
import type { PgLoadedRun } from './run-loader.js';
import { WriteBatch } from './write-batch.js';

interface Slot {
  entry: PgLoadedRun;
  /** The run as loaded (its stored state while this transaction holds its lock). */
  loaded: RunState;
  changed: Set<string>;
  planChanged: boolean;
  dirty: boolean;
}

interface DueStep {
  runId: string;
  stepId: string;
  dueAt: number;
  position: number;
}

/**
 * The in-memory part of one cycle, on runs this transaction has locked and loaded: the same core
 * transitions as the SQLite store, in the same order (completions, expired leases, claims). Events
 * and attempts go to a WriteBatch as they happen; each changed run and step once, at `finish`.
 */
export class CycleWork {
  private readonly runs = new Map<string, Slot>();
  private readonly claimed: ClaimedStep[] = [];
  private readonly reclaimed: ReclaimedAttempt[] = [];
  private accepted: boolean[] = [];
  readonly batch = new WriteBatch();
  /** Flow keys that have a limit, as the lock statement saw them. */
  readonly limitedKeys = new Set<string>();
  /** The limits of the keys this transaction locked; null until one is. */
  private gate: FlowGate | null = null;

  constructor(private readonly request: CycleRequest) {}

  get lockedRunIds(): string[] {
    return [...this.runs.keys()];
  }

  get claimsLeft(): number {
    return this.request.claimLimit - this.claimed.length;
  }

  add(loaded: ReadonlyMap<string, PgLoadedRun>): void {
    for (const [id, entry] of loaded) {
      if (!this.runs.has(id))
        this.runs.set(id, {
          entry,
          loaded: entry.state,
          changed: new Set(),
          planChanged: false,
          dirty: false,
        });
    }
  }

  private *held(): Iterable<HeldRun> {
    for (const slot of this.runs.values()) yield { loaded: slot.loaded, state: slot.entry.state };
  }

  /**
   * The limited flow keys that due steps of the given runs (all locked runs when omitted) fall
   * under and that this transaction has not locked yet, in key order (the order locks are taken in).
   */
  flowKeysToLock(runIds: Iterable<string> = this.runs.keys()): string[] {
    if (this.limitedKeys.size === 0 || this.claimsLeft <= 0) return [];
    const { request } = this;
    const keys = new Set<string>();
    for (const runId of runIds) {
      const state = this.runs.get(runId)?.entry.state;
      // Only the keys of steps this cycle could claim: a key row is locked only to be used.
      if (state?.status !== 'running' || (request.runId !== undefined && runId !== request.runId)) continue;
      if (runningCount(state) >= state.plan.limits.concurrency) continue;
      state.steps.forEach((step, position) => {
        if (DUE_STEP_STATUSES.has(step.status) && step.dueAt !== null && step.dueAt <= request.now) {
          if (stepToRun(state, position, request.functions)) keys.add(stepFlowKey(state, position));
        }
      });
    }
    return [...keys].filter((key) => this.limitedKeys.has(key) && !this.gate?.has(key)).sort();
  }

  /** The keys of `wanted` this transaction locked, with their counts; the others admit nothing now. */
  addFlowKeys(locked: readonly FlowKeyState[], wanted: readonly string[]): void {
    this.gate ??= new FlowGate([], this.request.now);
    this.gate.add(locked);
    for (const key of wanted) this.gate.block(key);
  }

  private apply(slot: Slot, transition: Transition): void {
    for (const event of transition.events) {
      this.batch.event(slot.entry.state.id, this.request.now, event, transition.run.plan.hooks);
    }
    for (const stepId of transition.changedSteps) slot.changed.add(stepId);
    slot.planChanged ||= transition.planChanged ?? false;
    slot.dirty = true;
    slot.entry.state = transition.run;
  }

  /**
   * The reports to be discarded that carry usage: the store asks which of them have their tokens
   * recorded already (sent again after a commit whose acknowledgement was lost), for `complete`.
   */
  usageToLookUp(): AttemptKey[] {
    return this.request.completions
      .filter((c) => {
        const slot = this.runs.get(c.runId);
        return slot !== undefined && mayRepeatUsage(slot.entry.state, c);
      })
      .map(({ runId, stepId, attempt }) => ({ runId, stepId, attempt }));
  }

  /**
   * Commits each completion whose worker still holds the lease; the others are recorded as
   * discarded. `recorded`: attemptKeyText of the discarded ones whose tokens are counted already.
   */
  complete(recorded: ReadonlySet<string> = new Set()): void {
    const { now, random } = this.request;
    // The same report twice in one request counts once (the store's look-up saw neither).
    const seen = new Set<string>();
    this.accepted = this.request.completions.map((completion) => {
      const slot = this.runs.get(completion.runId);
      const key = attemptKeyText(completion);
      const counted = recorded.has(key) || seen.has(key);
      seen.add(key);
      const settled = slot && settleCompletion(slot.entry.state, completion, now, random, counted);
      if (slot && settled?.transition) this.apply(slot, settled.transition);
      const live = settled?.live ?? false;
      this.recordAttempt(completion, live, slot, counted);
      return live;
    });
  }

  private recordAttempt(
    completion: Completion,
    live: boolean,
    slot: Slot | undefined,
    counted: boolean,
  ): void {
    const outcome = completion.outcome;
    const step = slot ? stepOf(slot.entry.state, completion.stepId) : undefined;
    this.batch.attempt(completionAttemptRow(completion, live, step));
    if (live && outcome.ok) for (const output of outcome.outputs) this.batch.artifact(completion, output);
  }

  /** Ends attempts whose lease ran out (as loaded after locking, so a renewal just made is seen). */
  reclaimExpired(limit: number): void {
    const { now, random } = this.request;
    const expired: { slot: Slot; stepId: string; at: number }[] = [];
    for (const slot of this.runs.values()) {
      for (const step of slot.entry.state.steps) {
        if (step.status === 'running' && step.leaseExpiresAt !== null && step.leaseExpiresAt <= now)
          expired.push({ slot, stepId: step.stepId, at: step.leaseExpiresAt });
      }
    }
    expired.sort((a, b) => a.at - b.at);
    for (const { slot, stepId } of expired.slice(0, limit)) {
      const before = stepOf(slot.entry.state, stepId)!;
      this.apply(slot, expireLease(slot.entry.state, stepId, now, random));
      const after = stepOf(slot.entry.state, stepId)!;
      const runId = slot.entry.state.id;
      this.batch.attempt(interruptedAttemptRow(runId, before, after, now));
      const proc = slot.entry.processes.get(stepId);
      this.reclaimed.push({
        runId,
        stepId,
        attempt: before.attempt,
        pid: proc?.pid ?? null,
        host: proc?.host ?? null,
      });
    }
  }

  /**
   * Claims due steps of the given runs (all locked runs when omitted), earliest due first, within the
   * claim limit, each run's concurrency and the functions this process has. Returns the runs that
   * yielded no claim (their due work was taken or changed since the lock query looked).
   */
  claimDue(runIds: Iterable<string> = this.runs.keys()): string[] {
    const { request } = this;
    const due: DueStep[] = [];
    const idle = new Set<string>();
    for (const runId of runIds) {
      const state = this.runs.get(runId)?.entry.state;
      if (!state) continue;
      idle.add(runId);
      if (state.status !== 'running' || (request.runId !== undefined && runId !== request.runId)) continue;
      state.steps.forEach((step, position) => {
        if (DUE_STEP_STATUSES.has(step.status) && step.dueAt !== null && step.dueAt <= request.now)
          due.push({ runId, stepId: step.stepId, dueAt: step.dueAt, position });
      });
    }
    due.sort(
      (a, b) =>
        a.dueAt - b.dueAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : a.position - b.position),
    );
    for (const candidate of due) {
      if (this.claimed.length >= request.claimLimit) break;
      if (this.tryClaim(candidate)) idle.delete(candidate.runId);
    }
    return [...idle];
  }

  private tryClaim(candidate: DueStep): boolean {
    const { request } = this;
    const slot = this.runs.get(candidate.runId)!;
    const state = slot.entry.state;
    if (state.status !== 'running') return false;
    // What this attempt runs: the step's own executor, or its fallback once that took over.
    const planStep = stepToRun(state, candidate.position, request.functions);
    if (!planStep) return false;
    if (runningCount(state) >= state.plan.limits.concurrency) return false;
    if (!flowAllows(this.gate, state, candidate.position, () => this.held())) return false;
    const transition = claimStep(state, candidate.stepId, request.owner, request.now, request.leaseMs);
    this.apply(slot, transition);
    const step = stepOf(transition.run, candidate.stepId)!;
    if (step.status !== 'running') return false;
    flowStarted(this.gate, transition.run, candidate.position);
    this.claimed.push({
      runId: candidate.runId,
      stepId: candidate.stepId,
      attempt: step.attempt,
      owner: request.owner,
      leaseExpiresAt: step.leaseExpiresAt!,
      tries: step.tries,
      step: planStep,
      planName: state.plan.name,
      inputs: slot.entry.inputs,
      workspace: slot.entry.workspace,
      lastError: step.lastError,
      secretEnv: planSecretEnv(state.plan),
      results: claimResults(transition.run, planStep),
      ...(step.onFallback ? { fallback: true } : {}),
      ...(state.plan.shadow ? { shadow: true } : {}),
      ...(step.firstStartedAt ? { firstStartedAt: step.firstStartedAt } : {}),
    });
    return true;
  }

  /** Puts every changed run and step into the batch; returns the result and the plans that changed. */
  finish(): { result: CycleResult; changedPlans: { runId: string; hash: string; plan: Plan }[] } {
    const changedPlans: { runId: string; hash: string; plan: Plan }[] = [];
    for (const slot of this.runs.values()) {
      if (!slot.dirty) continue;
      const { state } = slot.entry;
      // A limited slot freed here (and not taken again by this cycle's claims) may be what a
      // sleeping worker waits for: wake them.
      for (const key of freedLimitedKeys({ loaded: slot.loaded, state }, this.limitedKeys)) {
        if (!this.gate?.holds(key) || this.gate.allows(key, runningDelta(key, this.held())))
          this.batch.noteDue(this.request.now);
      }
      const hash = this.batch.runState(state, slot.changed, slot.planChanged);
      if (hash) changedPlans.push({ runId: state.id, hash, plan: state.plan });
    }
    this.batch.flowStarts(this.gate?.changedStarts() ?? []);
    return {
      result: {
        claimed: this.claimed,
        accepted: this.accepted,
        reclaimed: this.reclaimed,
        ...(this.batch.hooksOwed ? { hooksOwed: true } : {}),
      },
      changedPlans,
    };
  }
}
