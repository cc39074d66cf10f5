import type { BatonEvent, StoredEvent } from '../../core/events.js';
import type { Plan } from '../../core/plan/types.js';
import type { RunStatus, StepResult, StepStatus } from '../../core/run-state.js';
import { runPageBounds, runPageFilter } from '../run-page-filter.js';
import type {
  AttemptRecord,
  BlockedStep,
  BlockedStepFilter,
  LiveLease,
  MetricsQuery,
  MetricsSnapshot,
  RunDetail,
  RunFilter,
  RunListQuery,
  RunPage,
  RunPageQuery,
  RunRef,
  RunSelectQuery,
  RunSummary,
  RunWithSteps,
  StepSelection,
  WaitingStep,
} from '../store.js';
import {
  type AttemptRow,
  attemptFromRow,
  type BlockedStepRow,
  blockedStepFromRow,
  type LeaseRow,
  leaseFromRow,
  runStep,
  type SummaryRow,
  summaryFromRow,
  summaryOf,
} from '../store-rows.js';
import { type WaitingStepRow, waitingStepFromRow } from '../waiting-steps.js';
import type { PgPool } from './open-pool.js';
import { postgresMetricsSnapshot } from './postgres-metrics.js';
import { RunLoader } from './run-loader.js';

interface PgSummaryRow extends SummaryRow {
  step_counts: Record<string, number> | null;
}

function pgSummary(row: PgSummaryRow): RunSummary {
  return summaryFromRow(row, (row.step_counts ?? {}) as Partial<Record<StepStatus, number>>);
}

export interface PgEventRow {
  seq: number;
  run_id: string;
  at: number;
  type: string;
  data: Record<string, unknown>;
}

export function pgEvent(row: PgEventRow): StoredEvent {
  const event = { type: row.type, ...row.data } as BatonEvent;
  return { ...event, seq: row.seq, runId: row.run_id, at: row.at };
}

/** Read-only queries of the PostgreSQL store: status, timeline, logs. Each is one statement. */
export class PostgresReads {
  protected readonly loader: RunLoader;

  constructor(
    protected readonly pool: PgPool,
    /** The quoted schema name, for SQL text. */
    protected readonly schema: string,
  ) {
    this.loader = new RunLoader(schema);
  }

  async nextWakeAt(filter: RunFilter = {}): Promise<number | null> {
    const s = this.schema;
    const { rows } = await this.pool.query<{
      due: number | null;
      lease: number | null;
      timeout: number | null;
    }>(
      `SELECT
         (SELECT min(next_due_at) FROM ${s}.runs
           WHERE status = 'running' AND ($1::text IS NULL OR id = $1::text)) AS due,
         (SELECT min(lease_expires_at) FROM ${s}.steps
           WHERE status = 'running' AND ($1::text IS NULL OR run_id = $1::text)) AS lease,
         (SELECT min(st.due_at) FROM ${s}.runs r JOIN ${s}.steps st ON st.run_id = r.id
           WHERE r.status = 'blocked' AND st.status = 'waiting' AND ($1::text IS NULL OR r.id = $1::text)) AS timeout`,
      [filter.runId ?? null],
    );
    const row = rows[0];
    const times = [row?.due, row?.lease, row?.timeout].filter((t): t is number => typeof t === 'number');
    return times.length === 0 ? null : Math.min(...times);
  }

  async getRun(runId: string): Promise<RunDetail | null> {
    const loaded = (await this.loader.load(this.pool, [runId])).get(runId);
    if (!loaded) return null;
    const { state } = loaded;
    return {
      ...summaryOf(state, loaded.usage),
      plan: state.plan,
      planHash: loaded.planHash,
      inputs: loaded.inputs,
      workspace: loaded.workspace,
      // The loader's step states are fresh objects, in plan order: each is given its plan step's fields.
      steps: state.steps.map((step, position) => runStep(step, state.plan.steps[position]!)),
    };
  }

  async getRunSteps(runId: string, selection: StepSelection): Promise<RunWithSteps | null> {
    return this.loader.loadSelected(this.pool, runId, selection);
  }

  /** The summary columns of `runs r` (`from`: the runs table, or a subquery of it), with each run's step counts. */
  private summarySelect(from = `${this.schema}.runs`): string {
    return `SELECT r.id, r.plan_name, r.status, r.blocked_reason, r.created_at, r.updated_at, r.finished_at,
         r.attempts_total, r.input_tokens, r.output_tokens, r.cost_usd,
         (SELECT json_object_agg(c.status, c.n) FROM
           (SELECT st.status, count(*) AS n FROM ${this.schema}.steps st WHERE st.run_id = r.id GROUP BY st.status) c
         ) AS step_counts
       FROM ${from} r`;
  }

