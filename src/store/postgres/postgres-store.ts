import { NO_USAGE } from '../../core/budget.js';
import { runNotFound } from '../../core/errors.js';
import type { BatonEvent } from '../../core/events.js';
import { type FlowLimit, validateFlowLimit } from '../../core/flow.js';
import type { Plan } from '../../core/plan/types.js';
import type { StoredAttempt } from '../../core/settle-report.js';
import type { Transition } from '../../core/transitions.js';
import { decideEach, type RunChange, withHumanCommands } from '../cycle/human-commands.js';
import { RECLAIM_BATCH, ReclaimSchedule, WAIT_LOOK_INTERVAL_MS } from '../cycle/reclaim-schedule.js';
import { withSchedules } from '../cycle/schedule-commands.js';
import { scheduleTickDue, tickSchedules } from '../cycle/schedule-tick.js';
import { type EventDelivery, type SentEvent, sendEventToRuns } from '../cycle/send-event.js';
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
import { attemptKeyText, NO_USAGE_YET, summaryOf } from '../store-rows.js';
import { withTriggers } from '../triggers/with-triggers.js';
import { appendRunEvents } from './append-events.js';
import { createRunSql, createRunsSql, createRunsValues, createRunValues } from './create-run.js';
import { type CycleLockParams, cycleLockSql, cycleLockValues, type LockPhase } from './cycle-locks.js';
import { CycleWork } from './cycle-work.js';
import { PostgresEffects } from './effects.js';
import { PostgresFlow } from './flow-limits.js';
import { PostgresHookDeliveries } from './hook-deliveries.js';
import {
  connectError,
  createListenClient,
  createPool,
  firstConnection,
  type PgClient,
  type PgPool,
} from './open-pool.js';
import type { OpenPostgresOptions } from './open-postgres-options.js';
import { parsePgUrl, serverAddress } from './pg-url.js';
import { PostgresReads } from './postgres-reads.js';
import { PostgresRetention } from './postgres-retention.js';
import { PostgresSchedules } from './postgres-schedules.js';
import { postgresEventRuns } from './postgres-send-event.js';
import { PostgresTriggers } from './postgres-triggers.js';
import { type PreparedSql, prepared } from './prepared.js';
import { renewLeaseRows } from './renew-leases.js';
import type { PgLoadedRun } from './run-loader.js';
import { migrateSchema } from './schema-migrations.js';
import { DEFAULT_SCHEMA, notifyChannel, quoteSchema, validateSchemaName } from './schema-name.js';
import { inTransaction } from './transaction.js';
import { keptEventsOf, lockDueWaits, takeKeptEvents } from './wait-events.js';
import { WorkListener } from './work-listener.js';
import { nextDueAt, WriteBatch, writeBatchSql } from './write-batch.js';

const DEFAULT_POLL_MS = 30_000;
/** First wait before the LISTEN connection is opened again after it was lost (ms). */
const RECONNECT_MS = 250;
/** Longest idle wait while LISTEN is not in place (ms): the engine's usual poll. */
const UNLISTENED_POLL_MS = 1000;

/** Lock rounds per cycle when runs locked for their due work turned out to have none left. */
const CLAIM_MAX_ROUNDS = 4;

/**
 * The scale-out store: PostgreSQL, READ COMMITTED with row locks. A transaction changes a run only
 * while holding its row lock (FOR NO KEY UPDATE): waited for when the run is named (completions,
 * human commands, renewals, in id order), skipped when it is merely found due (SKIP LOCKED), so
 * several workers claim different runs without waiting and no step is claimed twice. Each commit
 * that makes work due sends NOTIFY baton_<schema>; `waitForWork` listens for it.
 */
