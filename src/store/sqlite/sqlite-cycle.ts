import { planSecretEnv } from '../../core/run-secrets.js';
import { DUE_STEP_STATUSES, planIndex, type RunState, stepOf } from '../../core/run-state.js';
import { claimStep, expireLease, type Transition } from '../../core/transitions.js';
import { flowAllows, flowStarted, runningDelta } from '../flow-accounting.js';
import type { LoadedRun } from '../loaded-run.js';
import { claimResults, mayRepeatUsage, runningCount, settleCompletion, stepToRun } from '../loaded-run.js';
import type { ClaimedStep, Completion, CycleRequest, CycleResult, ReclaimedAttempt } from '../store.js';
import { type AttemptRow, completionAttemptRow, interruptedAttemptRow } from '../store-rows.js';
import { dueCandidates, dueStepsOf } from './claim-candidates.js';
import type { RunRows } from './run-rows.js';
import type { SqliteFlow } from './sqlite-flow.js';
import type { DueRow, StoreStatements } from './store-statements.js';

const RECLAIM_BATCH = 100;
/** Due steps read per query, and at most how many pages one cycle looks through. */
const CLAIM_PAGE = 64;
const CLAIM_MAX_PAGES = 20;
/** How often (in the request clock) a cycle looks for expired leases. */
const RECLAIM_INTERVAL_MS = 250;

/**
 * The SQLite store's cycle: commits finished attempts, reclaims expired leases and claims due
 * steps on runs loaded into memory, then writes each changed run and step row once. Writers are
 * serialized by the caller's BEGIN IMMEDIATE, so what it reads is what it changes.
 */
export class SqliteCycle {
  private nextReclaimAt = Number.MIN_SAFE_INTEGER;

  constructor(
    private readonly rows: RunRows,
    private readonly statements: StoreStatements,
    private readonly flow: SqliteFlow,
  ) {}

