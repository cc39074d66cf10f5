import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attemptBoundMs, CLI_START_MS } from './helpers/agent-cli-bounds.js';
import { agentStepSuite } from './helpers/agent-step-suite.js';
import {
  agentTurn,
  attemptTempFolders,
  cliCase,
  cliCommand,
  mockPerTest,
  runPlan,
  shellCall,
  stepAttempts,
} from './helpers/agent-steps.js';

// The real gemini CLI (node_modules/.bin/gemini) driven by the baton binary against the mock model server.
agentStepSuite('gemini');

describe('gemini through baton: its temp files', () => {
  const serve = mockPerTest();

  it('what it writes in its TMPDIR (an API error report, a stopped shell command) goes with the attempt', async () => {
    const server = await serve([
      // gemini reports the error in $TMPDIR/gemini-client-error-*.json.
      { fault: 'fatal', status: 401, when: agentTurn('FAULT-401'), repeat: 'forever' },
      // Stopped at the step timeout while its shell tool runs: $TMPDIR/gemini-shell-* stays.
      {
        fault: 'ok',
        when: agentTurn('HANG-HERE', { hasToolResult: false }),
        reply: { toolCalls: [shellCall('gemini', 'tail -f /dev/null')] },
      },
      {
        fault: 'stall',
        ms: 600_000,
        when: agentTurn('HANG-HERE', { hasToolResult: true }),
        repeat: 'forever',
      },
    ]);
    const c = cliCase('gemini', server);
    const batonTmp = join(c.dir, 'tmp');
    mkdirSync(batonTmp);
    c.env.TMPDIR = batonTmp;
    const { run } = await runPlan(c, {
      name: 'gemini-temp',
      defaults: { agent: { command: cliCommand('gemini', { shell: true }) }, retry: { maxAttempts: 1 } },
      limits: { concurrency: 2 },
      steps: [
        { id: 'auth', instruction: 'FAULT-401', timeoutMs: attemptBoundMs('gemini') },
        // gemini must reach its shell tool before the timeout stops it: its start is the bound.
        { id: 'hang', instruction: 'HANG-HERE: run the long command', timeoutMs: CLI_START_MS.gemini },
      ],
    });
    expect((await stepAttempts(c, run.id, 'auth'))[0]?.failureClass).toBe('fatal');
    const [hang] = await stepAttempts(c, run.id, 'hang');
    expect(hang?.message).toMatch(`timed out after ${CLI_START_MS.gemini} ms`);
    // The model asked for the shell command before the attempt was stopped.
    expect(server.requests.some((r) => r.scriptIndex === 1)).toBe(true);
    expect(readdirSync(batonTmp).filter((name) => name.startsWith('gemini-'))).toEqual([]);
    expect(attemptTempFolders(c.home)).toEqual([]);
  }, 240_000);
});
