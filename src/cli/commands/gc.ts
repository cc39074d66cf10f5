import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '../../core/errors.js';
import { resolveHome } from '../../runtime/home.js';
import { openStore } from '../../runtime/open-store.js';
import { parseDurationOption } from '../../runtime/parse-values.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';

/** An artifact younger than this may belong to a step that has not committed yet: never removed. */
const ARTIFACT_GRACE_MS = 10 * 60_000;

/** Runs removed per transaction: memory and the write lock stay bounded whatever the history holds. */
const GC_BATCH_RUNS = 500;

/**
 * `baton gc --older-than 30d`: removes runs that finished before then (their steps, events,
 * attempts and logs), a batch at a time, then every result artifact no stored step references any
 * more; with `--vacuum`, gives the freed space back at once (see Store.vacuum).
 */
export async function gcCommand(
  options: GlobalOptions & { olderThan?: string; dryRun?: boolean; vacuum?: boolean },
): Promise<number> {
  if (options.olderThan === undefined) {
    throw new BatonError('INVALID_ARGUMENT', '--older-than is required, e.g. --older-than 30d');
  }
  const age = parseDurationOption(options.olderThan, '--older-than');
  const home = resolveHome(options);
  const dryRun = options.dryRun ?? false;
  const vacuum = (options.vacuum ?? false) && !dryRun;
  const store = await openStore(options, 'read');
  // The ids go to stdout as each batch is removed (`--json`), never all held at once.
  const report = options.json ? new JsonReport() : null;
  let runs = 0;
  let artifactsRemoved = 0;
  let bytesFreed = 0;
  try {
    const before = Date.now() - age;
    let afterId: string | undefined;
    for (;;) {
      const ids = await store.deleteFinishedRuns(before, { dryRun, limit: GC_BATCH_RUNS, afterId });
      if (!dryRun) {
        await Promise.all(
          ids.map((runId) => rm(join(home, 'runs', runId), { recursive: true, force: true })),
        );
      }
      report?.runs(ids);
      runs += ids.length;
      if (ids.length < GC_BATCH_RUNS) break;
      afterId = ids[ids.length - 1];
    }
    const referenced = await store.referencedResultArtifacts();
    for (const file of await artifactFiles(join(home, 'artifacts'))) {
      if (referenced.has(file.sha256) || Date.now() - file.mtimeMs < ARTIFACT_GRACE_MS) continue;
      if (!dryRun) await rm(file.path, { force: true });
      artifactsRemoved++;
      bytesFreed += file.size;
    }
    if (!dryRun) await store.vacuum({ full: vacuum });
  } finally {
    await store.close();
  }
  if (report) report.end({ artifactsRemoved, bytesFreed, dryRun, vacuumed: vacuum });
  else {
    const verb = dryRun ? 'would remove' : 'removed';
    process.stdout.write(
      `${verb} ${runs} finished run(s) and ${artifactsRemoved} unreferenced artifact(s) (${bytesFreed} bytes)${vacuum ? '; database vacuumed' : ''}\n`,
    );
  }
  return EXIT.ok;
}

/**
 * The `--json` report, `{ runs: [...ids], artifactsRemoved, bytesFreed, dryRun, vacuumed }` as
 * printJson writes it, its ids written as they come. A failure part way leaves it unterminated
 * (and the exit code and stderr say so).
 */
class JsonReport {
  private count = 0;

  runs(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const items = ids.map((id) => `\n    ${JSON.stringify(id)}`).join(',');
    process.stdout.write(`${this.count === 0 ? '{\n  "runs": [' : ','}${items}`);
    this.count += ids.length;
  }

  end(rest: Record<string, unknown>): void {
    const tail = JSON.stringify(rest, null, 2).slice(1);
    process.stdout.write(`${this.count === 0 ? '{\n  "runs": [],' : '\n  ],'}${tail}\n`);
  }
}

async function artifactFiles(
  root: string,
): Promise<{ path: string; sha256: string; size: number; mtimeMs: number }[]> {
  const files: { path: string; sha256: string; size: number; mtimeMs: number }[] = [];
  const shards = await readdir(root).catch(() => [] as string[]);
  for (const shard of shards) {
    for (const name of await readdir(join(root, shard)).catch(() => [] as string[])) {
      if (!/^[0-9a-f]{64}$/.test(name)) continue;
      const path = join(root, shard, name);
      const info = await stat(path);
      files.push({ path, sha256: name, size: info.size, mtimeMs: info.mtimeMs });
    }
  }
  return files;
}
