import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { redactValue } from '../core/redact.js';
import { forgetCheckpoints, pruneCheckpoints } from '../executors/workspace-checkpoints.js';
import type { CommandContext } from './commands/context.js';
import { planSecrets } from './plan-secrets.js';

/**
 * `baton gc`: runs that finished before a time removed (their steps, events, attempts, logs and
 * workspace checkpoints), a batch at a time, then every result artifact no stored step references
 * any more; the freed space given back (see Store.vacuum). It deletes what the store holds as it
 * is (`ctx.unmasked`: a run's id is its key); the ids it reports are masked as every answer is.
 */

/** An artifact younger than this may belong to a step that has not committed yet: never removed. */
const ARTIFACT_GRACE_MS = 10 * 60_000;

/** Runs removed per transaction: memory and the write lock stay bounded whatever the history holds. */
const GC_BATCH_RUNS = 500;

export interface CollectRequest {
  /** Runs that finished more than this long ago go. */
  olderThanMs: number;
  /** Only count what would go. */
  dryRun?: boolean;
  /** Then give the freed space back at once (SQLite: VACUUM). Never with dryRun. */
  vacuum?: boolean;
  /** The ids of each batch of runs removed (or that would be), as they go: never all held at once. */
  onRuns?: (ids: readonly string[]) => void;
}

export interface Collected {
  runs: number;
  artifactsRemoved: number;
  bytesFreed: number;
  dryRun: boolean;
  vacuumed: boolean;
  /** Removed runs whose workspace checkpoints (`checkpoint: workspace`) were dropped with them. */
  checkpointRuns: number;
}

/** Removes old finished runs and unreferenced artifacts (see above). */
export async function collectGarbage(ctx: CommandContext, request: CollectRequest): Promise<Collected> {
  const dryRun = request.dryRun ?? false;
  const vacuumed = (request.vacuum ?? false) && !dryRun;
  const store = ctx.unmasked;
  const processSecrets = planSecrets(ctx);
  const before = ctx.now() - request.olderThanMs;
  let runs = 0;
  let checkpointRuns = 0;
  let afterId: string | undefined;
  for (;;) {
    const ids = await store.deleteFinishedRuns(before, { dryRun, limit: GC_BATCH_RUNS, afterId });
    if (!dryRun) {
      await Promise.all(
        ids.map((runId) => rm(join(ctx.home, 'runs', runId), { recursive: true, force: true })),
      );
      checkpointRuns += await forgetCheckpoints(ctx.home, ids);
    }
    request.onRuns?.(redactValue(ids, processSecrets));
    runs += ids.length;
    if (ids.length < GC_BATCH_RUNS) break;
    afterId = ids[ids.length - 1];
  }
  let artifactsRemoved = 0;
  let bytesFreed = 0;
  const referenced = await store.referencedResultArtifacts();
  for (const file of await artifactFiles(join(ctx.home, 'artifacts'))) {
    if (referenced.has(file.sha256) || ctx.now() - file.mtimeMs < ARTIFACT_GRACE_MS) continue;
    if (!dryRun) await rm(file.path, { force: true });
    artifactsRemoved++;
    bytesFreed += file.size;
  }
  if (checkpointRuns > 0) await pruneCheckpoints(ctx.home);
  if (!dryRun) await store.vacuum({ full: vacuumed });
  return { runs, artifactsRemoved, bytesFreed, dryRun, vacuumed, checkpointRuns };
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
