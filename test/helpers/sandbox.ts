/** Tests of confined agent steps (sandbox: workspace) need a bubblewrap that can start a sandbox. */
import { describe, it } from 'vitest';
import { probeSandbox } from '../../src/executors/sandbox.js';

/**
 * A describe block that needs bwrap: skipped with the reason where it cannot run, and a failure
 * in CI (CI=true), where .ci/run installs bubblewrap.
 */
export function describeWithBwrap(name: string, body: () => void): void {
  const probe = probeSandbox();
  if (probe.ok) {
    describe(name, body);
  } else if (process.env.CI === 'true') {
    describe(name, () => {
      it('can confine agents with bubblewrap', () => {
        throw new Error(`${probe.problem} (fix: ${probe.fix}); .ci/run installs bubblewrap`);
      });
    });
  } else {
    describe.skip(`${name} (no sandbox here: ${probe.problem})`, body);
  }
}