export class PostgresStore
  extends withTriggers(withSchedules(withHumanCommands(PostgresReads)))
  implements Store
{
  readonly kind = 'postgres' as const;
  readonly id: string;
  private readonly writeSql: PreparedSql;
  private readonly lockSql: PreparedSql;
  private readonly createSql: PreparedSql;
  private readonly createManySql: PreparedSql;
  private readonly storedAttemptsSql: PreparedSql;
  private readonly attemptProcessSql: PreparedSql;
  private readonly effects: PostgresEffects;
  private readonly hooks: PostgresHookDeliveries;
  private readonly retention: PostgresRetention;
  private readonly flow: PostgresFlow;
  private readonly listener: WorkListener;
  private readonly reclaims = new ReclaimSchedule();
  readonly schedules: PostgresSchedules;
  readonly triggerRows: PostgresTriggers;
  private readonly waitLooks = new ReclaimSchedule(WAIT_LOOK_INTERVAL_MS);
  private closed = false;

  static async open(url: string, options: OpenPostgresOptions = {}): Promise<PostgresStore> {
    const schema = validateSchemaName(options.schema ?? DEFAULT_SCHEMA);
    const listener = new WorkListener({
      newClient: () => createListenClient(url),
      channel: notifyChannel(schema),
      pollMs: options.pollMs ?? DEFAULT_POLL_MS,
      unlistenedPollMs: UNLISTENED_POLL_MS,
      reconnectMs: RECONNECT_MS,
    });
    const pool = createPool(url, options.poolSize);
    try {
      await firstConnection(pool, url);
      await migrateSchema(pool, schema);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw connectError(url, error);
    }
    const database = parsePgUrl(url)?.pathname.replace(/^\//, '') ?? '';
    return new PostgresStore(
      pool,
      schema,
      listener,
      storeId(`postgres:${serverAddress(url)}/${database}/${schema}`),
    );
  }

  private constructor(pool: PgPool, schemaName: string, listener: WorkListener, id: string) {
    const schema = quoteSchema(schemaName);
    super(pool, schema);
    this.id = id;
    const channel = notifyChannel(schemaName);
    this.writeSql = prepared(writeBatchSql(schema, channel));
    this.lockSql = prepared(cycleLockSql(schema));
    this.createSql = prepared(createRunSql(schema, channel));
    this.createManySql = prepared(createRunsSql(schema, channel));
    this.storedAttemptsSql = prepared(
      `SELECT attempts.run_id, attempts.step_id, attempts.attempt, attempts.owner,
         NOT (${NO_USAGE_YET}) AS has_usage FROM ${schema}.attempts
       JOIN unnest($1::text[], $2::text[], $3::int[]) AS k (run_id, step_id, attempt)
         ON attempts.run_id = k.run_id AND attempts.step_id = k.step_id AND attempts.attempt = k.attempt`,
    );
    // Once per agent attempt: prepared, so the server does not parse and plan it every time.
    this.attemptProcessSql = prepared(
      `UPDATE ${schema}.steps SET pid = $1, host = $2
       WHERE run_id = $3 AND step_id = $4 AND attempt = $5 AND status = 'running'`,
    );
    this.effects = new PostgresEffects(pool, schema);
    this.hooks = new PostgresHookDeliveries(pool, schema);
    this.retention = new PostgresRetention(pool, schema);
    this.flow = new PostgresFlow(pool, schema);
    this.listener = listener;
    this.schedules = new PostgresSchedules(pool, schema, async (client, specs) => {
      await client.query({ ...this.createManySql, values: createRunsValues(specs) });
    });
    this.triggerRows = new PostgresTriggers(pool, schema);
  }

  async createRun(spec: NewRun): Promise<RunSummary> {
    const { state, values } = createRunValues(spec);
    // One statement: atomic without an explicit transaction.
    await this.pool.query({ ...this.createSql, values });
    this.loader.rememberPlan(spec.id, spec.planHash, spec.plan);
    return summaryOf(state, NO_USAGE);
  }

  async cycle(request: CycleRequest): Promise<CycleResult> {
    // What was notified before this point is visible to the claim below.
    if (request.claimLimit > 0) this.listener.cycleStarted();
    const reclaim = this.reclaims.take(request.now);
    const lookForWaits = this.waitLooks.take(request.now);
    // Schedules are ticked by cycles of every run (see ScheduleLook for when they look).
    const tickDue = scheduleTickDue(request, this.scheduleLook);
    if (!reclaim && !lookForWaits && !tickDue && request.completions.length === 0 && request.claimLimit <= 0)
      return { claimed: [], accepted: [], reclaimed: [] };
    const work = new CycleWork(request);
    const completionRunIds = [...new Set(request.completions.map((c) => c.runId))].sort();
    const claimRuns = Math.max(0, request.claimLimit);
    let params: CycleLockParams = {
      completionRunIds,
      reclaimBefore: reclaim ? request.now : null,
      reclaimLimit: RECLAIM_BATCH,
      claimRuns,
      now: request.now,
      runId: request.runId ?? null,
      functions: request.functions ?? null,
      exclude: completionRunIds,
    };
    const { result, changedPlans } = await inTransaction(this.pool, async (client) => {
      /** Runs whose kept events were offered to the batch (a second offer would give them again). */
      const offered = new Set<string>();
      for (let round = 0; ; round++) {
        const locked = await this.lock(client, params, work);
        work.add(await this.loader.load(client, locked.newRunIds));
        if (round === 0) {
          const lookUp = work.usageToLookUp();
          work.complete(lookUp.length === 0 ? undefined : await this.storedAttempts(client, lookUp));
          if (reclaim) work.reclaimExpired(RECLAIM_BATCH);
        }
        // Limited flow keys of the due work are locked before any claim under them; only the first
        // round waits for them (no lock is waited for while holding one taken in a later round).
        const keys = work.flowKeysToLock(round === 0 ? undefined : locked.newRunIds);
        if (keys.length > 0)
          work.addFlowKeys(await this.flow.lock(client, keys, round > 0, request.now), keys);
        const starting = work.runsStartingEventWaits(round === 0 ? undefined : locked.newRunIds);
        for (const runId of starting) offered.add(runId);
        if (starting.length > 0)
          work.batch.offerKeptEvents(await keptEventsOf(client, this.schema, starting));
        if (round === 0) work.claimDue();
        else work.claimDue(locked.newRunIds);
        // Fewer runs than asked: every run with visible due work was locked (or is another worker's).
        if (work.claimsLeft <= 0 || locked.claimRuns < params.claimRuns || round + 1 >= CLAIM_MAX_ROUNDS)
          break;
        params = {
          ...params,
          completionRunIds: [],
          reclaimBefore: null,
          claimRuns: work.claimsLeft,
          exclude: work.lockedRunIds,
        };
      }
      // Due waits in runs the claims do not lock (blocked, or not reached: no slot free in this
      // worker, or more runs due than it claims; one at its concurrency is locked for its waits),
      // then the due waits of every run held, their kept events looked up first.
      if (lookForWaits) {
        const dueWaits = await lockDueWaits(client, this.schema, {
          now: request.now,
          runId: request.runId ?? null,
          exclude: work.lockedRunIds,
          limit: RECLAIM_BATCH,
        });
        if (dueWaits.length > 0) work.add(await this.loader.load(client, dueWaits));
      }
      const late = work.runsStartingEventWaits().filter((runId) => !offered.has(runId));
      if (late.length > 0) work.batch.offerKeptEvents(await keptEventsOf(client, this.schema, late));
      work.moveDueWaits();
      const finished = work.finish();
      if (!work.batch.empty) await client.query({ ...this.writeSql, values: work.batch.params() });
      await takeKeptEvents(client, this.schema, work.batch.takenEvents);
      // In the same transaction: the due slots of schedules start their runs (cycle/schedule-tick.ts).
      const result = await tickSchedules(
        this.schedules.on(client),
        request,
        finished.result,
        this.scheduleLook,
      );
      return { ...finished, result };
    });
    for (const changed of changedPlans) this.loader.rememberPlan(changed.runId, changed.hash, changed.plan);
    return result;
  }

  /** The attempt rows stored already of these attempts, by attemptKeyText. */
  private async storedAttempts(
    client: PgClient,
    attempts: readonly AttemptKey[],
  ): Promise<Map<string, StoredAttempt>> {
    const { rows } = await client.query<{
      run_id: string;
      step_id: string;
      attempt: number;
      owner: string | null;
      has_usage: boolean;
    }>({
      ...this.storedAttemptsSql,
      values: [attempts.map((a) => a.runId), attempts.map((a) => a.stepId), attempts.map((a) => a.attempt)],
    });
    return new Map(
      rows.map((r) => [
        attemptKeyText({ runId: r.run_id, stepId: r.step_id, attempt: r.attempt }),
        { owner: r.owner, hasUsage: r.has_usage },
      ]),
    );
  }

  /**
   * Runs the lock statement; returns the runs locked by it that this cycle did not hold yet, and
   * notes the flow keys with a limit in `work`.
   */
  private async lock(
    client: PgClient,
    params: CycleLockParams,
    work: CycleWork,
  ): Promise<{ newRunIds: string[]; claimRuns: number }> {
    const nothingToLock =
      params.completionRunIds.length === 0 && params.reclaimBefore === null && params.claimRuns === 0;
    if (nothingToLock) return { newRunIds: [], claimRuns: 0 };
    const { rows } = await client.query<{ id: string; phase: LockPhase }>({
      ...this.lockSql,
      values: cycleLockValues(params),
    });
    const seen = new Set(work.lockedRunIds);
    const newRunIds: string[] = [];
    let claimRuns = 0;
    for (const row of rows) {
      if (row.phase === 'flow') {
        work.limitedKeys.add(row.id);
        continue;
      }
      if (row.phase === 'claim') claimRuns++;
      if (!seen.has(row.id)) {
        seen.add(row.id);
        newRunIds.push(row.id);
      }
    }
    return { newRunIds, claimRuns };
  }

  async renewLeases(
    owner: string,
    attempts: readonly AttemptKey[],
    leaseMs: number,
    now: number,
  ): Promise<AttemptKey[]> {
    return renewLeaseRows(this.pool, this.schema, { owner, attempts, leaseMs, now });
  }

  async recordAttemptProcess(key: AttemptKey, proc: { pid: number; host: string }): Promise<void> {
    await this.pool.query({
      ...this.attemptProcessSql,
      values: [proc.pid, proc.host, key.runId, key.stepId, key.attempt],
    });
  }

  /** A human command: lock the run, load it, apply the core's transition, write it, all in one transaction. */
  override async applyCommand(runId: string, change: RunChange, now: number): Promise<RunSummary> {
    const run = await inTransaction(this.pool, async (client) => {
      const entry = await this.lockRun(client, runId);
      if (!entry) throw runNotFound(runId);
      const transition = change(entry.state);
      if (transition.clearEffects) await this.effects.forgetSteps(client, runId, transition.clearEffects);
      return this.writeCommand(client, entry, transition, now);
    });
    if (run.hash) this.loader.rememberPlan(runId, run.hash, run.state.plan);
    return summaryOf(run.state, run.usage);
  }

  override async applyCommands(
    changes: readonly { runId: string; change: RunChange }[],
    now: number,
  ): Promise<BulkOutcome[]> {
    // Each run once (the callers group their changes by run).
    const ids = [...new Set(changes.map((c) => c.runId))].sort();
    const written = await inTransaction(this.pool, async (client) => {
      // Locked in one order, so two bulk commands over the same runs never deadlock.
      await client.query(
        `SELECT id FROM ${this.schema}.runs WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE`,
        [ids],
      );
      const loaded = await this.loader.load(client, ids);
      const batch = new WriteBatch();
      const outcomes: BulkOutcome[] = [];
      const plans: { runId: string; hash: string; plan: Plan }[] = [];
      for (const decided of decideEach(changes, (runId) => loaded.get(runId))) {
        if ('refused' in decided) {
          outcomes.push(decided);
          continue;
        }
        const { runId, entry, transition } = decided;
        if (transition.clearEffects) await this.effects.forgetSteps(client, runId, transition.clearEffects);
        for (const event of transition.events) batch.event(runId, now, event, transition.run.plan.hooks);
        const hash = batch.runState(
          transition.run,
          transition.changedSteps,
          transition.planChanged ?? false,
          new Set(transition.addedSteps),
        );
        if (hash) plans.push({ runId, hash, plan: transition.run.plan });
        if (entry.state.status !== 'running' && transition.run.status === 'running')
          batch.noteDue(nextDueAt(transition.run));
        outcomes.push({ runId, summary: summaryOf(transition.run, entry.usage) });
      }
      if (!batch.empty) await client.query({ ...this.writeSql, values: batch.params() });
      return { outcomes, plans };
    });
    for (const { runId, hash, plan } of written.plans) this.loader.rememberPlan(runId, hash, plan);
    return written.outcomes;
  }

  async sendEvent(sent: SentEvent, now: number): Promise<EventDelivery[]> {
    const runs = postgresEventRuns({
      pool: this.pool,
      schema: this.schema,
      loader: this.loader,
      lockRun: (client, runId) => this.lockRun(client, runId),
      writeCommand: (client, entry, transition, at) => this.writeCommand(client, entry, transition, at),
    });
    return sendEventToRuns(runs, sent, now);
  }

  /** Locks a run's row for a human command and loads it; undefined: no such run. */
  private async lockRun(client: PgClient, runId: string): Promise<PgLoadedRun | undefined> {
    const { rowCount } = await client.query(
      `SELECT id FROM ${this.schema}.runs WHERE id = $1 FOR NO KEY UPDATE`,
      [runId],
    );
    return rowCount ? (await this.loader.load(client, [runId])).get(runId) : undefined;
  }

  /** Writes a human command's transition of a locked run, in the caller's transaction. */
  private async writeCommand(client: PgClient, entry: PgLoadedRun, transition: Transition, now: number) {
    const runId = entry.state.id;
    const batch = new WriteBatch();
    for (const event of transition.events) batch.event(runId, now, event, transition.run.plan.hooks);
    const hash = batch.runState(
      transition.run,
      transition.changedSteps,
      transition.planChanged ?? false,
      new Set(transition.addedSteps),
    );
    // A run that starts or goes on (approve, resume) makes its waiting steps due without changing them.
    if (entry.state.status !== 'running' && transition.run.status === 'running')
      batch.noteDue(nextDueAt(transition.run));
    await client.query({ ...this.writeSql, values: batch.params() });
    return { state: transition.run, hash, usage: entry.usage };
  }

  async appendEvents(
    runId: string,
    events: readonly BatonEvent[],
    now: number,
    guard?: AppendGuard,
  ): Promise<void> {
    await appendRunEvents(this.pool, this.schema, runId, events, now, guard);
  }

  async beginEffect(key: EffectKey, now: number): Promise<EffectRecord | null> {
    return this.effects.begin(key, now);
  }

  async completeEffect(key: EffectKey, result: unknown, now: number): Promise<void> {
    await this.effects.complete(key, result, now);
  }

  async clearEffect(key: EffectKey): Promise<void> {
    await this.effects.clear(key);
  }

  async setFlowLimit(limit: FlowLimit, now: number): Promise<void> {
    await this.flow.set(validateFlowLimit(limit), now);
  }

  removeFlowLimit(key: string): Promise<boolean> {
    return this.flow.remove(key);
  }

  listFlowLimits(now: number): Promise<FlowLimitStatus[]> {
    return this.flow.list(now);
  }

  claimHookDeliveries(owner: string, now: number, leaseMs: number, limit: number): Promise<HookDelivery[]> {
    return this.hooks.claim(owner, now, leaseMs, limit);
  }

  finishHookDelivery(
    key: HookDeliveryKey,
    result: { ok: true } | { ok: false; error: string; retryAt: number | null },
  ): Promise<void> {
    return this.hooks.finish(key, result);
  }

  deleteFinishedRuns(
    before: number,
    options: { dryRun?: boolean } & FinishedRunsBatch = {},
  ): Promise<string[]> {
    return this.retention.deleteFinishedRuns(before, options.dryRun ?? false, options);
  }

  referencedResultArtifacts(): Promise<Set<string>> {
    return this.retention.referencedResultArtifacts();
  }

  async vacuum(options: { full?: boolean } = {}): Promise<void> {
    // Without `full`, autovacuum makes the space reusable in its own time.
    if (options.full) await this.retention.vacuum();
  }

  /** Sleeps until a commit notifies due work, `untilMs`, or the safety poll (see OpenPostgresOptions.pollMs). */
  waitForWork(untilMs: number, signal: AbortSignal, since?: number): Promise<void> {
    return this.listener.wait(untilMs, signal, since);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listener.close();
    await this.pool.end();
  }
}
