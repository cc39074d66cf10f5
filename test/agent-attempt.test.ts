import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runAgentAttempt } from '../src/executors/agent-attempt.js';
import { installNpmCli } from './helpers/agent-world.js';
import { removeTempDirs, tempDir } from './helpers/cli.js';

afterAll(() => removeTempDirs());

it('a claude result record of 300 KB is read whole: its answer is the summary and its usage counts', async () => {
  const dir = tempDir('baton-agent-attempt-');
  // A stand-in for claude (installed where npm puts it) that prints a long answer as claude -p
  // --output-format json does.
  const claude = installNpmCli(
    dir,
    'claude',
    `#!${process.execPath}
const answer = 'x'.repeat(300_000) + ' THE END';
process.stdout.write(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: answer,
  total_cost_usd: 1.25, usage: { input_tokens: 50_000, output_tokens: 20_000 } }) + '\\n');
`,
  );
  const result = await runAgentAttempt({
    agent: { command: [claude, '-p', '--output-format', 'json'], promptVia: 'arg' },
    prompt: 'write a lot',
    workspace: dir,
    requiredOutputs: [],
    env: { PATH: process.env.PATH },
    timeoutMs: 60_000,
    killGraceMs: 1000,
    logPath: join(dir, 'attempt-1.log'),
  });
  expect(result.ok).toBe(true);
  if (!result.ok) return;
  expect(result.summary.endsWith('x THE END')).toBe(true);
  expect(result.summary).not.toContain('"usage"');
  expect(result.report.usage).toMatchObject({ inputTokens: 50_000, outputTokens: 20_000, costUsd: 1.25 });
});
