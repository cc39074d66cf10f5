import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '../../core/errors.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import { type GlobalOptions, parseDurationOption, resolveHome } from '../home.js';
import { openStore } from '../open-store.js';

/** An artifact younger than this may belong to a step that has not committed yet: never removed. */
const ARTIFACT_GRACE_MS = 10 * 60_000;

interface GcReport {
  runs: string[];
  artifactsRemoved: number;
  bytesFreed: number;
  dryRun: boolean;
}

/**
 * `baton gc --older-than 30d`: removes runs that finished before then (their steps, events,
 * attempts and logs), then every result artifact no stored step references any more.
 */
export async function gcCommand(
  options: GlobalOptions & { olderThan?: string; dryRun?: boolean },
): Promise<number> {
  if (options.olderThan === undefined) {
    throw new BatonError('INVALID_ARGUMENT', '--older-than is required, e.g. --older-than 30d');
  }
  const age = parseDurationOption(options.olderThan, '--older-than');
  const home = resolveHome(options);
  const dryRun = options.dryRun ?? false;
  const store = await openStore(options, 'read');
  const report: GcReport = { runs: [], artifactsRemoved: 0, bytesFreed: 0, dryRun };
  try {
    report.runs = await store.deleteFinishedRuns(Date.now() - age, { dryRun });
    for (const runId of report.runs) {
      if (!dryRun) await rm(join(home, 'runs', runId), { recursive: true, force: true });
    }
    const referenced = await store.referencedResultArtifacts();
    for (const file of await artifactFiles(join(home, 'artifacts'))) {
      if (referenced.has(file.sha256) || Date.now() - file.mtimeMs < ARTIFACT_GRACE_MS) continue;
      if (!dryRun) await rm(file.path, { force: true });
      report.artifactsRemoved++;
      report.bytesFreed += file.size;
    }
  } finally {
    await store.close();
  }
  if (options.json) printJson(report);
  else {
    const verb = dryRun ? 'would remove' : 'removed';
    process.stdout.write(
      `${verb} ${report.runs.length} finished run(s) and ${report.artifactsRemoved} unreferenced artifact(s) (${report.bytesFreed} bytes)\n`,
    );
  }
  return EXIT.ok;
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
