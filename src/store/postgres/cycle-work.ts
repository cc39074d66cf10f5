import { claimableStep, runTakesClaims } from '../../core/claim-rules.js';
import { compareDueSteps, type DueStep, pushDueSteps } from '../../core/due-order.js';
import { FlowGate, type FlowKeyState } from '../../core/flow.js';
import type { Plan } from '../../core/plan/types.js';
import { leaseExpired } from '../../core/run-state.js';
import { type StoredAttempt, storedAttemptSays } from '../../core/settle-report.js';
import { waitStepDue } from '../../core/waits.js';
import { CycleRuns } from '../cycle/cycle-runs.js';
import { freedLimitedKeys, runningDelta, stepFlowKey } from '../flow-accounting.js';
import type { AttemptKey, CycleRequest, CycleResult } from '../store.js';
import { attemptKeyText } from '../store-rows.js';
import type { PgLoadedRun } from './run-loader.js';
import { WriteBatch } from './write-batch.js';

/**
 * The PostgreSQL dialect of a cycle's in-memory part (the decisions are CycleRuns'), on runs this
 * transaction has locked and loaded: expired leases and due steps are found in the runs held.
 * Events and attempts go to a WriteBatch as they happen; each changed run and step once, at `finish`.
 */
export class CycleWork {
  readonly batch = new WriteBatch();
  private readonly runs: CycleRuns<PgLoadedRun>;
  /** Flow keys that have a limit, as the lock statement saw them. */
  readonly limitedKeys = new Set<string>();

  constructor(private readonly request: CycleRequest) {
    this.runs = new CycleRuns(request, this.batch);
  }

  get lockedRunIds(): string[] {
    return this.runs.heldRunIds;
  }

  get claimsLeft(): number {
    return this.runs.claimsLeft;
  }

  add(loaded: ReadonlyMap<string, PgLoadedRun>): void {
    for (const [id, entry] of loaded) this.runs.hold(id, entry);
  }

  /**
   * The limited flow keys that due steps of the given runs (all locked runs when omitted) fall
   * under and that this transaction has not locked yet, in key order (the order locks are taken in).
   */
  flowKeysToLock(runIds: Iterable<string> = this.runs.heldRunIds): string[] {
    if (this.limitedKeys.size === 0 || this.claimsLeft <= 0) return [];
    const { request } = this;
    const keys = new Set<string>();
    for (const runId of runIds) {
      const state = this.runs.entry(runId)?.state;
      // Only the keys of steps this cycle could claim (the claim predicate before flow control): a
      // key row is locked only to be used.
      if (!state || !runTakesClaims(state, request)) continue;
      for (let position = 0; position < state.steps.length; position++) {
        if (claimableStep(state, position, request)) keys.add(stepFlowKey(state, position));
      }
    }
    const gate = this.runs.gate;
    return [...keys].filter((key) => this.limitedKeys.has(key) && !gate?.has(key)).sort();
  }

  /** The keys of `wanted` this transaction locked, with their counts; the others admit nothing now. */
  addFlowKeys(locked: readonly FlowKeyState[], wanted: readonly string[]): void {
    this.runs.gate ??= new FlowGate([], this.request.now);
    const gate = this.runs.gate;
    gate.add(locked);
    for (const key of wanted) gate.block(key);
  }

  /**
   * The reports to be discarded that carry usage: the store asks which of them have their tokens
   * recorded already (sent again after a commit whose acknowledgement was lost), for `complete`.
   */
  usageToLookUp(): AttemptKey[] {
    return this.request.completions
      .filter((c) => this.runs.mayRepeatUsage(c))
      .map(({ runId, stepId, attempt }) => ({ runId, stepId, attempt }));
  }

  /** Settles every completion. `stored`: the attempt rows looked up (usageToLookUp), by attemptKeyText. */
  complete(stored: ReadonlyMap<string, StoredAttempt> = new Map()): void {
    for (const completion of this.request.completions) {
      // The runs of the completions were waited for and locked: one not held does not exist.
      if (!this.runs.isHeld(completion.runId)) this.runs.hold(completion.runId, null);
      this.runs.complete(completion, storedAttemptSays(completion, stored.get(attemptKeyText(completion))));
    }
  }

