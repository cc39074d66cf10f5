import { createHash } from 'node:crypto';
import { NO_USAGE } from '../../core/budget.js';
import { deepFreeze } from '../../core/deep-freeze.js';
import type { BatonEvent } from '../../core/events.js';
import { hooksFor } from '../../core/hooks.js';
import type { HookSpec, Plan } from '../../core/plan/types.js';
import { stepClaimRank } from '../../core/priority.js';
import {
  FINAL_RUN_STATUSES,
  planIndex,
  type RunState,
  type RunStatus,
  type StepState,
  type StepStatus,
} from '../../core/run-state.js';
import type { Transition } from '../../core/transitions.js';
import { stepFlowKey } from '../flow-accounting.js';
import type { LoadedRun } from '../loaded-run.js';
import type { RunStep } from '../store.js';
import { runStateFromRow, runStep, type StepValues, type SummaryRow, stepFromValues } from '../store-rows.js';
import type { SqliteDatabase } from './open-database.js';

const NO_STEPS: ReadonlySet<string> = new Set();

/** A `runs` row as the store reads it. */
export interface RunRow extends SummaryRow {
  plan_hash: string;
  inputs_json: string;
  workspace: string;
  version: number;
}

interface StepRow {
  step_id: string;
  status: string;
  attempt: number;
  tries: number;
  due_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  started_at: number | null;
  last_error: string | null;
  last_failure_class: string | null;
  fingerprint: string | null;
  fingerprint_repeats: number;
  result_json: string | null;
  blocked_reason: string | null;
  updated_at: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  first_started_at: number | null;
  on_fallback: number;
  interruptions: number;
  waiting_for: string | null;
}

const STEP_COLUMNS = `step_id, status, attempt, tries, due_at, lease_owner, lease_expires_at, started_at, last_error,
  last_failure_class, fingerprint, fingerprint_repeats, result_json, blocked_reason, updated_at, input_tokens,
  output_tokens, cost_usd, first_started_at, on_fallback, interruptions, waiting_for`;

/** `STEP_COLUMNS` (a step's `StepValues`) and then the step's position, for reads that skip steps. */
type PositionedStepValues = [...StepValues, position: number];

/** A step row read as an object (`SELECT *`, `baton migrate`). */
export function stepFromRow(row: StepRow): StepState {
  return stepFromValues([
    row.step_id,
    row.status,
    row.attempt,
    row.tries,
    row.due_at,
    row.lease_owner,
    row.lease_expires_at,
    row.started_at,
    row.last_error,
    row.last_failure_class,
    row.fingerprint,
    row.fingerprint_repeats,
    row.result_json,
    row.blocked_reason,
    row.updated_at,
    row.input_tokens,
    row.output_tokens,
    row.cost_usd,
    row.first_started_at,
    row.on_fallback,
    row.interruptions,
    row.waiting_for ?? null,
  ]);
}

const CACHE_LIMIT = 10_000;
/** Distinct plans kept for sharing: a process runs few plans, each maybe large. */
const SHARED_PLANS_LIMIT = 100;

/**
 * Prepared statements for loading and writing runs, bound to one connection, and what it caches of
 * them. Plans are immutable snapshots, so each is parsed once per process (per plan hash). Step states are cached
 * by run version: every write bumps `runs.version` in the same transaction, so a cached state
 * whose version still matches is exactly what is on disk, whichever process wrote last.
 *
 * The caches follow this connection's writes by construction: `writeState` (cycles and human
 * commands) updates them with what it writes, and every other path that changes runs or steps
 * says what it changed (`afterRunCreated`, `afterLeasesRenewed`, `afterRunsDeleted`). Another
 * connection's commits are seen through `PRAGMA data_version` (`inCycle`); a failed transaction
 * drops everything (`forget`).
 */
