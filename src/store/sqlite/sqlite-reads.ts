import type { Statement } from 'better-sqlite3';
import { runNotFound } from '../../core/errors.js';
import type { BatonEvent, StoredEvent } from '../../core/events.js';
import type { OutputArtifact } from '../../core/failure.js';
import type { Plan } from '../../core/plan/types.js';
import type { RunStatus, StepResult, StepStatus } from '../../core/run-state.js';
import { TIMED_STEP_SQL } from '../due-steps.js';
import type { LoadedRun } from '../loaded-run.js';
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
  countSteps,
  type LeaseRow,
  leaseFromRow,
  type SummaryRow,
  summaryFromRow,
} from '../store-rows.js';
import {
  SQLITE_WAITING_COUNT_SQL,
  SQLITE_WAITING_STEPS_SQL,
  type WaitingStepRow,
  waitingStepFromRow,
} from '../waiting-steps.js';
import type { SqliteDatabase } from './open-database.js';
import { RunRows } from './run-rows.js';
import { sqliteMetricsSnapshot } from './sqlite-metrics.js';

const SUMMARY_COLUMNS =
  'id, plan_name, status, blocked_reason, created_at, updated_at, finished_at, attempts_total, input_tokens, output_tokens, cost_usd';

interface EventRow {
  seq: number;
  run_id: string;
  at: number;
  type: string;
  step_id: string | null;
  data_json: string;
}

function eventFromRow(row: EventRow): StoredEvent {
  const data = JSON.parse(row.data_json) as Record<string, unknown>;
  const event = { type: row.type, ...data } as BatonEvent;
  return { ...event, seq: row.seq, runId: row.run_id, at: row.at };
}

/** The first timeout of a step waiting in a blocked run (it fires there too): blocked runs are few. */
const BLOCKED_RUN_TIMEOUT = `SELECT min(s.due_at) FROM runs r INDEXED BY runs_by_status JOIN steps s ON s.run_id = r.id
  WHERE r.status = 'blocked' AND s.status = 'waiting' AND (@run IS NULL OR r.id = @run)`;

/** Read-only queries of the SQLite store: status, timeline, logs. */
export class SqliteReads {
  protected readonly rows: RunRows;
  private readonly preparedByText = new Map<string, Statement>();

  constructor(protected readonly db: SqliteDatabase) {
    this.rows = new RunRows(db);
  }

