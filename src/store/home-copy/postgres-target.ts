import { runningCount } from '../../core/claim-rules.js';
import { flowKeyOf } from '../../core/flow.js';
import { nextWaitAt } from '../../core/waits.js';
import type { PgClient } from '../postgres/open-pool.js';
import { toPgJson } from '../postgres/pg-json.js';
import { functionOf, nextClaimRank, nextDueAt } from '../postgres/write-batch.js';
import {
  COPIED_TABLES,
  type SourceEventRow,
  type SourceRow,
  type SourceRun,
  type TableCounts,
} from './sqlite-source.js';

/** A statement's JSON parameter stays under this size (characters); larger row sets are split. */
const MAX_BATCH_CHARS = 8_000_000;

/** Rows as JSON arrays of at most MAX_BATCH_CHARS each (a single larger row goes alone). */
function jsonBatches(rows: readonly object[]): string[] {
  const batches: string[] = [];
  let parts: string[] = [];
  let size = 0;
  for (const row of rows) {
    const text = toPgJson(row);
    if (parts.length > 0 && size + text.length > MAX_BATCH_CHARS) {
      batches.push(`[${parts.join(',')}]`);
      parts = [];
      size = 0;
    }
    parts.push(text);
    size += text.length + 1;
  }
  if (parts.length > 0) batches.push(`[${parts.join(',')}]`);
  return batches;
}

/**
 * Writes migrated rows into a Baton PostgreSQL schema on one client, inside the caller's
 * transaction. Every table is written with json_to_recordset, one statement per batch of rows.
 * JSON documents travel as their stored text and are cast to `json`, which keeps them exactly.
 */
export class PostgresCopyTarget {
  constructor(
    private readonly client: PgClient,
    /** The quoted schema name. */
    private readonly schema: string,
  ) {}

  /** Which of these run ids the target already holds. */
  async existingRunIds(runIds: readonly string[]): Promise<string[]> {
    const { rows } = await this.client.query<{ id: string }>(
      `SELECT id FROM ${this.schema}.runs WHERE id = ANY ($1::text[]) ORDER BY id`,
      [runIds],
    );
    return rows.map((row) => row.id);
  }

  private async insert(sql: string, rows: readonly object[]): Promise<void> {
    for (const batch of jsonBatches(rows)) await this.client.query(sql, [batch]);
  }

