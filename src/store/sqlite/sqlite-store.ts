import { hostname } from 'node:os';
import { runNotFound } from '../../core/errors.js';
import type { BatonEvent } from '../../core/events.js';
import { ATTEMPT_SUMMARY_MAX_CHARS } from '../../core/failure.js';
import { fallbackPlanStep } from '../../core/fallback.js';
import { type FlowLimit, validateFlowLimit } from '../../core/flow.js';
import {
  approveRun,
  cancelRun,
  rejectRun,
  resolveStep,
  resumeRun,
  retryStep,
  skipStep,
} from '../../core/run-commands.js';
import {
  DUE_STEP_STATUSES,
  planIndex,
  type RunState,
  type StepResult,
  stepOf,
} from '../../core/run-state.js';
import {
  claimStep,
  completeStep,
  expireLease,
  holdsLease,
  initialStepStates,
  type Transition,
} from '../../core/transitions.js';
import { flowAllows, flowStarted, runningDelta, stepFlowKey } from '../flow-accounting.js';
import type { LoadedRun } from '../loaded-run.js';
import { resultOf, runningCount } from '../loaded-run.js';
import type {
  AttemptKey,
  ClaimedStep,
  Completion,
  CycleRequest,
  CycleResult,
  EffectKey,
  EffectRecord,
  FlowLimitStatus,
  HookDelivery,
  HookDeliveryKey,
  NewRun,
  ReclaimedAttempt,
  RunSummary,
  Store,
} from '../store.js';
import { dueCandidates, dueStepsOf } from './claim-candidates.js';
import { SqliteHookDeliveries } from './hook-deliveries.js';
import {
  type OpenSqliteOptions,
  openSqliteDatabase,
  type SqliteDatabase,
  schemaError,
} from './open-database.js';
import { SqliteEffects } from './sqlite-effects.js';
import { SqliteFlow } from './sqlite-flow.js';
import { SqliteReads } from './sqlite-reads.js';
import { SqliteRetention } from './sqlite-retention.js';
import { type DueRow, prepareStoreStatements } from './store-statements.js';

const RECLAIM_BATCH = 100;
/** Due steps read per query, and at most how many pages one cycle looks through. */
const CLAIM_PAGE = 64;
const CLAIM_MAX_PAGES = 20;
/** How often (in the request clock) a cycle looks for expired leases. */
const RECLAIM_INTERVAL_MS = 250;

/** The embedded default store: one SQLite file, WAL, synchronous=FULL, writers serialized by BEGIN IMMEDIATE. */
export class SqliteStore extends SqliteReads implements Store {
  readonly kind = 'sqlite' as const;
  private readonly statements;
  private readonly hooks: SqliteHookDeliveries;
  private readonly effects: SqliteEffects;
  private readonly retention: SqliteRetention;
  private readonly flow: SqliteFlow;

  static open(path: string, options?: OpenSqliteOptions): SqliteStore {
    const db = openSqliteDatabase(path, options);
    try {
      return new SqliteStore(db);
    } catch (error) {
      db.close();
      throw schemaError(path, error);
    }
  }

  private readonly inTransaction;
  private nextReclaimAt = Number.MIN_SAFE_INTEGER;

  constructor(db: SqliteDatabase) {
    super(db);
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
    this.statements = prepareStoreStatements(db);
    this.hooks = new SqliteHookDeliveries(db);
    this.effects = new SqliteEffects(db);
    this.retention = new SqliteRetention(db);
    this.flow = new SqliteFlow(db);
  }

  async createRun(spec: NewRun): Promise<RunSummary> {
    const imported = JSON.stringify({ summary: 'done before the run was imported', outputs: [] });
    const steps = initialStepStates(spec.plan, spec.now, new Set(spec.completedSteps ?? []), imported);
    const status = spec.awaitingApproval ? 'awaiting_approval' : 'running';
    this.write(() => {
      this.statements.insertRun.run(
        spec.id,
        spec.plan.name,
        spec.planHash,
        JSON.stringify(spec.inputs),
        spec.workspace,
        status,
        spec.now,
        spec.now,
      );
      this.statements.insertPlan.run(spec.id, JSON.stringify(spec.plan));
      spec.plan.steps.forEach((step, position) => {
        const state = steps[position]!;
        this.statements.insertStep.run(
          spec.id,
          step.id,
          position,
          state.status,
          state.dueAt,
          state.resultJson,
          spec.now,
          stepFlowKey({ plan: spec.plan, steps }, position),
        );
      });
      this.rows.appendEvent(spec.id, spec.now, {
        type: 'run.created',
        planName: spec.plan.name,
        planHash: spec.planHash,
        steps: spec.plan.steps.length,
        status,
      });
    });
    return this.summary(spec.id);
  }

