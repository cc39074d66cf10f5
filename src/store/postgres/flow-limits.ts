import type { FlowKeyState, FlowLimit } from '../../core/flow.js';
import { takesFlowSlotSql } from '../lease-rules.js';
import type { FlowLimitStatus } from '../store.js';
import { flowKeyState, flowLimitStatus } from '../store-rows.js';
import { flowLockSql, flowRunningSql } from './cycle-locks.js';
import type { PgClient, PgPool } from './open-pool.js';
import { type PreparedSql, prepared } from './prepared.js';

interface FlowRow {
  key: string;
  concurrency: number | null;
  rate_count: number | null;
  rate_window_ms: string | null;
  starts: string[];
}

const toState = (row: FlowRow, running: number): FlowKeyState =>
  flowKeyState({ ...row, running, starts: row.starts.map(Number) });

/** The flow limits of the Postgres store: locked by cycles that admit claims under them, set by `baton flow`. */
export class PostgresFlow {
  private readonly lockWait: PreparedSql;
  private readonly lockSkip: PreparedSql;
  private readonly running: PreparedSql;

  constructor(
    private readonly pool: PgPool,
    private readonly schema: string,
  ) {
    this.lockWait = prepared(flowLockSql(schema, false));
    this.lockSkip = prepared(flowLockSql(schema, true));
    this.running = prepared(flowRunningSql(schema));
  }

  /**
   * Locks the rows of `keys` (in key order; waiting for them, or skipping the ones another worker
   * holds) and returns the limits of those locked with the attempts running under them.
   */
  async lock(
    client: PgClient,
    keys: readonly string[],
    skipLocked: boolean,
    now: number,
  ): Promise<FlowKeyState[]> {
    const { rows } = await client.query<FlowRow>({
      ...(skipLocked ? this.lockSkip : this.lockWait),
      values: [keys],
    });
    if (rows.length === 0) return [];
    const counts = await client.query<{ key: string; running: number }>({
      ...this.running,
      values: [rows.map((row) => row.key), now],
    });
    const running = new Map(counts.rows.map((row) => [row.key, row.running]));
    return rows.map((row) => toState(row, running.get(row.key) ?? 0));
  }

  async set(limit: FlowLimit, now: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.schema}.flow_limits (key, concurrency, rate_count, rate_window_ms, updated_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (key) DO UPDATE SET concurrency = excluded.concurrency, rate_count = excluded.rate_count,
         rate_window_ms = excluded.rate_window_ms, updated_at = excluded.updated_at`,
      [limit.key, limit.concurrency, limit.rate?.count ?? null, limit.rate?.windowMs ?? null, now],
    );
  }

  async remove(key: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(`DELETE FROM ${this.schema}.flow_limits WHERE key = $1`, [
      key,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async list(now: number): Promise<FlowLimitStatus[]> {
    const { rows } = await this.pool.query<FlowRow & { updated_at: string; running: number }>(
      `SELECT f.key, f.concurrency, f.rate_count, f.rate_window_ms, f.starts, f.updated_at,
         (SELECT count(*)::integer FROM ${this.schema}.steps s
           WHERE s.flow_key = f.key AND ${takesFlowSlotSql('$1::bigint')}) AS running
       FROM ${this.schema}.flow_limits f ORDER BY f.key`,
      [now],
    );
    return rows.map((row) => flowLimitStatus(toState(row, row.running), Number(row.updated_at), now));
  }
}
