import { runningCount } from '../../core/claim-rules.js';
import { BatonError } from '../../core/errors.js';
import { connectError, createPool, firstConnection, type PgClient } from '../postgres/open-pool.js';
import { PostgresStore } from '../postgres/postgres-store.js';
import { DEFAULT_SCHEMA, notifyChannel, quoteSchema } from '../postgres/schema-name.js';
import { inTransaction } from '../postgres/transaction.js';
import { nextDueAt } from '../postgres/write-batch.js';
import { PostgresCopyTarget } from './postgres-target.js';
import { COPIED_TABLES, listIds, SqliteCopySource, type TableCounts } from './sqlite-source.js';

export { COPIED_TABLES, type CopiedTable, type TableCounts } from './sqlite-source.js';

interface CopyHomeOptions {
  /** The Baton SQLite file to copy from; opened read-only, never written. */
  from: string;
  /** The PostgreSQL URL to copy into (without `?schema=`). */
  url: string;
  /** The Baton schema in that database, created or migrated first. Default `baton`. */
  schema?: string;
  /** Only these runs; null or absent: every run of the file. */
  runIds?: readonly string[] | null;
  /** Runs read and written per round. Default 200. */
  runsPerBatch?: number;
  /** Events read and written per round. Default 5,000. */
  eventsPerBatch?: number;
  /** Fault point for tests: runs inside the transaction after the copy, just before the counts are compared. */
  beforeVerify?: (client: PgClient, quotedSchema: string) => Promise<void>;
}

interface MigrationReport {
  /** The runs copied (or that would have been), oldest first. */
  runIds: string[];
  /** Rows of each table the SQLite file holds for those runs. */
  source: TableCounts;
  /** Rows of each table the target held for them at the end of the copy (zeros when nothing was copied). */
  target: TableCounts;
  /** Steps that were running in the SQLite file: their leases run out and they are retried from PostgreSQL. */
  runningSteps: number;
  durationMs: number;
}

/** `ok`: copied and committed. `count_mismatch`: the target did not hold what was copied; rolled back. */
export type HomeCopyResult =
  | ({ ok: true } & MigrationReport)
  | ({ ok: false; reason: 'count_mismatch' } & MigrationReport);

const zeroCounts = (): TableCounts =>
  Object.fromEntries(COPIED_TABLES.map((table) => [table, 0])) as TableCounts;

const sameCounts = (a: TableCounts, b: TableCounts) => COPIED_TABLES.every((table) => a[table] === b[table]);

/** Thrown inside the transaction to roll it back when the counts differ. */
class CountMismatch extends Error {
  constructor(readonly target: TableCounts) {
    super('counts differ');
  }
}

/**
 * Copies runs with their plans, steps, attempts, events (in order, with new seq values), artifact
 * references, effects, hook deliveries, labels and kept events (sent before their step waited) from a Baton SQLite file into a Baton PostgreSQL schema,
 * in ONE transaction, and verifies inside it that the target holds exactly as many rows of each
 * table for those runs as the source; otherwise it rolls back. Runs the target already holds are
 * refused before anything is written. Attempt logs and result artifacts are files under the home
 * folder: only their references are copied.
 */
export async function copyHomeToPostgres(options: CopyHomeOptions): Promise<HomeCopyResult> {
  const started = Date.now();
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const source = SqliteCopySource.open(options.from);
  try {
    const only = options.runIds ?? null;
    const runIds = source.runIds(only);
    const sourceCounts = source.counts(runIds, only === null);
    const report = (target: TableCounts, runningSteps = 0): MigrationReport => ({
      runIds,
      source: sourceCounts,
      target,
      runningSteps,
      durationMs: Date.now() - started,
    });
    if (runIds.length === 0) return { ok: true, ...report(zeroCounts()) };
    // Creates or migrates the Baton schema; refuses a foreign or newer one.
    await (await PostgresStore.open(options.url, { schema, poolSize: 1 })).close();
    const pool = createPool(options.url, 1);
    try {
      await firstConnection(pool, options.url);
      const copied = await inTransaction(pool, (client) =>
        copyRuns(client, source, runIds, only === null, sourceCounts, options),
      );
      return { ok: true, ...report(copied.target, copied.runningSteps) };
    } catch (error) {
      if (error instanceof CountMismatch)
        return { ok: false, reason: 'count_mismatch', ...report(error.target) };
      if ((error as { code?: string }).code === '23505') {
        throw new BatonError(
          'INVALID_ARGUMENT',
          `another process wrote some of these runs into the target while they were being copied; nothing was copied (${(error as Error).message})`,
          { cause: error },
        );
      }
      throw connectError(options.url, error);
    } finally {
      await pool.end();
    }
  } finally {
    source.close();
  }
}

async function copyRuns(
  client: PgClient,
  source: SqliteCopySource,
  runIds: readonly string[],
  allRuns: boolean,
  sourceCounts: TableCounts,
  options: CopyHomeOptions,
): Promise<{ target: TableCounts; runningSteps: number }> {
  const schemaName = options.schema ?? DEFAULT_SCHEMA;
  const schema = quoteSchema(schemaName);
  const target = new PostgresCopyTarget(client, schema);
  const existing = await target.existingRunIds(runIds);
  if (existing.length > 0) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${existing.length} of the ${runIds.length} run(s) to copy ${existing.length === 1 ? 'is' : 'are'} already in the target (${listIds(existing)}); ` +
        'nothing was copied. Leave them out with --runs <id,...>, or migrate into another schema (?schema=<name>).',
    );
  }
  const runsPerBatch = options.runsPerBatch ?? 200;
  let runningSteps = 0;
  let earliestDue: number | null = null;
  for (let i = 0; i < runIds.length; i += runsPerBatch) {
    const batch = runIds.slice(i, i + runsPerBatch);
    const runs = source.runs(batch);
    await target.insertRuns(runs);
    for (const { state } of runs) {
      runningSteps += runningCount(state);
      const dueAt = state.status === 'running' ? nextDueAt(state) : null;
      if (dueAt !== null) earliestDue = earliestDue === null ? dueAt : Math.min(earliestDue, dueAt);
    }
    await target.insertAttempts(source.rowsOf('attempts', batch));
    await target.insertArtifacts(source.rowsOf('artifacts', batch));
    await target.insertEffects(source.rowsOf('effects', batch));
    await target.insertWaitEvents(source.rowsOf('wait_events', batch));
    await target.insertLabels(source.rowsOf('run_labels', batch));
  }
  // Events in seq order across all runs, so the target numbers them in the order the source did.
  const eventFilter = allRuns ? null : runIds;
  const eventsPerBatch = options.eventsPerBatch ?? 5000;
  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    const events = source.eventsAfter(after, eventFilter, eventsPerBatch);
    if (events.length === 0) break;
    const seqMap = await target.insertEvents(events);
    const first = events[0]!.seq;
    after = events[events.length - 1]!.seq;
    await target.insertDeliveries(source.deliveriesOf(first, after, eventFilter), seqMap);
  }
  await target.insertFlowLimits(source.flowLimits());
  await target.insertSchedules(source.schedules());
  await options.beforeVerify?.(client, schema);
  const targetCounts = await target.counts(runIds);
  if (!sameCounts(sourceCounts, targetCounts)) throw new CountMismatch(targetCounts);
  if (earliestDue !== null) await target.notifyDue(notifyChannel(schemaName), earliestDue);
  return { target: targetCounts, runningSteps };
}
