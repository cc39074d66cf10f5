import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Entries looked at, at most, per scan: a larger workspace is judged by its first ones. */
export const WORKSPACE_SCAN_LIMIT = 20_000;
/** Folders never looked into: what a tool rewrites on its own, and the user's version control. */
const SKIPPED = new Set(['.git', 'node_modules']);

/**
 * The latest modification time (ms since the epoch) of anything under `folder`, at most
 * WORKSPACE_SCAN_LIMIT entries, symlinks not followed, `.git`, `node_modules` and the `ignored`
 * paths (the Baton home, whose database and logs change while the agent is silent) skipped: the stall
 * watchdog's second sign of life (run-process.ts), looked at only while the agent is silent.
 * 0 when nothing could be read.
 */
export async function latestChangeUnder(folder: string, ignored: readonly string[] = []): Promise<number> {
  const skip = new Set(ignored);
  let latest = 0;
  let seen = 0;
  const pending = [folder];
  while (pending.length > 0 && seen < WORKSPACE_SCAN_LIMIT) {
    const dir = pending.pop()!;
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > WORKSPACE_SCAN_LIMIT) break;
      const path = join(dir, entry.name);
      try {
        latest = Math.max(latest, (await lstat(path)).mtimeMs);
      } catch {
        continue; // gone meanwhile
      }
      if (skip.has(path)) continue;
      if (entry.isDirectory() && !SKIPPED.has(entry.name)) pending.push(path);
    }
  }
  return latest;
}
