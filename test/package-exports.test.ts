/**
 * The package's public surface, listed: what `import … from 'baton-steps'` and
 * `'baton-steps/testing'` give (the built entries package.json `exports` names). A change to either
 * list is a deliberate change to the public API: update the list here, and the README.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  exports: Record<string, { default: string; types: string }>;
};

async function exportsOf(subpath: string): Promise<string[]> {
  const entry = manifest.exports[subpath];
  if (!entry) throw new Error(`package.json exports has no ${subpath}`);
  const module = (await import(pathToFileURL(join(repoRoot, entry.default)).href)) as object;
  return Object.keys(module).sort();
}

describe('the public surface', () => {
  it('the package root: the API, both stores, errors, plan loading and the model-call harness', async () => {
    expect(await exportsOf('.')).toEqual([
      'Baton',
      'BatonError',
      'DEFAULT_PRICES',
      'FAILURE_CLASSES',
      'ModelCallError',
      'PostgresStore',
      'RecoveryBudget',
      'RunNotSucceededError',
      'SqliteStore',
      'StepFailure',
      'ToolError',
      'Workflow',
      'callModelWithRecovery',
      'classifyModelError',
      'createAnthropicProvider',
      'createOpenAiProvider',
      'defaultCompaction',
      'defineWorkflow',
      'isBatonError',
      'loadPlanFile',
      'parsePlanText',
      'resolveCapabilities',
      'runAgent',
      'systemClock',
      'validatePlanObject',
    ]);
  });

  it('baton-steps/testing: the mock provider and a fast clock, not in the root', async () => {
    const testing = await exportsOf('./testing');
    expect(testing).toEqual(['MemoryEffectLedger', 'scaledClock', 'startMockLlmServer', 'systemClock']);
    const root = await exportsOf('.');
    for (const name of ['startMockLlmServer', 'scaledClock', 'MemoryEffectLedger'])
      expect(root).not.toContain(name);
    // Types are where the JavaScript is.
    for (const entry of Object.values(manifest.exports)) {
      expect(readFileSync(join(repoRoot, entry.types), 'utf8').length).toBeGreaterThan(0);
    }
  });
});