export class RunRows {
  private readonly planCache = new Map<string, { hash: string; createdAt: number; plan: Plan }>();
  /** Plans by hash, with the text they were parsed from (see plan()). */
  private readonly sharedPlans = new Map<string, { json: string; plan: Plan }>();
  private readonly stateCache = new Map<
    string,
    { version: number; createdAt: number; steps: readonly StepState[] }
  >();
  /**
   * Whole runs as the last cycles of this connection left them. Used without reading the database
   * only inside a cycle that began trusted (see inCycle): one SELECT fewer per run per cycle.
   */
  private readonly cycleCache = new Map<string, Omit<LoadedRun, 'state'> & { state: RunState }>();
  /** `PRAGMA data_version` at the start of the last cycle: another connection's commit changes it. */
  private dataVersion: number | null = null;
  /** False until a cycle committed, and again once a transaction failed (its writes may be half cached). */
  private cacheValid = false;
  private inTrustedCycle = false;
  private readonly selectDataVersion;
  private readonly selectRun;
  private readonly selectPlan;
  private readonly selectSteps;
  private readonly selectStepsWithStatus;
  private readonly updateRun;
  private readonly updateRunKeepingStatus;
  private readonly updateStep;
  private readonly insertEvent;
  private readonly updatePlan;
  private readonly insertStep;
  private readonly updatePlanHash;
  private readonly insertDelivery;