  /** A prepared statement, prepared once per connection. */
  protected sql<P extends unknown[], R>(text: string): Statement<P, R> {
    let statement = this.preparedByText.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.preparedByText.set(text, statement);
    }
    return statement as unknown as Statement<P, R>;
  }

  protected requireRun(runId: string): LoadedRun {
    const entry = this.rows.load(runId);
    if (!entry) throw runNotFound(runId);
    return entry;
  }

  private stepCounts(runId: string): RunSummary['stepCounts'] {
    const counts: RunSummary['stepCounts'] = {};
    const rows = this.sql<[string], { status: string; n: number }>(
      'SELECT status, count(*) AS n FROM steps WHERE run_id = ? GROUP BY status',
    ).all(runId);
    for (const row of rows) counts[row.status as StepStatus] = row.n;
    return counts;
  }

  private toSummary(row: SummaryRow): RunSummary {
    return summaryFromRow(row, this.stepCounts(row.id));
  }

  protected summary(runId: string): RunSummary {
    const row = this.sql<[string], SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM runs WHERE id = ?`).get(runId);
    if (!row) throw runNotFound(runId);
    return this.toSummary(row);
  }

  async nextWakeAt(filter: RunFilter = {}): Promise<number | null> {
    const runId = filter.runId ?? null;
    // Every run: the first entry of the steps_due index whose run is running (a seek, however many
    // runs wait with no timeout). One run: its own steps, by the primary key.
    const due =
      runId === null
        ? `SELECT s.due_at FROM steps s INDEXED BY steps_due
             WHERE ${TIMED_STEP_SQL} AND s.due_at IS NOT NULL
               AND EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.status = 'running')
             ORDER BY s.due_at LIMIT 1`
        : `SELECT min(s.due_at) FROM steps s JOIN runs r ON r.id = s.run_id
             WHERE s.run_id = @run AND ${TIMED_STEP_SQL} AND r.status = 'running'`;
    const row = this.sql<
      [{ run: string | null }],
      { due: number | null; lease: number | null; timeout: number | null }
    >(
      `SELECT (${due}) AS due,
           (SELECT min(lease_expires_at) FROM steps WHERE status = 'running' AND (@run IS NULL OR run_id = @run)) AS lease,
           (${BLOCKED_RUN_TIMEOUT}) AS timeout`,
    ).get({ run: runId });
    const times = [row?.due, row?.lease, row?.timeout].filter((t): t is number => typeof t === 'number');
    return times.length === 0 ? null : Math.min(...times);
  }

  /** Reads a run in one read transaction: its row, counts and steps from one snapshot. */
  private readonly inSnapshot = <T>(read: () => T): T => this.db.transaction(read)();

  async getRun(runId: string): Promise<RunDetail | null> {
    return this.inSnapshot(() => {
      const row = this.rows.runRow(runId);
      if (!row) return null;
      const plan = this.rows.plan(row);
      const steps = this.rows.runSteps(row, plan);
      return {
        // Counted from the steps read, not by another query over them.
        ...summaryFromRow(row, countSteps(steps)),
        plan,
        planHash: row.plan_hash,
        inputs: JSON.parse(row.inputs_json) as Record<string, string>,
        workspace: row.workspace,
        steps,
      };
    });
  }

  async getRunSteps(runId: string, selection: StepSelection): Promise<RunWithSteps | null> {
    return this.inSnapshot(() => {
      const row = this.rows.runRow(runId);
      if (!row) return null;
      const summary = this.toSummary(row);
      const plan = this.rows.plan(row);
      let total = 0;
      for (const n of Object.values(summary.stepCounts)) total += n;
      const statuses = total <= selection.everyStepUpTo ? undefined : selection.statuses;
      return { ...summary, plan, workspace: row.workspace, steps: this.rows.runSteps(row, plan, statuses) };
    });
  }

  async listRuns(options: RunListQuery = {}): Promise<RunSummary[]> {
    // One statement per shape (not `? IS NULL OR status = ?`), so each reads its index in order and
    // stops at the limit: runs_by_created for every run, runs_by_status for one status.
    const limit = options.limit ?? 50;
    const filter = runPageFilter(options, 'sqlite');
    if (filter.where.length > 0) {
      // Bound in the order the text names them: the filters', then the status and the limit.
      const where = [...filter.where];
      if (options.status !== undefined) where.push(`status = ${filter.bind(options.status)}`);
      return this.sql<unknown[], SummaryRow>(
        `SELECT ${SUMMARY_COLUMNS} FROM runs WHERE ${where.join(' AND ')}
         ORDER BY created_at DESC, id DESC LIMIT ${filter.bind(limit)}`,
      )
        .all(...filter.values)
        .map((row) => this.toSummary(row));
    }
    const rows =
      options.status === undefined
        ? this.sql<[number], SummaryRow>(
            `SELECT ${SUMMARY_COLUMNS} FROM runs ORDER BY created_at DESC, id DESC LIMIT ?`,
          ).all(limit)
        : this.sql<[string, number], SummaryRow>(
            `SELECT ${SUMMARY_COLUMNS} FROM runs WHERE status = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
          ).all(options.status, limit);
    return rows.map((row) => this.toSummary(row));
  }

  async listRunPage(query: RunPageQuery = {}): Promise<RunPage> {
    const filter = runPageFilter(query, 'sqlite');
    const whereOf = (clauses: string[]) => (clauses.length === 0 ? '' : `WHERE ${clauses.join(' AND ')}`);
    const counts: RunPage['counts'] = {};
    // Unfiltered, the counts kept by run_counts' triggers (schema 6): a few rows, whatever the history.
    const countRows =
      filter.where.length === 0
        ? this.sql<[], { status: string; n: number }>('SELECT status, n FROM run_counts WHERE n > 0').all()
        : this.sql<unknown[], { status: string; n: number }>(
            `SELECT status, count(*) AS n FROM runs ${whereOf(filter.where)} GROUP BY status`,
          ).all(...filter.values);
    for (const row of countRows) counts[row.status as RunStatus] = row.n;
    const total =
      query.status === undefined
        ? countRows.reduce((sum, row) => sum + row.n, 0)
        : (counts[query.status] ?? 0);
    const { limit, offset } = runPageBounds(query);
    const where = [...filter.where];
    if (query.status !== undefined) where.push(`status = ${filter.bind(query.status)}`);
    const page = `LIMIT ${filter.bind(limit)} OFFSET ${filter.bind(offset)}`;
    const rows = this.sql<unknown[], SummaryRow>(
      `SELECT ${SUMMARY_COLUMNS} FROM runs ${whereOf(where)} ORDER BY created_at DESC, id DESC ${page}`,
    ).all(...filter.values);
    return { runs: rows.map((row) => this.toSummary(row)), counts, total };
  }

  async listBlockedSteps(limit = 200, filter: BlockedStepFilter = {}): Promise<BlockedStep[]> {
    const { where, values, bind } = runPageFilter(filter, 'sqlite', { run: 'r.' });
    if (filter.failureClass !== undefined) where.push(`s.last_failure_class = ${bind(filter.failureClass)}`);
    if (filter.blockedFrom !== undefined) where.push(`s.updated_at >= ${bind(filter.blockedFrom)}`);
    // Found through the runs still going (runs_by_status): a run that ended has no step to unblock.
    const rows = this.sql<unknown[], BlockedStepRow>(
      `SELECT s.run_id, r.plan_name, r.status AS run_status, s.step_id, s.attempt, s.last_failure_class,
         s.blocked_reason, s.updated_at
       FROM runs r JOIN steps s ON s.run_id = r.id
       WHERE r.status IN ('running', 'blocked') AND s.status = 'blocked'${where.map((w) => ` AND ${w}`).join('')}
       ORDER BY s.updated_at DESC, s.run_id, s.step_id LIMIT ${bind(limit)}`,
    ).all(...values);
    return rows.map(blockedStepFromRow);
  }

  async selectRuns(query: RunSelectQuery): Promise<RunRef[]> {
    const { where, values, bind } = runPageFilter(query, 'sqlite', { run: 'r.' });
    // Bound in the order the text names them (SQLite's `?`): the filters', then these.
    const statuses = query.statuses.map((status) => bind(status)).join(', ');
    const rows = this.sql<unknown[], { id: string; plan_name: string; status: string }>(
      `SELECT r.id, r.plan_name, r.status FROM runs r
       WHERE ${[...where, `r.status IN (${statuses})`].join(' AND ')}
       ORDER BY r.created_at, r.id LIMIT ${bind(query.limit)}`,
    ).all(...values);
    return rows.map((row) => ({ id: row.id, planName: row.plan_name, status: row.status as RunStatus }));
  }

  async getRunPlans(runIds: readonly string[]): Promise<Record<string, Plan>> {
    const plans: Record<string, Plan> = {};
    if (runIds.length === 0) return plans;
    const rows = this.sql<[string], { id: string; plan_json: string }>(
      `SELECT run_id AS id, plan_json FROM run_plans WHERE run_id IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(runIds));
    // Runs of one plan share the parse of its text.
    const parsed = new Map<string, Plan>();
    for (const row of rows) {
      let plan = parsed.get(row.plan_json);
      if (!plan) {
        plan = JSON.parse(row.plan_json) as Plan;
        parsed.set(row.plan_json, plan);
      }
      plans[row.id] = plan;
    }
    return plans;
  }

  async getRunLabels(runIds: readonly string[]): Promise<Record<string, Record<string, string>>> {
    const labels: Record<string, Record<string, string>> = {};
    if (runIds.length === 0) return labels;
    const rows = this.sql<[string], { run_id: string; key: string; value: string }>(
      'SELECT run_id, key, value FROM run_labels WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY run_id, key',
    ).all(JSON.stringify(runIds));
    for (const row of rows) {
      labels[row.run_id] ??= {};
      labels[row.run_id]![row.key] = row.value;
    }
    return labels;
  }

  async listWaitingSteps(limit = 100): Promise<{ steps: WaitingStep[]; total: number }> {
    const rows = this.sql<[number], WaitingStepRow>(SQLITE_WAITING_STEPS_SQL).all(limit);
    const total = this.sql<[], { n: number }>(SQLITE_WAITING_COUNT_SQL).get()!.n;
    return { steps: rows.map(waitingStepFromRow), total };
  }

  async listLeases(): Promise<LiveLease[]> {
    const rows = this.sql<[], LeaseRow>(
      `SELECT s.run_id, s.step_id, s.attempt, r.plan_name, s.lease_owner, s.lease_expires_at, s.started_at,
         s.pid, s.host, s.flow_key
       FROM steps s INDEXED BY steps_leased JOIN runs r ON r.id = s.run_id
       WHERE s.status = 'running' AND s.lease_expires_at IS NOT NULL
       ORDER BY s.lease_owner, s.started_at, s.run_id, s.step_id`,
    ).all();
    return rows.map(leaseFromRow);
  }

  async getEvents(runId: string, options: { afterSeq?: number } = {}): Promise<StoredEvent[]> {
    return this.eventsAfter(runId, options.afterSeq ?? 0);
  }

  /** A run's events after `afterSeq`, read now (inside a write transaction too). */
  protected eventsAfter(runId: string, afterSeq: number): StoredEvent[] {
    const rows = this.sql<[string, number], EventRow>(
      'SELECT seq, run_id, at, type, step_id, data_json FROM events WHERE run_id = ? AND seq > ? ORDER BY seq',
    ).all(runId, afterSeq);
    return rows.map(eventFromRow);
  }

  async listEventsAfter(afterSeq: number, limit = 500): Promise<StoredEvent[]> {
    const rows = this.sql<[number, number], EventRow>(
      'SELECT seq, run_id, at, type, step_id, data_json FROM events WHERE seq > ? ORDER BY seq LIMIT ?',
    ).all(afterSeq, limit);
    return rows.map(eventFromRow);
  }

  async getAttempts(runId: string, stepId?: string): Promise<AttemptRecord[]> {
    const rows = this.sql<
      [string, string | null, string | null],
      Omit<AttemptRow, 'outputs'> & { outputs_json: string }
    >(
      `SELECT * FROM attempts WHERE run_id = ? AND (? IS NULL OR step_id = ?) ORDER BY started_at, step_id, attempt`,
    ).all(runId, stepId ?? null, stepId ?? null);
    return rows.map((row) =>
      attemptFromRow({ ...row, outputs: JSON.parse(row.outputs_json) as OutputArtifact[] }),
    );
  }

  async metricsSnapshot(query: MetricsQuery): Promise<MetricsSnapshot> {
    return sqliteMetricsSnapshot(this.db, (text) => this.sql(text), query);
  }

  async lastEventSeq(): Promise<number> {
    return this.sql<[], { seq: number | null }>('SELECT max(seq) AS seq FROM events').get()?.seq ?? 0;
  }

  async getStepResults(runId: string, stepIds: readonly string[]): Promise<Record<string, StepResult>> {
    const results: Record<string, StepResult> = {};
    const select = this.sql<[string, string], { result_json: string | null }>(
      'SELECT result_json FROM steps WHERE run_id = ? AND step_id = ?',
    );
    for (const stepId of stepIds) {
      const json = select.get(runId, stepId)?.result_json;
      if (json) results[stepId] = JSON.parse(json) as StepResult;
    }
    return results;
  }
}