  /**
   * Runs with their plan snapshots and steps. The columns only PostgreSQL keeps (next_due_at,
   * next_wait_at, running_count, concurrency, steps.fn) are computed from the run's state and plan,
   * as the Postgres store computes them when it writes a run.
   */
  async insertRuns(runs: readonly SourceRun[]): Promise<void> {
    const s = this.schema;
    const runRows = runs.map(({ row, state }) => ({
      id: row.id,
      plan_name: row.plan_name,
      plan_hash: row.plan_hash,
      inputs: row.inputs_json,
      workspace: row.workspace,
      status: row.status,
      attempts_total: row.attempts_total,
      blocked_reason: row.blocked_reason,
      created_at: row.created_at,
      updated_at: row.updated_at,
      finished_at: row.finished_at,
      version: row.version,
      next_due_at: nextDueAt(state),
      next_rank: nextClaimRank(state),
      next_wait_at: nextWaitAt(state),
      concurrency: state.plan.limits.concurrency,
      running_count: runningCount(state),
      input_tokens: row.input_tokens,
      output_tokens: row.output_tokens,
      cost_usd: row.cost_usd,
      plan: row.plan_json,
    }));
    await this.insert(
      `WITH x AS (
         SELECT * FROM json_to_recordset($1::json) AS x (id text, plan_name text, plan_hash text, inputs text,
           workspace text, status text, attempts_total integer, blocked_reason text, created_at bigint,
           updated_at bigint, finished_at bigint, version bigint, next_due_at bigint, next_rank bigint,
           next_wait_at bigint, concurrency integer, running_count integer, input_tokens bigint, output_tokens bigint, cost_usd double precision, plan text)),
       ru AS (
         INSERT INTO ${s}.runs (id, plan_name, plan_hash, inputs, workspace, status, attempts_total, blocked_reason,
           created_at, updated_at, finished_at, version, next_due_at, next_rank, next_wait_at, concurrency,
           running_count, input_tokens, output_tokens, cost_usd)
         SELECT id, plan_name, plan_hash, inputs::json, workspace, status, attempts_total, blocked_reason,
           created_at, updated_at, finished_at, version, next_due_at, next_rank, next_wait_at, concurrency,
           running_count,
           input_tokens, output_tokens, cost_usd FROM x)
       INSERT INTO ${s}.run_plans (run_id, plan) SELECT id, plan::json FROM x`,
      runRows,
    );
    const stepRows = runs.flatMap(({ state, steps }) => {
      const planSteps = new Map(state.plan.steps.map((step) => [step.id, step]));
      return steps.map((step) => {
        const planStep = planSteps.get(step.step_id);
        const { on_fallback, ...rest } = step;
        return {
          ...rest,
          fn: planStep ? functionOf(planStep, on_fallback === 1) : null,
          on_fallback: on_fallback === 1,
          flow_key: planStep ? flowKeyOf(planStep, on_fallback === 1) : null,
        };
      });
    });
    await this.insert(
      `INSERT INTO ${s}.steps (run_id, step_id, position, fn, status, attempt, tries, due_at, lease_owner,
         lease_expires_at, started_at, last_error, last_failure_class, fingerprint, fingerprint_repeats, result,
         blocked_reason, pid, host, updated_at, input_tokens, output_tokens, cost_usd, first_started_at, on_fallback,
         interruptions, flow_key, waiting_for)
       SELECT run_id, step_id, position, fn, status, attempt, tries, due_at, lease_owner, lease_expires_at,
         started_at, last_error, last_failure_class, fingerprint, fingerprint_repeats, result_json::json,
         blocked_reason, pid, host, updated_at, input_tokens, output_tokens, cost_usd, first_started_at, on_fallback,
         interruptions, flow_key, waiting_for
       FROM json_to_recordset($1::json) AS x (run_id text, step_id text, position integer, fn text, status text,
         attempt integer, tries integer, due_at bigint, lease_owner text, lease_expires_at bigint, started_at bigint,
         last_error text, last_failure_class text, fingerprint text, fingerprint_repeats integer, result_json text,
         blocked_reason text, pid integer, host text, updated_at bigint, input_tokens bigint, output_tokens bigint,
         cost_usd double precision, first_started_at bigint, on_fallback boolean, interruptions integer, flow_key text,
         waiting_for text)`,
      stepRows,
    );
  }

  async insertAttempts(rows: readonly SourceRow[]): Promise<void> {
    // Outputs are parsed so that toPgJson can make them valid jsonb (which holds no NUL).
    const attempts = rows.map(({ outputs_json, ...rest }) => ({
      ...rest,
      outputs: JSON.parse(String(outputs_json)) as unknown,
    }));
    await this.insert(
      `INSERT INTO ${this.schema}.attempts (run_id, step_id, attempt, owner, started_at, ended_at, outcome,
         failure_class, exit_code, fingerprint, message, summary, log_path, outputs, input_tokens, output_tokens,
         cost_usd)
       SELECT run_id, step_id, attempt, owner, started_at, ended_at, outcome, failure_class, exit_code, fingerprint,
         message, summary, log_path, outputs, input_tokens, output_tokens, cost_usd
       FROM json_to_recordset($1::json) AS x (run_id text, step_id text, attempt integer, owner text,
         started_at bigint, ended_at bigint, outcome text, failure_class text, exit_code integer, fingerprint text,
         message text, summary text, log_path text, outputs jsonb, input_tokens bigint, output_tokens bigint,
         cost_usd double precision)`,
      attempts,
    );
  }

  async insertArtifacts(rows: readonly SourceRow[]): Promise<void> {
    await this.insert(
      `INSERT INTO ${this.schema}.artifacts (run_id, step_id, attempt, path, size, sha256)
       SELECT run_id, step_id, attempt, path, size, sha256
       FROM json_to_recordset($1::json) AS x (run_id text, step_id text, attempt integer, path text, size bigint,
         sha256 text)`,
      rows,
    );
  }

