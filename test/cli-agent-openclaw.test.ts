import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';
import { agentStepSuite } from './helpers/agent-step-suite.js';
import { openclawEntry, openclawNode } from './helpers/mock-cli.js';

// The real openclaw 2026.9 (test/hosts/openclaw, installed by the root package's prepare script),
// run with the Node 26 it needs, driven by the baton binary (on Node 20) against the mock.
const installed = existsSync(openclawNode) && existsSync(openclawEntry);
if (installed) agentStepSuite('openclaw');
else if (process.env.CI === 'true') {
  describe('openclaw', () => {
    it('is installed', () => {
      throw new Error(
        `openclaw is not installed at ${openclawEntry}: npm ci runs npm ci --prefix test/hosts/openclaw`,
      );
    });
  });
} else {
  describe.skip('openclaw (not installed: run npm ci, whose prepare script installs test/hosts/openclaw)', () => {
    it('runs plans', () => {});
  });
}