  constructor(db: SqliteDatabase) {
    this.selectDataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.selectRun = db.prepare<[string], RunRow>(
      `SELECT id, plan_name, plan_hash, inputs_json, workspace, status, attempts_total, blocked_reason, created_at,
         updated_at, finished_at, version, input_tokens, output_tokens, cost_usd FROM runs WHERE id = ?`,
    );
    this.selectPlan = db
      .prepare<[string], string>('SELECT plan_json FROM run_plans WHERE run_id = ?')
      .pluck();
    this.selectSteps = db
      .prepare<[string], StepValues>(`SELECT ${STEP_COLUMNS} FROM steps WHERE run_id = ? ORDER BY position`)
      .raw();
    // The statuses as a JSON array: one statement whatever their number.
    this.selectStepsWithStatus = db
      .prepare<[string, string], PositionedStepValues>(
        `SELECT ${STEP_COLUMNS}, position FROM steps
         WHERE run_id = ? AND status IN (SELECT value FROM json_each(?)) ORDER BY position`,
      )
      .raw();
    this.updateRun = db.prepare<unknown[], { version: number }>(
      `UPDATE runs SET status = ?, attempts_total = ?, blocked_reason = ?, updated_at = ?, finished_at = ?,
         input_tokens = ?, output_tokens = ?, cost_usd = ?, version = version + 1 WHERE id = ? RETURNING version`,
    );
    // SQLite rewrites the entry of every index over a column the SET names, changed or not: a run
    // that stays `running` leaves runs_by_status alone (one page fewer in each cycle's commit).
    this.updateRunKeepingStatus = db.prepare<unknown[], { version: number }>(
      `UPDATE runs SET attempts_total = ?, blocked_reason = ?, updated_at = ?, finished_at = ?,
         input_tokens = ?, output_tokens = ?, cost_usd = ?, version = version + 1 WHERE id = ? RETURNING version`,
    );
    // Positional parameters: this runs for every changed step of every transition.
    this.updateStep = db.prepare(
      `UPDATE steps SET status = ?, attempt = ?, tries = ?, due_at = ?, lease_owner = ?, lease_expires_at = ?,
         started_at = ?, last_error = ?, last_failure_class = ?, fingerprint = ?, fingerprint_repeats = ?,
         result_json = ?, blocked_reason = ?, updated_at = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?,
         first_started_at = ?, on_fallback = ?, interruptions = ?, waiting_for = ?, flow_key = ?, claim_rank = ?,
         pid = CASE WHEN ? = 'running' THEN pid ELSE NULL END,
         host = CASE WHEN ? = 'running' THEN host ELSE NULL END
       WHERE run_id = ? AND step_id = ?`,
    );
    this.updatePlan = db.prepare('UPDATE run_plans SET plan_json = ? WHERE run_id = ?');
    this.insertStep = db.prepare(
      'INSERT INTO steps (run_id, step_id, position, status, updated_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.updatePlanHash = db.prepare('UPDATE runs SET plan_hash = ? WHERE id = ?');
    this.insertDelivery = db.prepare(
      "INSERT INTO hook_deliveries (run_id, event_seq, hook, state, due_at) VALUES (?, ?, ?, 'pending', ?)",
    );
    this.insertEvent = db.prepare(
      'INSERT INTO events (run_id, at, type, step_id, data_json) VALUES (?, ?, ?, ?, ?)',
    );
  }

  /**
   * The run's plan, parsed once per run, and once for all runs whose stored plan is the same text:
   * runs of one workflow share one (immutable) Plan object, and the indexes derived from it. The
   * text is compared, not only `plan_hash`, which is whatever the run's creator said it was.
   */
  plan(row: Pick<RunRow, 'id' | 'plan_hash' | 'created_at' | 'status'>): Plan {
    const cached = this.planCache.get(row.id);
    if (cached && cached.hash === row.plan_hash && cached.createdAt === row.created_at) return cached.plan;
    const json = this.selectPlan.get(row.id) ?? 'null';
    const shared = this.sharedPlans.get(row.plan_hash);
    // Shared by a second run: frozen, so that a caller who changes what a read gave it (the plan,
    // a step's dependsOn) gets a TypeError instead of changing every run of that plan.
    const plan = shared?.json === json ? deepFreeze(shared.plan) : (JSON.parse(json) as Plan);
    if (shared?.plan !== plan) this.rememberShared(row.plan_hash, json, plan);
    // A finished run is read, not cycled: it is not kept (see writeState).
    if (!isFinished(row.status)) this.rememberPlan(row.id, row.plan_hash, row.created_at, plan);
    return plan;
  }

  private rememberPlan(runId: string, hash: string, createdAt: number, plan: Plan): void {
    if (this.planCache.size > CACHE_LIMIT) this.planCache.clear();
    this.planCache.set(runId, { hash, createdAt, plan });
  }

  private rememberShared(hash: string, json: string, plan: Plan): void {
    if (this.sharedPlans.size > SHARED_PLANS_LIMIT) this.sharedPlans.clear();
    this.sharedPlans.set(hash, { json, plan });
  }

  /** A run's row, or null for an unknown run. */
  runRow(runId: string): RunRow | null {
    return this.selectRun.get(runId) ?? null;
  }

  /**
   * The steps of a run as the reads return them, objects of the caller's own (but for `dependsOn`,
   * the plan's own array: read-only, like the plan): every step, or those in `statuses`. In plan
   * order. `row`: the run's row as read in the same transaction.
   */
  runSteps(
    row: Pick<RunRow, 'id' | 'version' | 'created_at'>,
    plan: Plan,
    statuses?: readonly StepStatus[],
  ): RunStep[] {
    const runId = row.id;
    if (statuses === undefined) {
      // A process that follows the run (an engine until it settles, Baton.result) has its states
      // cached at this version: copies of them, not a read of every row. Else the rows are read and
      // not cached (a command reads a run once).
      const cached = this.cachedSteps(row);
      if (cached) return cached.map((step, position) => runStep({ ...step }, plan.steps[position]!));
      return this.selectSteps
        .all(runId)
        .map((values, position) => runStep(stepFromValues(values), plan.steps[position]!));
    }
    return this.selectStepsWithStatus
      .all(runId, JSON.stringify(statuses))
      .map((values) => runStep(stepFromValues(values), plan.steps[values[22]]!));
  }

  /**
   * Runs `cycle` inside a cycle's write transaction. The runs cached by earlier cycles are exactly
   * what is stored when no other connection has committed since (data_version is unchanged: writers
   * are serialized, so none can commit during this transaction): this connection's own writes keep
   * the caches as they wrote them.
   */
  inCycle<T>(cycle: () => T): T {
    const version = this.selectDataVersion.get()!;
    this.inTrustedCycle = this.cacheValid && version === this.dataVersion;
    if (!this.inTrustedCycle) this.cycleCache.clear();
    this.dataVersion = version;
    try {
      const result = cycle();
      // Committed by the caller (or forgotten, if the commit fails): what it wrote is what is stored.
      this.cacheValid = true;
      return result;
    } finally {
      this.inTrustedCycle = false;
    }
  }

  /** A run was stored (rows this cache never followed): any state cached under its id is another run's. */
  afterRunCreated(runId: string): void {
    this.drop(runId);
  }

  /** Leases of these runs were renewed (their versions bumped): lease times are part of a step's state. */
  afterLeasesRenewed(runIds: Iterable<string>): void {
    for (const runId of runIds) this.cycleCache.delete(runId);
  }

  /** These runs were deleted (`baton gc`). */
  afterRunsDeleted(runIds: Iterable<string>): void {
    for (const runId of runIds) this.drop(runId);
  }

  private drop(runId: string): void {
    this.planCache.delete(runId);
    this.stateCache.delete(runId);
    this.cycleCache.delete(runId);
  }

  /** A run for a cycle: from the cycle cache when the cycle is trusted, else read and cached. */
  loadForCycle(runId: string): LoadedRun | null {
    const cached = this.inTrustedCycle ? this.cycleCache.get(runId) : undefined;
    // Inputs are handed to steps (ctx.inputs): each cycle's claims get their own copy.
    if (cached) return { ...cached, inputs: { ...cached.inputs } };
    const loaded = this.load(runId);
    if (loaded) {
      if (this.cycleCache.size > CACHE_LIMIT) this.cycleCache.clear();
      this.cycleCache.set(runId, { ...loaded, inputs: { ...loaded.inputs } });
    }
    return loaded;
  }

  load(runId: string): LoadedRun | null {
    const row = this.selectRun.get(runId);
    if (!row) return null;
    let steps = this.cachedSteps(row);
    if (!steps) {
      // Rows come in plan order (position), which is the order RunState keeps.
      steps = this.selectSteps.all(runId).map(stepFromValues);
      if (!isFinished(row.status)) this.remember(runId, row.version, row.created_at, steps);
    }
    const inputs = JSON.parse(row.inputs_json) as Record<string, string>;
    return {
      state: runStateFromRow(row, this.plan(row), steps, inputs),
      planHash: row.plan_hash,
      inputs,
      workspace: row.workspace,
    };
  }

  /**
   * The cached steps of the run whose row this is: same version, and same run (a run id deleted by
   * gc and created again, through another connection, starts at the same versions).
   */
  private cachedSteps(row: Pick<RunRow, 'id' | 'version' | 'created_at'>): readonly StepState[] | null {
    const cached = this.stateCache.get(row.id);
    return cached && cached.version === row.version && cached.createdAt === row.created_at
      ? cached.steps
      : null;
  }

  private remember(runId: string, version: number, createdAt: number, steps: readonly StepState[]): void {
    if (this.stateCache.size > CACHE_LIMIT) this.stateCache.clear();
    this.stateCache.set(runId, { version, createdAt, steps });
  }

  /** Forgets cached states, e.g. after a transaction rolled back. */
  forget(): void {
    this.stateCache.clear();
    this.cycleCache.clear();
    this.cacheValid = false;
    this.inTrustedCycle = false;
  }

  /** Writes a transition's events and new state. Call inside a transaction. */
  persist(transition: Transition, now: number): void {
    for (const event of transition.events)
      this.appendEvent(transition.run.id, now, event, transition.run.plan.hooks);
    // Steps the transition appended (a run's cleanup steps, core/cleanup.ts) get their rows first.
    const added = transition.addedSteps ? new Set(transition.addedSteps) : NO_STEPS;
    this.writeState(transition.run, transition.changedSteps, transition.planChanged ?? false, null, added);
  }

  /**
   * Writes a run row (bumping its version) and the given steps as they are in `run`. A cycle that
   * applies several transitions to one run calls this once, at the end, with all changed steps.
   * `storedStatus`: the run's status as read in this transaction, when the caller knows it.
   */
  writeState(
    run: RunState,
    changedSteps: Iterable<string>,
    planChanged: boolean,
    storedStatus: RunStatus | null = null,
    addedSteps: ReadonlySet<string> = NO_STEPS,
  ): void {
    const { attemptsTotal, blockedReason, updatedAt, finishedAt } = run;
    // The core adds up a run's usage (every outcome's, discarded ones too): written as it holds it.
    const { inputTokens, outputTokens, costUsd } = run.usage ?? NO_USAGE;
    const totals = [attemptsTotal, blockedReason, updatedAt, finishedAt, inputTokens, outputTokens, costUsd];
    const { version } =
      storedStatus === run.status
        ? this.updateRunKeepingStatus.get(...totals, run.id)!
        : this.updateRun.get(run.status, ...totals, run.id)!;
    // A finished run is not cycled again (a human command reloads it): a worker that runs runs for
    // months keeps only the live ones, not the last 10,000 finished.
    const finished = isFinished(run.status);
    if (finished) this.drop(run.id);
    else this.remember(run.id, version, run.createdAt, run.steps);
    const cached = this.cycleCache.get(run.id);
    if (cached) cached.state = run;
    if (planChanged) {
      const json = JSON.stringify(run.plan);
      const hash = createHash('sha256').update(json).digest('hex');
      this.updatePlan.run(json, run.id);
      this.updatePlanHash.run(hash, run.id);
      if (!finished) this.rememberPlan(run.id, hash, run.createdAt, run.plan);
      if (cached) cached.planHash = hash;
    }
    const { position } = planIndex(run.plan);
    // A fan-out's items (core/for-each.ts): their rows are inserted here, then written like any step.
    for (const stepId of addedSteps) {
      this.insertStep.run(run.id, stepId, position.get(stepId)!, 'pending', run.updatedAt);
    }
    for (const stepId of changedSteps) {
      const index = position.get(stepId)!;
      const step = run.steps[index]!;
      this.updateStep.run(
        step.status,
        step.attempt,
        step.tries,
        step.dueAt,
        step.leaseOwner,
        step.leaseExpiresAt,
        step.startedAt,
        step.lastError,
        step.lastFailureClass,
        step.fingerprint,
        step.fingerprintRepeats,
        step.resultJson,
        step.blockedReason,
        step.updatedAt,
        step.usage?.inputTokens ?? 0,
        step.usage?.outputTokens ?? 0,
        step.usage?.costUsd ?? 0,
        step.firstStartedAt ?? null,
        step.onFallback ? 1 : 0,
        step.interruptions ?? 0,
        step.waitingFor ?? null,
        stepFlowKey(run, index),
        stepClaimRank(run.plan, index, step.dueAt),
        step.status,
        step.status,
        run.id,
        step.stepId,
      );
    }
  }

  /**
   * Appends an event; the hooks it calls are owed from the same transaction on (hook_deliveries).
   * Returns whether it owes any.
   */
  appendEvent(runId: string, at: number, event: BatonEvent, hooks?: readonly HookSpec[]): boolean {
    const { type, ...data } = event;
    const stepId = 'stepId' in data ? (data.stepId as string) : null;
    const { lastInsertRowid } = this.insertEvent.run(runId, at, type, stepId, JSON.stringify(data));
    const owed = hooksFor(event, hooks);
    for (const hook of owed) this.insertDelivery.run(runId, lastInsertRowid, hook, at);
    return owed.length > 0;
  }
}

function isFinished(status: string): boolean {
  return FINAL_RUN_STATUSES.has(status as RunStatus);
}
