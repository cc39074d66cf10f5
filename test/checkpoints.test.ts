/**
 * Small checkpoints: large step results go to the content-addressed artifact store, the run's
 * stored state stays small, and later steps still see the whole result; `baton gc` removes
 * finished runs and unreferenced artifacts, and nothing else.
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { storedRunBytes } from '../scripts/stored-run-bytes.mjs';
import { artifactPath, fitsInline } from '../src/engine/result-artifacts.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { repoRoot } from './helpers/cli.js';

const exec = promisify(execFile);
const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});
const newHome = () => {
  const home = mkdtempSync(join(tmpdir(), 'baton-ckpt-'));
  homes.push(home);
  return home;
};

const sizes = defineWorkflow<{ bytes: string }>({ name: 'sizes', inputs: { bytes: null } })
  .step('produce', (ctx) => 'x'.repeat(Number(ctx.inputs.bytes)))
  .step('measure', { dependsOn: ['produce'] }, (ctx) => ({
    length: ctx.results.produce.length,
    tail: ctx.results.produce.slice(-3),
  }));

describe('small checkpoints', () => {
  it.each([
    [1024, false],
    [1024 * 1024, true],
    [50 * 1024 * 1024, true],
  ])('a %i-byte result: later steps see all of it; the stored state stays under 100 KB', async (bytes, offloaded) => {
    const home = newHome();
    const baton = Baton.open({ home });
    try {
      const results = await baton.run(sizes, { bytes: String(bytes) }, { runId: 'big' });
      expect(results.measure).toEqual({ length: bytes, tail: 'xxx' });
      expect(results.produce.length).toBe(bytes);
    } finally {
      await baton.close();
    }
    expect(storedRunBytes(home, 'big')).toBeLessThan(100_000);
    expect(existsSync(join(home, 'artifacts'))).toBe(offloaded);
  });
});

describe('which results stay inline', () => {
  // fitsInline decides most results from their length alone: it must agree with the bytes of the
  // JSON that would be stored, whatever the characters (escapes take up to 6 bytes, UTF-8 up to 3).
  const texts = [
    '',
    'x'.repeat(40),
    '\u0001'.repeat(16),
    '"\\'.repeat(20),
    'é'.repeat(30),
    '日本'.repeat(15),
    '😀'.repeat(12),
  ];
  const values: unknown[] = [undefined, 'v'.repeat(10), '\n'.repeat(10), { nested: ['a', 1] }, 42];
  it('keeps a result inline exactly when its JSON fits the limit', () => {
    for (const summary of texts) {
      for (const value of values) {
        const outcome = {
          ok: true as const,
          summary,
          outputs: [],
          ...(value === undefined ? {} : { value }),
        };
        const bytes = Buffer.byteLength(
          JSON.stringify({ summary, ...(value === undefined ? {} : { value }) }),
        );
        for (const limit of [bytes - 1, bytes, bytes + 1, 1000]) {
          expect(
            fitsInline(outcome, limit),
            `${JSON.stringify(summary)} / ${JSON.stringify(value)} at ${limit}`,
          ).toBe(bytes <= limit);
        }
      }
    }
  });
});

describe('baton gc', () => {
  it('removes runs finished before the cutoff, their logs and unreferenced artifacts; keeps the rest', async () => {
    const home = newHome();
    const baton = Baton.open({ home });
    try {
      await baton.run(sizes, { bytes: String(200_000) }, { runId: 'old' });
      await baton.run(sizes, { bytes: String(300_000) }, { runId: 'recent' });
    } finally {
      await baton.close();
    }
    const db = new Database(join(home, 'baton.db'));
    const refs = db
      .prepare(
        "SELECT run_id, json_extract(result_json, '$.ref.sha256') AS sha FROM steps WHERE step_id = 'produce'",
      )
      .all() as { run_id: string; sha: string }[];
    db.prepare("UPDATE runs SET finished_at = ? WHERE id = 'old'").run(Date.now() - 40 * 86_400_000);
    db.close();
    const shaOf = (runId: string) => refs.find((r) => r.run_id === runId)!.sha;
    // An orphan from long ago (its step never committed) and a fresh one (a step may be committing it).
    const stale = artifactPath(home, 'a'.repeat(64));
    const fresh = artifactPath(home, 'b'.repeat(64));
    for (const path of [stale, fresh]) {
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, '{}');
    }
    const dayAgo = new Date(Date.now() - 86_400_000);
    utimesSync(stale, dayAgo, dayAgo);
    // The old run's artifact was written when that run ran, long ago.
    utimesSync(artifactPath(home, shaOf('old')), dayAgo, dayAgo);
    mkdirSync(join(home, 'runs', 'old'), { recursive: true });

    const cli = (args: string[]) =>
      exec(process.execPath, [join(repoRoot, 'dist/cli/main.js'), '--home', home, ...args]);
    const dry = JSON.parse((await cli(['gc', '--older-than', '30d', '--dry-run', '--json'])).stdout);
    expect(dry).toMatchObject({ runs: ['old'], artifactsRemoved: 1, dryRun: true });
    expect(existsSync(artifactPath(home, shaOf('old')))).toBe(true);

    const report = JSON.parse((await cli(['gc', '--older-than', '30d', '--json'])).stdout);
    expect(report).toMatchObject({ runs: ['old'], artifactsRemoved: 2, dryRun: false });
    expect(existsSync(artifactPath(home, shaOf('old')))).toBe(false);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    expect(existsSync(artifactPath(home, shaOf('recent')))).toBe(true);
    expect(existsSync(join(home, 'runs', 'old'))).toBe(false);
    const status = JSON.parse((await cli(['status', '--json'])).stdout) as { id: string }[];
    expect(status.map((r) => r.id)).toEqual(['recent']);
    expect(statSync(artifactPath(home, shaOf('recent'))).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(home, 'artifacts')).length).toBeGreaterThan(0);
  });
});