  /** Ends attempts whose lease ran out (as loaded after locking, so a renewal just made is seen). */
  reclaimExpired(limit: number): void {
    const { now } = this.request;
    const expired: { entry: PgLoadedRun; stepId: string; attempt: number; at: number }[] = [];
    for (const runId of this.runs.heldRunIds) {
      const entry = this.runs.entry(runId);
      for (const step of entry?.state.steps ?? []) {
        if (leaseExpired(step, now))
          expired.push({
            entry: entry!,
            stepId: step.stepId,
            attempt: step.attempt,
            at: step.leaseExpiresAt!,
          });
      }
    }
    expired.sort((a, b) => a.at - b.at);
    for (const { entry, stepId, attempt } of expired.slice(0, limit)) {
      const proc = entry.processes.get(stepId);
      this.runs.reclaim(entry.state.id, stepId, attempt, {
        pid: proc?.pid ?? null,
        host: proc?.host ?? null,
      });
    }
  }

  /**
   * Claims due steps of the given runs (all locked runs when omitted), in the core's due order
   * (compareDueSteps), as far as CycleRuns.tryClaim admits them, within the claim limit.
   */
  claimDue(runIds: Iterable<string> = this.runs.heldRunIds): void {
    const { request } = this;
    const due: DueStep[] = [];
    for (const runId of runIds) {
      const state = this.runs.entry(runId)?.state;
      if (state && runTakesClaims(state, request)) pushDueSteps(state, request.now, due);
    }
    due.sort(compareDueSteps);
    for (const candidate of due) {
      if (this.claimsLeft <= 0) break;
      this.runs.tryClaim(candidate.runId, candidate.stepId);
    }
  }

  /**
   * Held runs (of `runIds`, all when omitted) with an event wait step due to start waiting: the
   * events kept for them are looked up before the claims (takeKeptEvent is synchronous).
   */
  runsStartingEventWaits(runIds: Iterable<string> = this.runs.heldRunIds): string[] {
    const found: string[] = [];
    for (const runId of runIds) {
      const state = this.runs.entry(runId)?.state;
      if (!state) continue;
      const starts = state.steps.some(
        (step, position) =>
          step.status === 'ready' &&
          state.plan.steps[position]!.wait?.for === 'event' &&
          waitStepDue(state, position, this.request),
      );
      if (starts) found.push(runId);
    }
    return found;
  }

  /** Moves the due waits of every run held (CycleRuns.moveDueWaits), whatever was claimed. */
  moveDueWaits(): void {
    this.runs.moveDueWaits();
  }

  /** Puts every changed run and step into the batch; returns the result and the plans that changed. */
  finish(): { result: CycleResult; changedPlans: { runId: string; hash: string; plan: Plan }[] } {
    const changedPlans: { runId: string; hash: string; plan: Plan }[] = [];
    const gate = this.runs.gate;
    for (const slot of this.runs.changedRuns()) {
      const { state } = slot.entry;
      // A limited slot freed here (and not taken again by this cycle's claims) may be what a
      // sleeping worker waits for: wake them.
      for (const key of freedLimitedKeys({ loaded: slot.loaded, state }, this.limitedKeys)) {
        if (!gate?.holds(key) || gate.allows(key, runningDelta(key, this.runs.held())))
          this.batch.noteDue(this.request.now);
      }
      const hash = this.batch.runState(state, slot.changed, slot.planChanged, slot.added);
      if (hash) changedPlans.push({ runId: state.id, hash, plan: state.plan });
    }
    this.batch.flowStarts(gate?.changedStarts() ?? []);
    // A limit declared now is counted from the next cycle: wake the workers for the steps it held.
    if (this.runs.flowDeclarations.size > 0) {
      this.batch.flowDeclarations(this.runs.flowDeclarations.values(), this.request.now);
      this.batch.noteDue(this.request.now);
    }
    return { result: this.runs.result(), changedPlans };
  }
}