  async listRuns(options: RunListQuery = {}): Promise<RunSummary[]> {
    // One statement per shape (not `$1 IS NULL OR status = $1`), so each reads its index in order
    // and stops at the limit: runs_by_created for every run, runs_by_status for one status.
    const limit = options.limit ?? 50;
    const order = 'ORDER BY r.created_at DESC, r.id DESC';
    const filter = runPageFilter(options, 'postgres', { run: 'r.', schema: `${this.schema}.` });
    if (filter.where.length > 0) {
      const where = [...filter.where];
      if (options.status !== undefined) where.push(`r.status = ${filter.bind(options.status)}`);
      const { rows } = await this.pool.query<PgSummaryRow>(
        `${this.summarySelect()} WHERE ${where.join(' AND ')} ${order} LIMIT ${filter.bind(limit)}`,
        filter.values,
      );
      return rows.map(pgSummary);
    }
    const { rows } =
      options.status === undefined
        ? await this.pool.query<PgSummaryRow>(`${this.summarySelect()} ${order} LIMIT $1`, [limit])
        : await this.pool.query<PgSummaryRow>(
            `${this.summarySelect()} WHERE r.status = $1 ${order} LIMIT $2`,
            [options.status, limit],
          );
    return rows.map(pgSummary);
  }

  async listRunPage(query: RunPageQuery = {}): Promise<RunPage> {
    const filter = runPageFilter(query, 'postgres', { schema: `${this.schema}.` });
    const whereOf = (clauses: string[]) => (clauses.length === 0 ? '' : `WHERE ${clauses.join(' AND ')}`);
    const countValues = [...filter.values];
    const countSql = `SELECT status, count(*) AS n FROM ${this.schema}.runs ${whereOf(filter.where)} GROUP BY status`;
    const { limit, offset } = runPageBounds(query);
    const where = [...filter.where];
    if (query.status !== undefined) where.push(`status = ${filter.bind(query.status)}`);
    // The page is chosen first: step counts are counted for its runs only, not for those it skips.
    const page = `(SELECT * FROM ${this.schema}.runs ${whereOf(where)}
       ORDER BY created_at DESC, id DESC LIMIT ${filter.bind(limit)} OFFSET ${filter.bind(offset)})`;
    const pageSql = `${this.summarySelect(page)} ORDER BY r.created_at DESC, r.id DESC`;
    // Two statements on two connections at once: a page costs one round trip.
    const [countRows, pageRows] = await Promise.all([
      this.pool.query<{ status: string; n: number }>(countSql, countValues),
      this.pool.query<PgSummaryRow>(pageSql, filter.values),
    ]);
    const counts: RunPage['counts'] = {};
    for (const row of countRows.rows) counts[row.status as RunStatus] = Number(row.n);
    const total =
      query.status === undefined
        ? countRows.rows.reduce((sum, row) => sum + Number(row.n), 0)
        : (counts[query.status] ?? 0);
    return { runs: pageRows.rows.map(pgSummary), counts, total };
  }

  async listBlockedSteps(limit = 200, filter: BlockedStepFilter = {}): Promise<BlockedStep[]> {
    const s = this.schema;
    const { where, values, bind } = runPageFilter(filter, 'postgres', { run: 'r.', schema: `${s}.` });
    if (filter.failureClass !== undefined) where.push(`st.last_failure_class = ${bind(filter.failureClass)}`);
    if (filter.blockedFrom !== undefined) where.push(`st.updated_at >= ${bind(filter.blockedFrom)}`);
    const { rows } = await this.pool.query<BlockedStepRow>(
      `SELECT st.run_id, r.plan_name, r.status AS run_status, st.step_id, st.attempt, st.last_failure_class,
         st.blocked_reason, st.updated_at
       FROM ${s}.runs r JOIN ${s}.steps st ON st.run_id = r.id
       WHERE r.status IN ('running', 'blocked') AND st.status = 'blocked'${where.map((w) => ` AND ${w}`).join('')}
       ORDER BY st.updated_at DESC, st.run_id, st.step_id LIMIT ${bind(limit)}`,
      values,
    );
    return rows.map(blockedStepFromRow);
  }

  async selectRuns(query: RunSelectQuery): Promise<RunRef[]> {
    const s = this.schema;
    const { where, values, bind } = runPageFilter(query, 'postgres', { run: 'r.', schema: `${s}.` });
    const { rows } = await this.pool.query<{ id: string; plan_name: string; status: string }>(
      `SELECT r.id, r.plan_name, r.status FROM ${s}.runs r
       WHERE r.status = ANY(${bind([...query.statuses])}::text[])${where.map((w) => ` AND ${w}`).join('')}
       ORDER BY r.created_at, r.id LIMIT ${bind(query.limit)}`,
      values,
    );
    return rows.map((row) => ({ id: row.id, planName: row.plan_name, status: row.status as RunStatus }));
  }

