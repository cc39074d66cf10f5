import { type FSWatcher, mkdirSync, readdirSync, realpathSync, rmSync, watch } from 'node:fs';
import { join } from 'node:path';
import type { AgentProfile } from './agent-profiles/types.js';

interface AttemptTempDir {
  /** `env` with TMPDIR, TMP and TEMP pointing into the attempt's own temp folder. */
  env: NodeJS.ProcessEnv;
  /** The folder, for the sandbox to bind writable (empty: the profile asks for none). */
  attemptPaths: string[];
  /** Removes the folder, whatever is in it, and the CLI's stray files named after its entries. */
  cleanup: () => void;
}

/**
 * A temp folder of the attempt's own for a CLI that leaves its scratch state behind when it is
 * stopped (openclaw: about 2.5 MB per attempt in `$TMPDIR/openclaw-agent-exec-*`), beside the
 * attempt log as `attempt-<n>.tmp`, removed when the attempt ends however it ends. Its entries are
 * watched while the CLI runs, so that what the CLI made and removed itself still names the stray
 * files it keeps elsewhere (see AgentProfile.attemptTemp).
 */
export function attemptTempDir(
  profile: AgentProfile,
  env: NodeJS.ProcessEnv,
  attemptBase: string,
): AttemptTempDir {
  if (profile.attemptTemp === undefined) return { env, attemptPaths: [], cleanup: () => {} };
  const strays = profile.attemptTemp.strays;
  const dir = `${attemptBase}.tmp`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const real = realpathSync(dir);
  const seen = new Set<string>();
  let watcher: FSWatcher | undefined;
  if (strays !== undefined) {
    try {
      watcher = watch(dir, (_event, name) => {
        if (name) seen.add(String(name));
      });
      watcher.on('error', () => {});
    } catch {
      // No inotify watch left: what is still in the folder at the end names the strays.
    }
  }
  const cleanup = () => {
    watcher?.close();
    try {
      for (const name of readdirSync(dir)) seen.add(name);
    } catch {}
    for (const stray of strays?.(real, [...seen], process.getuid?.()) ?? []) removeMatching(stray);
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Left in the home beside the attempt log: `baton gc` removes the run's folder.
    }
  };
  return { env: { ...env, TMPDIR: dir, TMP: dir, TEMP: dir }, attemptPaths: [dir], cleanup };
}

function removeMatching(stray: { folder: string; nameIncludes: string }): void {
  let names: string[] = [];
  try {
    names = readdirSync(stray.folder);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.includes(stray.nameIncludes)) continue;
    try {
      rmSync(join(stray.folder, name), { force: true });
    } catch {}
  }
}