  async cycle(request: CycleRequest): Promise<CycleResult> {
    return this.write(() => this.cycleInTransaction(request));
  }

  /** One write transaction (BEGIN IMMEDIATE). On failure the cached step states may be ahead of disk: drop them. */
  private write<T>(fn: () => T): T {
    try {
      // One reusable transaction wrapper: better-sqlite3 builds a new one per db.transaction() call.
      return this.inTransaction.immediate(fn) as T;
    } catch (error) {
      this.rows.forget();
      throw error;
    }
  }

  private cycleInTransaction(request: CycleRequest): CycleResult {
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
        const entry = this.rows.load(runId);
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
    const apply = (entry: LoadedRun, transition: Transition): void => {
      for (const event of transition.events) {
        this.rows.appendEvent(entry.state.id, request.now, event, transition.run.plan.hooks);
      }
      const slot = touched.get(entry.state.id)!;
      for (const stepId of transition.changedSteps) slot.changed.add(stepId);
      slot.planChanged ||= transition.planChanged ?? false;
      slot.dirty = true;
      entry.state = transition.run;
    };

    const accepted = request.completions.map((completion) => {
      const entry = load(completion.runId);
      const live =
        entry !== null && holdsLease(entry.state, completion.stepId, completion.attempt, completion.owner);
      const resultJson = completion.outcome.ok ? JSON.stringify(resultOf(completion.outcome)) : null;
      if (live) {
        const transition = completeStep(
          entry.state,
          completion.stepId,
          completion.outcome,
          request.now,
          request.random,
          resultJson,
        );
        apply(entry, transition);
      }
      this.recordAttempt(completion, live, entry?.state ?? null);
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
      this.statements.insertAttempt.run({
        runId: row.run_id,
        stepId: row.step_id,
        attempt: row.attempt,
        owner: before.leaseOwner,
        startedAt: before.startedAt,
        endedAt: request.now,
        outcome: 'interrupted',
        failureClass: 'interrupted',
        exitCode: null,
        fingerprint: stepOf(entry.state, row.step_id)!.fingerprint,
        message: stepOf(entry.state, row.step_id)!.lastError,
        summary: null,
        logPath: null,
        outputsJson: '[]',
        inputTokens: null,
        outputTokens: null,
        costUsd: null,
      });
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
      const declared = entry.state.plan.steps[planIndex(entry.state.plan).position.get(candidate.step_id)!]!;
      // What this attempt runs: the step's own executor, or its fallback once that took over.
      const planStep = current.onFallback ? fallbackPlanStep(declared) : declared;
      if (planStep.kind === 'fn' && request.functions && !request.functions.includes(planStep.fn ?? ''))
        return;
      if (runningCount(entry.state) >= entry.state.plan.limits.concurrency) return;
      const position = planIndex(entry.state.plan).position.get(candidate.step_id)!;
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
      if (slot.dirty && slot.entry) this.rows.writeState(slot.entry.state, slot.changed, slot.planChanged);
    }
    this.flow.saveStarts(gate);
    return { claimed, accepted, reclaimed };
  }

  private recordAttempt(completion: Completion, live: boolean, run: RunState | null): void {
    const outcome = completion.outcome;
    const step = run ? stepOf(run, completion.stepId) : undefined;
    this.statements.insertAttempt.run({
      runId: completion.runId,
      stepId: completion.stepId,
      attempt: completion.attempt,
      owner: completion.owner,
      startedAt: completion.startedAt,
      endedAt: completion.endedAt,
      outcome: !live ? 'discarded' : outcome.ok ? 'succeeded' : 'failed',
      failureClass: outcome.ok ? null : outcome.failureClass,
      exitCode: outcome.exitCode ?? null,
      fingerprint: outcome.ok || !live ? null : (step?.fingerprint ?? null),
      message: outcome.ok ? null : outcome.message,
      // The attempt keeps a summary; the full result is in the step (or the artifact store).
      summary: outcome.ok ? outcome.summary.slice(0, ATTEMPT_SUMMARY_MAX_CHARS) : null,
      logPath: completion.logPath,
      outputsJson: JSON.stringify(outcome.ok ? outcome.outputs : []),
      inputTokens: outcome.usage?.inputTokens ?? null,
      outputTokens: outcome.usage?.outputTokens ?? null,
      costUsd: outcome.usage?.costUsd ?? null,
    });
    // Tokens spent count against the run even when the outcome was discarded.
    if (outcome.usage) {
      const { inputTokens, outputTokens, costUsd } = outcome.usage;
      this.statements.addRunUsage.run(inputTokens, outputTokens, costUsd, completion.runId);
    }
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

  async renewLeases(
    owner: string,
    attempts: readonly AttemptKey[],
    leaseMs: number,
    now: number,
  ): Promise<AttemptKey[]> {
    if (attempts.length === 0) return [];
    return this.write(() => {
      const lost = attempts.filter(
        (key) =>
          this.statements.renew.run(now + leaseMs, key.runId, key.stepId, key.attempt, owner).changes === 0,
      );
      // Lease times are part of the cached step states: a new version makes every process reload them.
      for (const runId of new Set(attempts.map((key) => key.runId))) this.statements.bumpVersion.run(runId);
      return lost;
    });
  }

  async recordAttemptProcess(key: AttemptKey, proc: { pid: number; host: string }): Promise<void> {
    this.statements.recordProcess.run(proc.pid, proc.host, key.runId, key.stepId, key.attempt);
  }

  async appendEvents(runId: string, events: readonly BatonEvent[], now: number): Promise<void> {
    if (events.length === 0) return;
    this.write(() => {
      if (!this.rows.load(runId)) throw runNotFound(runId);
      for (const event of events) this.rows.appendEvent(runId, now, event);
    });
  }

  async beginEffect(key: EffectKey, now: number): Promise<EffectRecord | null> {
    return this.write(() => this.effects.begin(key, now));
  }

  async completeEffect(key: EffectKey, result: unknown, now: number): Promise<void> {
    this.write(() => this.effects.finish(key, result, now));
  }

  async clearEffect(key: EffectKey): Promise<void> {
    this.write(() => this.effects.clear(key));
  }

  async setFlowLimit(limit: FlowLimit, now: number): Promise<void> {
    const valid = validateFlowLimit(limit);
    this.write(() => this.flow.set(valid, now));
  }

  async removeFlowLimit(key: string): Promise<boolean> {
    return this.write(() => this.flow.delete(key));
  }

  async listFlowLimits(now: number): Promise<FlowLimitStatus[]> {
    return this.flow.list(now);
  }

  async deleteFinishedRuns(before: number, options: { dryRun?: boolean } = {}): Promise<string[]> {
    const ids = this.write(() => this.retention.deleteFinishedRuns(before, options.dryRun ?? false));
    if (!options.dryRun) this.rows.forget();
    return ids;
  }

  async referencedResultArtifacts(): Promise<Set<string>> {
    return this.retention.referencedResultArtifacts();
  }

  async claimHookDeliveries(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<HookDelivery[]> {
    // Asked after every cycle: a read first, so that nothing owed costs no write transaction.
    if (!this.hooks.anyDue(now)) return [];
    return this.write(() => this.hooks.claim(owner, now, leaseMs, limit));
  }

  async finishHookDelivery(
    key: HookDeliveryKey,
    result: { ok: true } | { ok: false; error: string; retryAt: number | null },
  ): Promise<void> {
    this.write(() => this.hooks.finish(key, result));
  }

  private command(runId: string, change: (run: RunState) => Transition, now: number): RunSummary {
    this.write(() => {
      const entry = this.requireRun(runId);
      this.rows.persist(change(entry.state), now);
    });
    return this.summary(runId);
  }

  async retryStep(runId: string, stepId: string, now: number): Promise<RunSummary> {
    return this.command(runId, (run) => retryStep(run, stepId, now), now);
  }

  async skipStep(runId: string, stepId: string, now: number): Promise<RunSummary> {
    return this.command(runId, (run) => skipStep(run, stepId, now), now);
  }

  async cancelRun(runId: string, now: number): Promise<RunSummary> {
    return this.command(runId, (run) => cancelRun(run, now), now);
  }

  async approveRun(runId: string, now: number, delayMs = 0): Promise<RunSummary> {
    return this.command(runId, (run) => approveRun(run, now, delayMs), now);
  }

  async rejectRun(runId: string, now: number): Promise<RunSummary> {
    return this.command(runId, (run) => rejectRun(run, now), now);
  }

  async resolveStep(runId: string, stepId: string, result: StepResult, now: number): Promise<RunSummary> {
    const json = JSON.stringify(result);
    return this.command(runId, (run) => resolveStep(run, stepId, json, now), now);
  }

  async resumeRun(runId: string, now: number): Promise<RunSummary> {
    return this.command(runId, (run) => resumeRun(run, now), now);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** The host name recorded with attempt processes (for orphan clean-up on reclaim). */
  static host(): string {
    return hostname();
  }
}
