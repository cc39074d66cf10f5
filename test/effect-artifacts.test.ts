/**
 * `ctx.effect` results follow the artifact rule of step results, on SQLite and on PostgreSQL alike:
 * a result over 64 KiB is a content-addressed file (size, sha256) and the effect row holds only its
 * reference; a retry that finds the effect done gets the whole value back without running it again,
 * and `baton gc` counts the file as referenced. Real SQLite files, a real PostgreSQL cluster.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { artifactPath } from '../src/engine/result-artifacts.js';
import { StepFailure } from '../src/executors/function-executor.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { freshSchemaName, usePostgres } from './helpers/postgres.js';

const pgc = usePostgres();

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

interface Harness {
  open(home: string): Promise<Baton>;
  /** An effect row's stored result, as text. */
  effectRow(home: string, runId: string, key: string): Promise<string>;
}

const sqlite: Harness = {
  open: async (home) => Baton.open({ home, pollMs: 20 }),
  effectRow: async (home, runId, key) => {
    const db = new Database(join(home, 'baton.db'), { readonly: true });
    try {
      const row = db
        .prepare('SELECT result_json FROM effects WHERE run_id = ? AND key = ?')
        .get(runId, key) as {
        result_json: string;
      };
      return row.result_json;
    } finally {
      db.close();
    }
  },
};

const schema = freshSchemaName('effects');
const postgres: Harness = {
  open: async (home) =>
    Baton.open({ home, pollMs: 20, store: await PostgresStore.open(pgc.server.url, { schema }) }),
  effectRow: async (_home, runId, key) => {
    const { rows } = await pgc.admin.query<{ result: string }>(
      `SELECT result::text AS result FROM "${schema}".effects WHERE run_id = $1 AND key = $2`,
      [runId, key],
    );
    return rows[0]!.result;
  },
};

/** About 1 MB of JSON, as a real API page of records might be. */
const bigValue = {
  rows: Array.from({ length: 10_000 }, (_, i) => ({ id: i, text: `record ${i} ${'x'.repeat(80)}` })),
};
const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
/** A small result that looks like a reference: stored as a file too, so it comes back as it was. */
const lookalike = { $artifact: { sha256: 'a'.repeat(64), size: 1 } };

describe.each([
  ['sqlite', sqlite],
  ['postgres', postgres],
])('effect results over 64 KiB (%s)', (_store, harness) => {
  it('go to a file with size and sha256, the row keeps a reference, a retry gets the value back', async () => {
    const home = mkdtempSync(join(tmpdir(), 'baton-effect-artifacts-'));
    homes.push(home);
    let downloads = 0;
    const wf = defineWorkflow({ name: 'export' }).step(
      'fetch',
      { retry: { maxAttempts: 2, initialDelayMs: 0, maxDelayMs: 0 } },
      async (ctx) => {
        const page = await ctx.effect('download', () => {
          downloads++;
          return bigValue;
        });
        const small = await ctx.effect('small', () => ({ ok: true }));
        const tricky = await ctx.effect('tricky', () => lookalike);
        if (ctx.attempt === 1)
          throw new StepFailure('the connection dropped after the download', 'transient');
        return { rows: page.rows.length, sha256: sha256(JSON.stringify(page)), small, tricky };
      },
    );
    const baton = await harness.open(home);
    try {
      const results = await baton.run(wf, {}, { runId: 'big' });
      // The second attempt found the effect done: the same value, read back, not downloaded again.
      expect(downloads).toBe(1);
      expect(results).toEqual({
        fetch: {
          rows: 10_000,
          sha256: sha256(JSON.stringify(bigValue)),
          small: { ok: true },
          tricky: lookalike,
        },
      });
      expect(JSON.parse(await harness.effectRow(home, 'big', 'small'))).toEqual({ ok: true });
      expect(JSON.parse(await harness.effectRow(home, 'big', 'tricky'))).not.toEqual(lookalike);

      const row = await harness.effectRow(home, 'big', 'download');
      expect(row.length).toBeLessThan(200);
      const ref = (JSON.parse(row) as { $artifact: { sha256: string; size: number } }).$artifact;
      const file = artifactPath(home, ref.sha256);
      const body = readFileSync(file);
      expect(sha256(body)).toBe(ref.sha256);
      expect(statSync(file).size).toBe(ref.size);
      expect(ref.size).toBeGreaterThan(1_000_000);
      expect(JSON.parse(body.toString('utf8'))).toEqual(bigValue);
      // `baton gc` keeps it while the run is stored.
      expect(await baton.store.referencedResultArtifacts()).toContain(ref.sha256);
    } finally {
      await baton.close();
    }
  });
});
