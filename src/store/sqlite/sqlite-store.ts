import { realpathSync } from 'node:fs';
import { NO_USAGE } from '../../core/budget.js';
import { runNotFound } from '../../core/errors.js';
import type { BatonEvent } from '../../core/events.js';
import { type FlowLimit, validateFlowLimit } from '../../core/flow.js';
import { stepClaimRank } from '../../core/priority.js';
import type { RunState } from '../../core/run-state.js';
import { decideEach, type RunChange, withHumanCommands } from '../cycle/human-commands.js';
import { settled } from '../cycle/maybe-async.js';
import { newRunState } from '../cycle/new-run.js';
import { withSchedules } from '../cycle/schedule-commands.js';
import { tickSchedules } from '../cycle/schedule-tick.js';
import { type EventDelivery, type EventRuns, type SentEvent, sendEventToRuns } from '../cycle/send-event.js';
import { stepFlowKey } from '../flow-accounting.js';
import type {
  AppendGuard,
  AttemptKey,
  BulkOutcome,
  CycleRequest,
  CycleResult,
  EffectKey,
  EffectRecord,
  FinishedRunsBatch,
  FlowLimitStatus,
  HookDelivery,
  HookDeliveryKey,
  NewRun,
  RunSummary,
  Store,
} from '../store.js';
import { storeId } from '../store-id.js';
import { summaryOf } from '../store-rows.js';
import { withTriggers } from '../triggers/with-triggers.js';
import { SqliteHookDeliveries } from './hook-deliveries.js';
import {
  type OpenSqliteOptions,
  openSqliteDatabase,
  type SqliteDatabase,
  schemaError,
} from './open-database.js';
import { SqliteCycle } from './sqlite-cycle.js';
import { SqliteEffects } from './sqlite-effects.js';
import { SqliteFlow } from './sqlite-flow.js';
import { SqliteReads } from './sqlite-reads.js';
import { SqliteRetention } from './sqlite-retention.js';
import { SqliteSchedules } from './sqlite-schedules.js';
import { sqliteEventRuns } from './sqlite-send-event.js';
import { SqliteTriggers } from './sqlite-triggers.js';
import { prepareStoreStatements } from './store-statements.js';

/** Pages `vacuum()` gives back per transaction (4 MB of 4 KB pages). */
const FREE_PAGES_PER_TRANSACTION = 1024;