  async insertEffects(rows: readonly SourceRow[]): Promise<void> {
    await this.insert(
      `INSERT INTO ${this.schema}.effects (run_id, step_id, key, state, result, created_at, completed_at)
       SELECT run_id, step_id, key, state, result_json::json, created_at, completed_at
       FROM json_to_recordset($1::json) AS x (run_id text, step_id text, key text, state text, result_json text,
         created_at bigint, completed_at bigint)`,
      rows,
    );
  }

  /** Events sent to a run before its step waits, kept until the step takes them (`baton send --run`). */
  async insertWaitEvents(rows: readonly SourceRow[]): Promise<void> {
    await this.insert(
      `INSERT INTO ${this.schema}.wait_events (run_id, event, data_json, sent_at)
       SELECT run_id, event, data_json, sent_at
       FROM json_to_recordset($1::json) AS x (run_id text, event text, data_json text, sent_at bigint)`,
      rows,
    );
  }

  /** The runs' labels (`-l team=growth`). */
  async insertLabels(rows: readonly SourceRow[]): Promise<void> {
    await this.insert(
      `INSERT INTO ${this.schema}.run_labels (run_id, key, value)
       SELECT run_id, key, value FROM json_to_recordset($1::json) AS x (run_id text, key text, value text)`,
      rows,
    );
  }

  /**
   * Inserts events in their order. Their new `seq` values are taken from the events sequence first
   * (one nextval per event, sorted: values one session draws only grow), so old seq i maps to the
   * i-th value and the returned map is exact. Returns old seq -> new seq.
   */
  async insertEvents(events: readonly SourceEventRow[]): Promise<Map<number, number>> {
    const mapping = new Map<number, number>();
    if (events.length === 0) return mapping;
    const { rows } = await this.client.query<{ seq: number }>(
      `SELECT nextval(pg_get_serial_sequence($1, 'seq')) AS seq FROM generate_series(1, $2::integer)`,
      [`${this.schema}.events`, events.length],
    );
    const seqs = rows.map((row) => Number(row.seq)).sort((a, b) => a - b);
    const sorted = [...events].sort((a, b) => a.seq - b.seq);
    const eventRows = sorted.map((event, i) => {
      mapping.set(event.seq, seqs[i]!);
      const hooks = JSON.parse(event.hooks_json) as number[];
      return {
        seq: seqs[i],
        run_id: event.run_id,
        at: event.at,
        type: event.type,
        step_id: event.step_id,
        data: event.data_json,
        hooks: hooks.length > 0 ? hooks : null,
      };
    });
    await this.insert(
      `INSERT INTO ${this.schema}.events (seq, run_id, at, type, step_id, data, hooks) OVERRIDING SYSTEM VALUE
       SELECT seq, run_id, at, type, step_id, data::json, hooks
       FROM json_to_recordset($1::json) AS x (seq bigint, run_id text, at bigint, type text, step_id text,
         data text, hooks smallint[])
       ORDER BY seq`,
      eventRows,
    );
    return mapping;
  }

  /** Hook deliveries, their event_seq mapped to the events' new seq values. */
  async insertDeliveries(rows: readonly SourceRow[], seqMap: ReadonlyMap<number, number>): Promise<void> {
    const deliveries = rows.map((row) => {
      const seq = seqMap.get(Number(row.event_seq));
      if (seq === undefined) throw new Error(`hook delivery of unknown event ${String(row.event_seq)}`);
      return { ...row, event_seq: seq };
    });
    await this.insert(
      `INSERT INTO ${this.schema}.hook_deliveries (run_id, event_seq, hook, state, attempts, due_at, lease_owner,
         lease_expires_at, last_error)
       SELECT run_id, event_seq, hook, state, attempts, due_at, lease_owner, lease_expires_at, last_error
       FROM json_to_recordset($1::json) AS x (run_id text, event_seq bigint, hook smallint, state text,
         attempts integer, due_at bigint, lease_owner text, lease_expires_at bigint, last_error text)`,
      deliveries,
    );
  }