  async getRunPlans(runIds: readonly string[]): Promise<Record<string, Plan>> {
    const plans: Record<string, Plan> = {};
    if (runIds.length === 0) return plans;
    // As text, so that runs of one plan share the parse of it (10,000 runs of a plan: one parse).
    const { rows } = await this.pool.query<{ id: string; plan: string }>(
      `SELECT p.run_id AS id, p.plan::text AS plan FROM ${this.schema}.run_plans p WHERE p.run_id = ANY($1::text[])`,
      [[...runIds]],
    );
    const parsed = new Map<string, Plan>();
    for (const row of rows) {
      let plan = parsed.get(row.plan);
      if (!plan) {
        plan = JSON.parse(row.plan) as Plan;
        parsed.set(row.plan, plan);
      }
      plans[row.id] = plan;
    }
    return plans;
  }

  async getRunLabels(runIds: readonly string[]): Promise<Record<string, Record<string, string>>> {
    const labels: Record<string, Record<string, string>> = {};
    if (runIds.length === 0) return labels;
    const { rows } = await this.pool.query<{ run_id: string; key: string; value: string }>(
      `SELECT run_id, key, value FROM ${this.schema}.run_labels WHERE run_id = ANY($1::text[]) ORDER BY run_id, key`,
      [[...runIds]],
    );
    for (const row of rows) {
      labels[row.run_id] ??= {};
      labels[row.run_id]![row.key] = row.value;
    }
    return labels;
  }

  async listWaitingSteps(limit = 100): Promise<{ steps: WaitingStep[]; total: number }> {
    const s = this.schema;
    const { rows } = await this.pool.query<WaitingStepRow & { total: string }>(
      `SELECT st.run_id, r.plan_name, st.step_id, st.waiting_for, st.due_at, st.updated_at,
         count(*) OVER () AS total
       FROM ${s}.steps st JOIN ${s}.runs r ON r.id = st.run_id
       WHERE st.status = 'waiting' ORDER BY st.updated_at, st.run_id, st.step_id LIMIT $1`,
      [limit],
    );
    const total = rows.length < limit ? rows.length : Number(rows[0]?.total ?? 0);
    return { steps: rows.map(waitingStepFromRow), total };
  }

  async listLeases(): Promise<LiveLease[]> {
    const s = this.schema;
    const { rows } = await this.pool.query<LeaseRow>(
      `SELECT st.run_id, st.step_id, st.attempt, r.plan_name, st.lease_owner, st.lease_expires_at, st.started_at,
         st.pid, st.host, st.flow_key
       FROM ${s}.steps st JOIN ${s}.runs r ON r.id = st.run_id
       WHERE st.status = 'running' AND st.lease_expires_at IS NOT NULL
       ORDER BY st.lease_owner, st.started_at, st.run_id, st.step_id`,
    );
    return rows.map(leaseFromRow);
  }

  async listEventsAfter(afterSeq: number, limit = 500): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<PgEventRow>(
      `SELECT seq, run_id, at, type, data FROM ${this.schema}.events WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [afterSeq, limit],
    );
    return rows.map(pgEvent);
  }

  async getEvents(runId: string, options: { afterSeq?: number } = {}): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<PgEventRow>(
      `SELECT seq, run_id, at, type, data FROM ${this.schema}.events
       WHERE run_id = $1 AND seq > $2 ORDER BY seq`,
      [runId, options.afterSeq ?? 0],
    );
    return rows.map(pgEvent);
  }

  async getAttempts(runId: string, stepId?: string): Promise<AttemptRecord[]> {
    const { rows } = await this.pool.query<AttemptRow>(
      `SELECT run_id, step_id, attempt, owner, started_at, ended_at, outcome, failure_class, exit_code,
         fingerprint, message, summary, log_path, outputs, input_tokens, output_tokens, cost_usd
       FROM ${this.schema}.attempts WHERE run_id = $1 AND ($2::text IS NULL OR step_id = $2::text)
       ORDER BY started_at NULLS FIRST, step_id, attempt`,
      [runId, stepId ?? null],
    );
    return rows.map(attemptFromRow);
  }

  async metricsSnapshot(query: MetricsQuery): Promise<MetricsSnapshot> {
    return postgresMetricsSnapshot(this.pool, this.schema, query);
  }

  async lastEventSeq(): Promise<number> {
    const { rows } = await this.pool.query<{ seq: number | null }>(
      `SELECT max(seq) AS seq FROM ${this.schema}.events`,
    );
    return rows[0]?.seq ?? 0;
  }

  async getStepResults(runId: string, stepIds: readonly string[]): Promise<Record<string, StepResult>> {
    const results: Record<string, StepResult> = {};
    if (stepIds.length === 0) return results;
    const { rows } = await this.pool.query<{ step_id: string; result: StepResult }>(
      `SELECT step_id, result FROM ${this.schema}.steps
       WHERE run_id = $1 AND step_id = ANY ($2::text[]) AND result IS NOT NULL`,
      [runId, stepIds],
    );
    for (const row of rows) results[row.step_id] = row.result;
    return results;
  }
}