/** The embedded default store: one SQLite file, WAL, synchronous=FULL, writers serialized by BEGIN IMMEDIATE. */
export class SqliteStore
  extends withTriggers(withSchedules(withHumanCommands(SqliteReads)))
  implements Store
{
  readonly kind = 'sqlite' as const;
  readonly id: string;
  private readonly statements;
  private readonly hooks: SqliteHookDeliveries;
  private readonly effects: SqliteEffects;
  private readonly retention: SqliteRetention;
  private readonly flow: SqliteFlow;
  private readonly cycles: SqliteCycle;
  readonly schedules: SqliteSchedules;
  readonly triggerRows: SqliteTriggers;
  /** `baton send`'s rows, prepared at the first send. */
  private eventRuns: EventRuns | undefined;

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
  /** Runs waiting for the next write transaction (see createRun). */
  private queuedRuns: QueuedRun[] = [];
  private flushQueued = false;

  constructor(db: SqliteDatabase) {
    super(db);
    this.id = storeId(`sqlite:${realPathOr(db.name)}`);
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
    this.statements = prepareStoreStatements(db);
    this.hooks = new SqliteHookDeliveries(db);
    this.effects = new SqliteEffects(db);
    this.retention = new SqliteRetention(db);
    this.flow = new SqliteFlow(db);
    this.cycles = new SqliteCycle(this.rows, this.statements, this.flow);
    this.schedules = new SqliteSchedules(db, {
      write: (fn) => this.write(fn),
      insertRun: (spec) => this.insertRun(spec),
    });
    this.triggerRows = new SqliteTriggers(db, (fn) => this.write(fn));
  }

  /**
   * Stores a new run. Runs are group-committed: a call queues its run, and the next write
   * transaction stores every run queued by then (the worker's cycle, which may claim their first
   * steps in the same transaction, or a flush on the next turn of the event loop), so 200 runs
   * started at once cost one fsync, not 200. The promise settles once the run is committed; a run
   * that cannot be stored (an id already taken) fails alone, in its own savepoint.
   */
  async createRun(spec: NewRun): Promise<RunSummary> {
    return new Promise((resolve, reject) => {
      this.queuedRuns.push({ spec, resolve, reject });
      this.scheduleFlush();
    });
  }

  /** A flush of the queued runs on the next turn of the event loop, unless one is due already. */
  private scheduleFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => this.flushQueuedRuns());
  }

  /** Stores the runs queued since the last write transaction, in a transaction of their own. */
  private flushQueuedRuns(): void {
    this.flushQueued = false;
    if (this.queuedRuns.length === 0) return;
    const queued = this.takeQueuedRuns();
    let stored: StoredRuns;
    try {
      stored = this.write(() => this.insertQueuedRuns(queued));
    } catch (error) {
      for (const run of queued) run.reject(error);
      return;
    }
    this.settleQueuedRuns(stored);
  }

  private takeQueuedRuns(): QueuedRun[] {
    const queued = this.queuedRuns;
    this.queuedRuns = [];
    return queued;
  }

  /** Inside a write transaction: each queued run in a savepoint, so one refused run fails alone. */
  private insertQueuedRuns(queued: readonly QueuedRun[]): StoredRuns {
    return queued.map((run) => {
      try {
        const created = this.inTransaction(() => this.insertRun(run.spec)) as RunState;
        return { run, created, error: null };
      } catch (error) {
        return { run, created: null, error };
      }
    });
  }

  /**
   * After the commit: each caller gets its run's summary as created (a cycle of the same
   * transaction may have claimed its first steps since), or why it was not stored.
   */
  private settleQueuedRuns(stored: StoredRuns): void {
    for (const { run, created, error } of stored) {
      if (created === null) run.reject(error);
      else run.resolve(summaryOf(created, created.usage ?? NO_USAGE));
    }
  }

  /** The rows of a new run, inside the caller's transaction; its state as stored. */
  private insertRun(spec: NewRun): RunState {
    const { state, event } = newRunState(spec);
    const { status, steps } = state;
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
    for (const [key, value] of Object.entries(spec.labels ?? {}))
      this.statements.insertLabel.run(spec.id, key, value);
    spec.plan.steps.forEach((step, position) => {
      const initial = steps[position]!;
      this.statements.insertStep.run(
        spec.id,
        step.id,
        position,
        initial.status,
        initial.dueAt,
        stepClaimRank(spec.plan, position, initial.dueAt),
        initial.resultJson,
        spec.now,
        stepFlowKey(state, position),
      );
    });
    this.rows.appendEvent(spec.id, spec.now, event);
    this.rows.afterRunCreated(spec.id);
    return state;
  }

  /**
   * One cycle, in one write transaction with the runs queued since the last one: their first steps
   * can be claimed by this same cycle.
   */
  async cycle(request: CycleRequest): Promise<CycleResult> {
    const queued = this.takeQueuedRuns();
    if (queued.length === 0) return this.write(() => this.cycleAndTick(request));
    let outcome: { stored: StoredRuns; result: CycleResult };
    try {
      outcome = this.write(() => {
        const stored = this.insertQueuedRuns(queued);
        return { stored, result: this.cycleAndTick(request) };
      });
    } catch (error) {
      // The cycle failed, not the runs: they go back to the queue for a transaction of their own.
      this.queuedRuns.unshift(...queued);
      this.scheduleFlush();
      throw error;
    }
    this.settleQueuedRuns(outcome.stored);
    return outcome.result;
  }

  /**
   * Inside a cycle's write transaction: the cycle, then the due slots of schedules start their runs
   * (cycle/schedule-tick.ts; a run started makes the engine look again at once, which claims its
   * first steps).
   */
  private cycleAndTick(request: CycleRequest): CycleResult {
    const result = this.rows.inCycle(() => this.cycles.run(request));
    return settled(tickSchedules(this.schedules, request, result, this.scheduleLook));
  }

  /**
   * One write transaction (BEGIN IMMEDIATE). A path that changes runs or steps keeps the caches of
   * RunRows right itself (see RunRows); on failure the cached states may be ahead of disk: dropped.
   */
  private write<T>(fn: () => T): T {
    try {
      // One reusable transaction wrapper: better-sqlite3 builds a new one per db.transaction() call.
      return this.inTransaction.immediate(fn) as T;
    } catch (error) {
      this.rows.forget();
      throw error;
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
      const runIds = new Set(attempts.map((key) => key.runId));
      for (const runId of runIds) this.statements.bumpVersion.run(runId);
      this.rows.afterLeasesRenewed(runIds);
      return lost;
    });
  }

  async recordAttemptProcess(key: AttemptKey, proc: { pid: number; host: string }): Promise<void> {
    this.statements.recordProcess.run(proc.pid, proc.host, key.runId, key.stepId, key.attempt);
  }

  async appendEvents(
    runId: string,
    events: readonly BatonEvent[],
    now: number,
    guard?: AppendGuard,
  ): Promise<void> {
    if (events.length === 0) return;
    this.write(() => {
      const run = this.rows.load(runId);
      if (!run) throw runNotFound(runId);
      if (guard) {
        const refusal = guard.refuse(this.eventsAfter(runId, guard.afterSeq));
        if (refusal) throw refusal;
      }
      // A running agent's held tool call calls the plan's `waiting` hooks, as a waiting step does.
      for (const event of events) this.rows.appendEvent(runId, now, event, run.state.plan.hooks);
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

  async deleteFinishedRuns(
    before: number,
    options: { dryRun?: boolean } & FinishedRunsBatch = {},
  ): Promise<string[]> {
    return this.write(() => {
      const ids = this.retention.deleteFinishedRuns(before, options.dryRun ?? false, options);
      if (!options.dryRun) this.rows.afterRunsDeleted(ids);
      return ids;
    });
  }

  async vacuum(options: { full?: boolean } = {}): Promise<void> {
    if (options.full) {
      this.retention.rewrite();
      this.rows.forget();
      return;
    }
    // A bounded transaction at a time, so workers commit in between; until none are left, or
    // none went back (other writers freeing pages as fast).
    let left = Number.POSITIVE_INFINITY;
    for (;;) {
      const now = this.write(() => this.retention.returnFreePages(FREE_PAGES_PER_TRANSACTION));
      if (now === 0 || now >= left) return;
      left = now;
    }
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

  override async applyCommand(runId: string, change: RunChange, now: number): Promise<RunSummary> {
    // persist writes through writeState, which keeps the caches as it wrote them.
    this.write(() => {
      const entry = this.requireRun(runId);
      const transition = change(entry.state);
      this.rows.persist(transition, now);
      if (transition.clearEffects) this.effects.forgetSteps(runId, transition.clearEffects);
    });
    return this.summary(runId);
  }

  override async applyCommands(
    changes: readonly { runId: string; change: RunChange }[],
    now: number,
  ): Promise<BulkOutcome[]> {
    const outcomes: BulkOutcome[] = [];
    this.write(() => {
      for (const decided of decideEach(changes, (runId) => this.rows.load(runId) ?? undefined)) {
        if ('refused' in decided) {
          outcomes.push(decided);
          continue;
        }
        const { runId, transition } = decided;
        this.rows.persist(transition, now);
        if (transition.clearEffects) this.effects.forgetSteps(runId, transition.clearEffects);
        outcomes.push({ runId, summary: summaryOf(transition.run, transition.run.usage ?? NO_USAGE) });
      }
    });
    return outcomes;
  }

  async sendEvent(sent: SentEvent, now: number): Promise<EventDelivery[]> {
    this.eventRuns ??= sqliteEventRuns({ db: this.db, rows: this.rows, write: (fn) => this.write(fn) });
    return sendEventToRuns(this.eventRuns, sent, now);
  }

  async close(): Promise<void> {
    // Runs already asked for are stored before the file closes.
    if (this.db.open && this.queuedRuns.length > 0) this.flushQueuedRuns();
    if (this.db.open) this.db.close();
  }
}

/** A run waiting to be stored, and its caller's promise. */
interface QueuedRun {
  spec: NewRun;
  resolve: (summary: RunSummary) => void;
  reject: (error: unknown) => void;
}

/** What a write transaction did with each queued run: stored (its state) or refused (why). */
type StoredRuns = (
  | { run: QueuedRun; created: RunState; error: null }
  | { run: QueuedRun; created: null; error: unknown }
)[];

function realPathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