  /** Rows of each table the target holds for these runs (as this transaction sees them). */
  async counts(runIds: readonly string[]): Promise<TableCounts> {
    const selects = COPIED_TABLES.map(
      (table) =>
        `(SELECT count(*) FROM ${this.schema}.${table} WHERE ${table === 'runs' ? 'id' : 'run_id'} = ANY ($1::text[])) AS ${table}`,
    );
    const { rows } = await this.client.query<Record<string, string | number>>(
      `SELECT ${selects.join(', ')}`,
      [runIds],
    );
    const counts = {} as TableCounts;
    for (const table of COPIED_TABLES) counts[table] = Number(rows[0]![table]);
    return counts;
  }

  /**
   * Flow limits the target does not have yet (a limit set there already wins); the recent starts
   * are not copied. Returns the keys copied.
   */
  async insertFlowLimits(rows: readonly SourceRow[]): Promise<string[]> {
    if (rows.length === 0) return [];
    const { rows: inserted } = await this.client.query<{ key: string }>(
      `INSERT INTO ${this.schema}.flow_limits (key, concurrency, rate_count, rate_window_ms, updated_at)
       SELECT key, concurrency, rate_count, rate_window_ms, updated_at
       FROM json_to_recordset($1::json) AS x (key text, concurrency integer, rate_count integer,
         rate_window_ms bigint, updated_at bigint)
       ON CONFLICT (key) DO NOTHING RETURNING key`,
      [toPgJson(rows)],
    );
    return inserted.map((row) => row.key);
  }

  /**
   * Schedules the target does not have yet (one of the same name there wins), with their slot
   * history: a migrated schedule goes on from its cursor, so no slot is decided twice.
   */
  async insertSchedules(source: {
    schedules: readonly SourceRow[];
    slots: readonly SourceRow[];
  }): Promise<void> {
    if (source.schedules.length === 0) return;
    const { rows: inserted } = await this.client.query<{ name: string }>(
      `INSERT INTO ${this.schema}.schedules (name, plan_name, plan_json, plan_hash, inputs_json, workspace, rules_json,
         paused, cursor_at, next_fire_at, queued_slot_at, last_run_id, created_at, updated_at)
       SELECT x.name, x.plan_name, x.plan_json, x.plan_hash, x.inputs_json, x.workspace, x.rules_json, x.paused <> 0,
         x.cursor_at, x.next_fire_at, x.queued_slot_at, x.last_run_id, x.created_at, x.updated_at
       FROM json_to_recordset($1::json) AS x (name text, plan_name text, plan_json text, plan_hash text,
         inputs_json text, workspace text, rules_json text, paused integer, cursor_at bigint, next_fire_at bigint,
         queued_slot_at bigint, last_run_id text, created_at bigint, updated_at bigint)
       ON CONFLICT (name) DO NOTHING RETURNING name`,
      [toPgJson(source.schedules)],
    );
    const names = new Set(inserted.map((row) => row.name));
    const slots = source.slots.filter((slot) => names.has(slot.schedule as string));
    if (slots.length === 0) return;
    await this.client.query(
      `INSERT INTO ${this.schema}.schedule_slots (schedule, manual, slot_at, outcome, run_id, reason, slot_count,
         last_slot_at, recorded_at)
       SELECT x.schedule, x.manual <> 0, x.slot_at, x.outcome, x.run_id, x.reason, x.slot_count, x.last_slot_at,
         x.recorded_at
       FROM json_to_recordset($1::json) AS x (schedule text, manual integer, slot_at bigint, outcome text,
         run_id text, reason text, slot_count integer, last_slot_at bigint, recorded_at bigint)`,
      [toPgJson(slots)],
    );
  }

  /** Wakes workers (at commit) when a migrated running run has a step due at `dueAt`. */
  async notifyDue(channel: string, dueAt: number): Promise<void> {
    await this.client.query('SELECT pg_notify($1, $2::text)', [channel, String(dueAt)]);
  }
}
