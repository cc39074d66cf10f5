import type { StepUsage } from '../../core/failure.js';
import type { Plan } from '../../core/plan/types.js';
import type { LoadedRun } from '../loaded-run.js';
import type { RunSummary, RunWithSteps, StepSelection } from '../store.js';
import {
  type RunStateRow,
  runStateFromRow,
  runStep,
  type StepValues,
  type SummaryRow,
  stepFromValues,
  summaryFromRow,
} from '../store-rows.js';
import type { PgClient, PgPool } from './open-pool.js';
import { type PreparedSql, prepared } from './prepared.js';

/** A run as loaded for a transition, plus its usage and the OS process noted for each running attempt. */
export interface PgLoadedRun extends LoadedRun {
  usage: StepUsage;
  processes: Map<string, { pid: number | null; host: string | null }>;
}

interface LoadRow extends RunStateRow {
  plan_hash: string;
  inputs: Record<string, string>;
  workspace: string;
  /** Null when this process already holds the plan of this hash. */
  plan: Plan | null;
  steps: StepTuple[] | null;
}

/** A step's `StepValues`, then the OS process noted for its running attempt. */
type StepTuple = [...StepValues, pid: number | null, host: string | null];

/** The columns of a `StepTuple` of steps `s`, in its order. */
const STEP_TUPLE = `s.step_id, s.status, s.attempt, s.tries, s.due_at, s.lease_owner, s.lease_expires_at,
  s.started_at, s.last_error, s.last_failure_class, s.fingerprint, s.fingerprint_repeats, s.result::text,
  s.blocked_reason, s.updated_at, s.input_tokens, s.output_tokens, s.cost_usd, s.first_started_at,
  s.on_fallback, s.interruptions, s.waiting_for, s.pid, s.host`;

/** The row of `loadSelected`: a run's summary columns, its plan unless known, its counts and chosen steps. */
interface SelectedRow extends SummaryRow {
  plan_hash: string;
  workspace: string;
  plan: Plan | null;
  step_counts: Record<string, number> | null;
  steps: [...StepTuple, position: number][] | null;
}

const CACHE_LIMIT = 10_000;

/**
 * Loads whole runs (run row, steps in plan order, plan) in ONE query. Plans are immutable snapshots
 * but for their hash: a plan this process already parsed for the same hash is not sent again.
 * Step states are never cached: another process may have written them since.
 */
export class RunLoader {
  private readonly plans = new Map<string, { hash: string; plan: Plan }>();
  private readonly sql: PreparedSql;
  private readonly selectedSql: PreparedSql;

  constructor(schema: string) {
    this.sql =
      prepared(`SELECT r.id, r.plan_hash, r.inputs, r.workspace, r.status, r.attempts_total, r.blocked_reason,
        r.created_at, r.updated_at, r.finished_at, r.input_tokens, r.output_tokens, r.cost_usd,
        CASE WHEN c.hash IS DISTINCT FROM r.plan_hash
          THEN (SELECT p.plan FROM ${schema}.run_plans p WHERE p.run_id = r.id) END AS plan,
        (SELECT json_agg(json_build_array(${STEP_TUPLE}) ORDER BY s.position)
          FROM ${schema}.steps s WHERE s.run_id = r.id) AS steps
      FROM ${schema}.runs r LEFT JOIN unnest($2::text[], $3::text[]) AS c (id, hash) ON c.id = r.id
      WHERE r.id = ANY ($1::text[])`);
    // $2: the plan hash this process holds for the run; $3, $4: the selection.
    this.selectedSql =
      prepared(`SELECT r.id, r.plan_name, r.plan_hash, r.workspace, r.status, r.attempts_total,
        r.blocked_reason, r.created_at, r.updated_at, r.finished_at, r.input_tokens, r.output_tokens, r.cost_usd,
        CASE WHEN $2::text IS DISTINCT FROM r.plan_hash
          THEN (SELECT p.plan FROM ${schema}.run_plans p WHERE p.run_id = r.id) END AS plan,
        (SELECT json_object_agg(c.status, c.n) FROM
          (SELECT st.status, count(*) AS n FROM ${schema}.steps st WHERE st.run_id = r.id GROUP BY st.status) c
        ) AS step_counts,
        (SELECT json_agg(json_build_array(${STEP_TUPLE}, s.position) ORDER BY s.position)
          FROM ${schema}.steps s WHERE s.run_id = r.id AND (s.status = ANY ($3::text[])
            OR (SELECT count(*) FROM ${schema}.steps x WHERE x.run_id = r.id) <= $4)) AS steps
      FROM ${schema}.runs r WHERE r.id = $1`);
  }

  /**
   * A run with the steps `selection` picks (`Store.getRunSteps`), or null: one statement, which
   * reads the rows of those steps alone.
   */
  async loadSelected(db: PgPool, runId: string, selection: StepSelection): Promise<RunWithSteps | null> {
    const known = this.plans.get(runId);
    const { rows } = await db.query<SelectedRow>({
      ...this.selectedSql,
      values: [runId, known?.hash ?? null, selection.statuses, selection.everyStepUpTo],
    });
    const row = rows[0];
    if (!row) return null;
    const plan = row.plan ?? known!.plan;
    if (row.plan) this.rememberPlan(row.id, row.plan_hash, row.plan);
    return {
      ...summaryFromRow(row, (row.step_counts ?? {}) as RunSummary['stepCounts']),
      plan,
      workspace: row.workspace,
      steps: (row.steps ?? []).map((tuple) => runStep(stepFromValues(tuple), plan.steps[tuple[24]]!)),
    };
  }

  /** The runs that exist among `runIds`, by id. Call after locking them to read their latest state. */
  async load(db: PgClient | PgPool, runIds: readonly string[]): Promise<Map<string, PgLoadedRun>> {
    const loaded = new Map<string, PgLoadedRun>();
    if (runIds.length === 0) return loaded;
    // The plans this query relies on, held here: the cache may be cleared while it runs.
    const known = new Map<string, { hash: string; plan: Plan }>();
    for (const id of runIds) {
      const cached = this.plans.get(id);
      if (cached) known.set(id, cached);
    }
    const hashes = [...known.values()].map((entry) => entry.hash);
    const { rows } = await db.query<LoadRow>({ ...this.sql, values: [runIds, [...known.keys()], hashes] });
    for (const row of rows) loaded.set(row.id, this.toLoaded(row, known.get(row.id)?.plan));
    return loaded;
  }

  private toLoaded(row: LoadRow, knownPlan: Plan | undefined): PgLoadedRun {
    const plan = row.plan ?? knownPlan!;
    if (row.plan) this.rememberPlan(row.id, row.plan_hash, row.plan);
    const processes: PgLoadedRun['processes'] = new Map();
    const steps = (row.steps ?? []).map((tuple) => {
      if (tuple[22] !== null || tuple[23] !== null)
        processes.set(tuple[0], { pid: tuple[22], host: tuple[23] });
      return stepFromValues(tuple);
    });
    const state = runStateFromRow(row, plan, steps, row.inputs);
    return {
      state,
      planHash: row.plan_hash,
      inputs: row.inputs,
      workspace: row.workspace,
      usage: state.usage!,
      processes,
    };
  }

  /** Notes a plan this process wrote (a new run, an approval that changed it). */
  rememberPlan(runId: string, hash: string, plan: Plan): void {
    if (this.plans.size > CACHE_LIMIT) this.plans.clear();
    this.plans.set(runId, { hash, plan });
  }
}
