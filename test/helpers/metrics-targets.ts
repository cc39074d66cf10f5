/**
 * What the `/metrics` end-to-end tests share: a store to run a workload in, on SQLite or on
 * PostgreSQL (a schema of its own on the file's cluster), and a scrape read by the strict parser.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from './cli.js';
import { freshSchemaName } from './postgres.js';
import { type Family, parsePrometheusText } from './prometheus-text.js';

export const METRICS_TOKEN = 'metrics-scrape-token-0123456789';

export interface MetricsTarget {
  dir: string;
  home: string;
  /** `--store <url>` for PostgreSQL, nothing for SQLite. */
  storeArgs: string[];
  open(): Promise<Store>;
}

export function sqliteMetricsTarget(): MetricsTarget {
  const dir = tempDir('baton-metrics-');
  const home = join(dir, 'home');
  return { dir, home, storeArgs: [], open: async () => SqliteStore.open(join(home, 'baton.db')) };
}

/** A store in a fresh schema of the cluster at `url`. */
export function postgresMetricsTarget(url: string): MetricsTarget {
  const dir = tempDir('baton-metrics-pg-');
  const schema = freshSchemaName('metrics');
  return {
    dir,
    home: join(dir, 'home'),
    storeArgs: ['--store', `${url}?schema=${schema}`],
    open: () => PostgresStore.open(url, { schema }),
  };
}

/** Writes METRICS_TOKEN to a file only its owner reads, for `--metrics-token-file`. */
export function metricsTokenFile(dir: string): string {
  const file = join(dir, 'metrics-token');
  writeFileSync(file, `${METRICS_TOKEN}\n`, { mode: 0o600 });
  return file;
}

/** GET `url` with `Authorization: Bearer <token>`: a 200 in the text format, parsed. */
export async function scrapeMetrics(url: string, token = METRICS_TOKEN): Promise<Map<string, Family>> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheusText(await response.text());
}
