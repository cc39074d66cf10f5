import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonError } from '../../core/errors.js';
import type { Plan } from '../../core/plan/types.js';
import { backfillFlowKeys, type KeylessStep } from '../flow-backfill.js';
import { latestMigrationVersion, type Migration, readMigrations } from '../schema-migration-files.js';
import { BATON_TABLES } from '../schema-tables.js';
import { recordedSchemaVersion, refuseNewerSchema, SCHEMA_APP_ID } from '../schema-version.js';
import { UNFINISHED_RUN_SQL } from '../unfinished-runs.js';
import type { PgClient, PgPool } from './open-pool.js';
import { quoteSchema } from './schema-name.js';
import { inTransaction } from './transaction.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** The schema version that added steps.flow_key. */
const FLOW_KEYS_VERSION = 2;

/** Gives the steps of runs not finished yet their flow key (see flow-backfill.ts); search_path is the schema. */
async function backfillPostgresFlowKeys(client: PgClient): Promise<void> {
  const { rows } = await client.query<KeylessStep & { plan: Plan }>(
    `SELECT s.run_id, s.step_id, s.on_fallback, p.plan FROM steps s
     JOIN runs r ON r.id = s.run_id JOIN run_plans p ON p.run_id = s.run_id
     WHERE s.flow_key IS NULL AND r.status IN ${UNFINISHED_RUN_SQL}`,
  );
  if (rows.length === 0) return;
  const plans = new Map(rows.map((row) => [row.run_id, row.plan]));
  const keyed = backfillFlowKeys(rows, (runId) => plans.get(runId) ?? null);
  await client.query(
    `UPDATE steps s SET flow_key = x.flow_key
     FROM json_to_recordset($1::json) AS x (run_id text, step_id text, flow_key text)
     WHERE s.run_id = x.run_id AND s.step_id = x.step_id`,
    [JSON.stringify(keyed)],
  );
}

function loadMigrations(): Migration[] {
  return readMigrations(MIGRATIONS_DIR);
}

/** The newest PostgreSQL schema version this code knows. */
export function latestPostgresSchemaVersion(): number {
  return latestMigrationVersion(MIGRATIONS_DIR);
}

/**
 * Brings `schema` up to the newest version in ONE transaction. An advisory lock keyed on the schema
 * name makes concurrent migrators wait for each other; the version row is written before the
 * migration's SQL. A foreign schema or one newer than this code is refused and left untouched.
 */
export async function migrateSchema(pool: PgPool, schema: string): Promise<void> {
  const quoted = quoteSchema(schema);
  const where = `postgres schema "${schema}"`;
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`baton:schema:${schema}`]);
    const tables = await tablesOf(client, schema);
    let current = 0;
    if (tables.length > 0) {
      if (!tables.includes('baton_meta')) {
        throw new BatonError(
          'DB_CORRUPT',
          `${where} was not made by Baton (tables: ${tables.slice(0, 5).join(', ')}). It was left untouched; choose another schema.`,
        );
      }
      const meta = new Map(
        (
          await client.query<{ key: string; value: string }>(`SELECT key, value FROM ${quoted}.baton_meta`)
        ).rows.map((row) => [row.key, row.value]),
      );
      current = recordedSchemaVersion(where, meta.get('app'), meta.get('schema_version'));
    }
    const latest = latestPostgresSchemaVersion();
    refuseNewerSchema(where, current, latest);
    if (current < latest) {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
      await client.query(`SET LOCAL search_path TO ${quoted}`);
      await client.query('CREATE TABLE IF NOT EXISTS baton_meta (key text PRIMARY KEY, value text NOT NULL)');
      for (const migration of loadMigrations()) {
        if (migration.version <= current) continue;
        await client.query(
          `INSERT INTO baton_meta (key, value) VALUES ('app', $1), ('schema_version', $2)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
          [SCHEMA_APP_ID, String(migration.version)],
        );
        await client.query(migration.sql);
        if (migration.version === FLOW_KEYS_VERSION) await backfillPostgresFlowKeys(client);
      }
    }
    const present = current < latest ? await tablesOf(client, schema) : tables;
    const missing = BATON_TABLES.filter((table) => !present.includes(table));
    if (missing.length > 0) {
      throw new BatonError(
        'DB_CORRUPT',
        `${where} is missing table(s) ${missing.join(', ')} although its schema version says otherwise; it was left untouched`,
      );
    }
  });
}

async function tablesOf(client: PgClient, schema: string): Promise<string[]> {
  const result = await client.query<{ name: string }>(
    'SELECT tablename AS name FROM pg_catalog.pg_tables WHERE schemaname = $1 ORDER BY tablename',
    [schema],
  );
  return result.rows.map((row) => row.name);
}
