/** Workspace checkpoints (`checkpoint: workspace`) need the git program. */
import { spawnSync } from 'node:child_process';
import { describe, it } from 'vitest';

/** Whether `git` runs here. */
export function gitAvailable(): boolean {
  return spawnSync('git', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * A describe block that needs git: skipped with the reason where it is missing, and a failure in
 * CI (CI=true), where .ci/run installs it.
 */
export function describeWithGit(name: string, body: () => void): void {
  if (gitAvailable()) describe(name, body);
  else if (process.env.CI === 'true') {
    describe(name, () => {
      it('can run git', () => {
        throw new Error('git is not on PATH; .ci/run installs it');
      });
    });
  } else describe.skip(`${name} (git is not on PATH here)`, body);
}