  /** One cycle, inside the caller's write transaction (BEGIN IMMEDIATE). */
  run(request: CycleRequest): CycleResult {
    // Runs touched by this cycle: events are written as transitions happen, each changed run and
    // step row once at the end (a completion and its successor's claim often touch the same rows).
    const touched = new Map<
      string,
      {
        entry: LoadedRun | null;
        loaded: RunState | null;
        changed: Set<string>;
        planChanged: boolean;
        dirty: boolean;
      }
    >();
    const load = (runId: string): LoadedRun | null => {
      let slot = touched.get(runId);
      if (!slot) {
        const entry = this.rows.loadForCycle(runId);
        slot = { entry, loaded: entry?.state ?? null, changed: new Set(), planChanged: false, dirty: false };
        touched.set(runId, slot);
      }
      return slot.entry;
    };
    // Runs held in memory, as loaded and as changed: flow control counts their attempts from these.
    const held = function* () {
      for (const slot of touched.values())
        if (slot.entry && slot.loaded) yield { loaded: slot.loaded, state: slot.entry.state };
    };
    let hooksOwed = false;
    const apply = (entry: LoadedRun, transition: Transition): void => {
      for (const event of transition.events) {
        if (this.rows.appendEvent(entry.state.id, request.now, event, transition.run.plan.hooks))
          hooksOwed = true;
      }
      const slot = touched.get(entry.state.id)!;
      for (const stepId of transition.changedSteps) slot.changed.add(stepId);
      slot.planChanged ||= transition.planChanged ?? false;
      slot.dirty = true;
      entry.state = transition.run;
    };

    const accepted = request.completions.map((completion) => {
      const entry = load(completion.runId);
      const recorded = entry ? this.usageRecorded(entry.state, completion) : false;
      const settled =
        entry && settleCompletion(entry.state, completion, request.now, request.random, recorded);
      if (entry && settled?.transition) apply(entry, settled.transition);
      const live = settled?.live ?? false;
      this.recordAttempt(completion, live, entry?.state ?? null, recorded);
      return live;
    });

    const reclaimed: ReclaimedAttempt[] = [];
    // Leases last seconds: looking for expired ones a few times a second is soon enough.
    const expired =
      request.now >= this.nextReclaimAt ? this.statements.expired.all(request.now, RECLAIM_BATCH) : [];
    if (request.now >= this.nextReclaimAt) this.nextReclaimAt = request.now + RECLAIM_INTERVAL_MS;
    for (const row of expired) {
      const entry = load(row.run_id);
      if (!entry) continue;
      const before = stepOf(entry.state, row.step_id)!;
      // A completion in this same cycle may have settled the attempt (its worker was late, not dead).
      if (before.status !== 'running' || before.attempt !== row.attempt) continue;
      apply(entry, expireLease(entry.state, row.step_id, request.now, request.random));
      const after = stepOf(entry.state, row.step_id)!;
      this.insertAttempt(interruptedAttemptRow(row.run_id, before, after, request.now));
      reclaimed.push({
        runId: row.run_id,
        stepId: row.step_id,
        attempt: row.attempt,
        pid: row.pid,
        host: row.host,
      });
    }

    const claimed: ClaimedStep[] = [];
    // Limits of flow keys, read in this transaction (writers are serialized): null when none is set.
    const gate = request.claimLimit > 0 ? this.flow.gate(request.now) : null;
    const tryClaim = (candidate: DueRow): void => {
      const entry = load(candidate.run_id);
      if (!entry || entry.state.status !== 'running') return;
      // Rows of runs this cycle touched are not written yet: their in-memory state decides.
      const current = stepOf(entry.state, candidate.step_id);
      if (!current || !DUE_STEP_STATUSES.has(current.status) || (current.dueAt ?? 0) > request.now) return;
      const position = planIndex(entry.state.plan).position.get(candidate.step_id)!;
      const planStep = stepToRun(entry.state, position, request.functions);
      if (!planStep) return;
      if (runningCount(entry.state) >= entry.state.plan.limits.concurrency) return;
      if (!flowAllows(gate, entry.state, position, held)) return;
      const transition = claimStep(
        entry.state,
        candidate.step_id,
        request.owner,
        request.now,
        request.leaseMs,
      );
      apply(entry, transition);
      const step = stepOf(transition.run, candidate.step_id)!;
      if (step.status !== 'running') return;
      flowStarted(gate, entry.state, position);
      claimed.push({
        runId: candidate.run_id,
        stepId: candidate.step_id,
        attempt: step.attempt,
        owner: request.owner,
        leaseExpiresAt: step.leaseExpiresAt!,
        tries: step.tries,
        step: planStep,
        ...(current.onFallback ? { fallback: true } : {}),
        ...(entry.state.plan.shadow ? { shadow: true } : {}),
        ...(step.firstStartedAt ? { firstStartedAt: step.firstStartedAt } : {}),
        planName: entry.state.plan.name,
        inputs: entry.inputs,
        workspace: entry.workspace,
        lastError: step.lastError,
        secretEnv: planSecretEnv(entry.state.plan),
        results: claimResults(entry.state, planStep),
      });
    };
    // Driving one run that this cycle already loaded: its whole state is in memory, no query needed.
    const driven = request.runId === undefined ? null : (touched.get(request.runId)?.entry ?? null);
    if (request.claimLimit > 0 && driven) {
      for (const candidate of dueStepsOf(driven, request.now)) {
        if (claimed.length >= request.claimLimit) break;
        tryClaim(candidate);
      }
    } else if (request.claimLimit > 0) {
      const seen = new Set<string>();
      let after: DueRow = { run_id: '', step_id: '', due_at: Number.MIN_SAFE_INTEGER };
      for (let page = 0; page < CLAIM_MAX_PAGES && claimed.length < request.claimLimit; page++) {
        const saturated = gate ? gate.saturatedKeys((key) => runningDelta(key, held())) : [];
        const stored =
          request.runId === undefined && saturated.length > 0
            ? this.statements.dueCandidatesUnsaturated.all(
                request.now,
                after.due_at,
                after.due_at,
                after.run_id,
                after.step_id,
                JSON.stringify(saturated),
                CLAIM_PAGE,
              )
            : request.runId === undefined
              ? this.statements.dueCandidates.all(
                  request.now,
                  after.due_at,
                  after.due_at,
                  after.run_id,
                  after.step_id,
                  CLAIM_PAGE,
                )
              : this.statements.dueCandidatesOfRun.all(
                  request.runId,
                  request.now,
                  after.due_at,
                  after.step_id,
                  CLAIM_PAGE,
                );
        const candidates = page === 0 ? dueCandidates(stored, touched.values(), request) : stored;
        for (const candidate of candidates) {
          if (claimed.length >= request.claimLimit) break;
          const key = `${candidate.run_id}\u0000${candidate.step_id}`;
          if (seen.has(key)) continue;
          seen.add(key);
          tryClaim(candidate);
        }
        if (stored.length < CLAIM_PAGE) break;
        after = stored[stored.length - 1]!;
      }
    }
    for (const slot of touched.values()) {
      if (slot.dirty && slot.entry)
        this.rows.writeState(slot.entry.state, slot.changed, slot.planChanged, slot.loaded?.status ?? null);
    }
    this.flow.saveStarts(gate);
    return { claimed, accepted, reclaimed, ...(hooksOwed ? { hooksOwed: true } : {}) };
  }

  /** Positional parameters, in the statement's column order: binding by name costs a lookup each. */
  private insertAttempt(row: AttemptRow): void {
    this.statements.insertAttempt.run(
      row.run_id,
      row.step_id,
      row.attempt,
      row.owner,
      row.started_at,
      row.ended_at,
      row.outcome,
      row.failure_class,
      row.exit_code,
      row.fingerprint,
      row.message,
      row.summary,
      row.log_path,
      JSON.stringify(row.outputs),
      row.input_tokens,
      row.output_tokens,
      row.cost_usd,
    );
  }

  /** A discarded report whose tokens its attempt row holds already (see NO_USAGE_YET). */
  private usageRecorded(run: RunState, completion: Completion): boolean {
    if (!mayRepeatUsage(run, completion)) return false;
    const { runId, stepId, attempt } = completion;
    return this.statements.usageRecorded.get(runId, stepId, attempt) !== undefined;
  }

  private recordAttempt(
    completion: Completion,
    live: boolean,
    run: RunState | null,
    recorded: boolean,
  ): void {
    const outcome = completion.outcome;
    const step = run ? stepOf(run, completion.stepId) : undefined;
    this.insertAttempt(completionAttemptRow(completion, live, step));
    if (live && outcome.ok) {
      for (const output of outcome.outputs) {
        this.statements.insertArtifact.run(
          completion.runId,
          completion.stepId,
          completion.attempt,
          output.path,
          output.size,
          output.sha256,
        );
      }
    }
  }
}
