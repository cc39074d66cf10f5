/**
 * The same end-to-end scenarios for every real agent CLI (see agent-steps.ts): a 3-step plan with
 * summaries and usage, a required output written through the CLI's own tool, transient faults with
 * the CLI's own retries capped, a fatal 401, and a hang killed at the step timeout with no process
 * of the attempt left.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { attemptBoundMs, CLI_START_MS, testBoundMs } from './agent-cli-bounds.js';
import {
  agentTurn,
  cliCase,
  cliCommand,
  mockPerTest,
  processesOfRun,
  requestsDuring,
  runPlan,
  shellCall,
  stepAttempts,
  writeCall,
} from './agent-steps.js';
import { waitFor } from './cli.js';
import type { AgentCli } from './mock-cli.js';
import { stepOf } from './plans.js';

export function agentStepSuite(cli: AgentCli): void {
  const serve = mockPerTest();
  // Where the test is not about timeouts: a start and a few turns on a loaded machine.
  const attemptMs = attemptBoundMs(cli);

  // Long enough for three attempts one after the other (the 3-step plan).
  describe(`${cli} through baton`, { timeout: testBoundMs(cli, 3) }, () => {
    it('runs a 3-step plan: each summary is the answer, passed on to the next prompt; usage is counted', async () => {
      const mock = await serve([
        { fault: 'ok', when: agentTurn('STEP-ONE'), reply: { text: 'first answer' } },
        { fault: 'ok', when: agentTurn('STEP-TWO'), reply: { text: 'second answer' } },
        { fault: 'ok', when: agentTurn('STEP-THREE'), reply: { text: 'third answer' } },
      ]);
      const c = cliCase(cli, mock);
      const { result, run } = await runPlan(c, {
        name: `${cli}-three`,
        defaults: { agent: { command: cliCommand(cli) }, timeoutMs: attemptMs },
        steps: [
          { id: 'one', instruction: 'STEP-ONE: research' },
          { id: 'two', dependsOn: ['one'], instruction: 'STEP-TWO: build on {{steps.one.summary}}' },
          { id: 'three', dependsOn: ['two'], instruction: 'STEP-THREE: finish {{steps.two.summary}}' },
        ],
      });
      expect(result.code, result.stderr).toBe(0);
      expect(run.status).toBe('succeeded');
      for (const [id, answer] of [
        ['one', 'first answer'],
        ['two', 'second answer'],
        ['three', 'third answer'],
      ] as const) {
        const [attempt] = await stepAttempts(c, run.id, id);
        expect(attempt?.summary).toBe(answer);
        expect(attempt?.usage?.inputTokens).toBeGreaterThan(0);
        expect(attempt?.usage?.outputTokens).toBeGreaterThan(0);
      }
      // The next prompt carries the answer, not the CLI's JSON.
      const second = mock.requests.find((r) => r.scriptIndex === 1);
      expect(second?.userText).toContain('build on first answer');
      expect(second?.userText).not.toContain('"session_id"');
      expect(run.usage.inputTokens).toBeGreaterThan(0);
    });

    it('records a required output the CLI wrote through its own tool', async () => {
      const mock = await serve([]);
      const c = cliCase(cli, mock);
      const content = `written by ${cli} for baton`;
      mock.enqueue(
        {
          fault: 'ok',
          when: agentTurn('WRITE-IT', { hasToolResult: false }),
          reply: { toolCalls: [writeCall(cli, `${c.workspace}/report.md`, content)] },
        },
        {
          fault: 'ok',
          when: agentTurn('WRITE-IT', { hasToolResult: true }),
          reply: { text: 'report written' },
        },
      );
      const { result, run } = await runPlan(c, {
        name: `${cli}-write`,
        defaults: { agent: { command: cliCommand(cli) }, timeoutMs: attemptMs },
        steps: [{ id: 'write', instruction: 'WRITE-IT: write report.md', requiredOutputs: ['report.md'] }],
      });
      expect(result.code, result.stderr).toBe(0);
      expect(run.status).toBe('succeeded');
      const [attempt] = await stepAttempts(c, run.id, 'write');
      expect(attempt?.summary).toBe('report written');
      expect(attempt?.outputs).toEqual([
        {
          path: 'report.md',
          size: Buffer.byteLength(content),
          sha256: createHash('sha256').update(content).digest('hex'),
        },
      ]);
    });

    it('429, 529 and 500 are transient: Baton backs off and retries, the CLI retries at most once itself', async () => {
      const mock = await serve([
        { fault: 'rate_limit', retryAfterS: 1, when: agentTurn('FAULT-429'), repeat: 'forever' },
        { fault: 'server_error', status: 529, when: agentTurn('FAULT-529'), repeat: 'forever' },
        { fault: 'server_error', status: 500, when: agentTurn('FAULT-500'), repeat: 'forever' },
      ]);
      const c = cliCase(cli, mock);
      const { run } = await runPlan(c, {
        name: `${cli}-faults`,
        defaults: {
          agent: { command: cliCommand(cli) },
          timeoutMs: attemptMs,
          retry: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 50 },
        },
        limits: { noProgressAfter: 5, concurrency: 3 },
        steps: [
          { id: 'f429', instruction: 'FAULT-429' },
          { id: 'f529', instruction: 'FAULT-529' },
          { id: 'f500', instruction: 'FAULT-500' },
        ],
      });
      expect(run.status).toBe('blocked');
      for (const [index, id] of ['f429', 'f529', 'f500'].entries()) {
        const tries = await stepAttempts(c, run.id, id);
        expect(
          tries.map((t) => t.failureClass),
          id,
        ).toEqual(['transient', 'transient']);
        for (const attempt of tries) {
          const sent = requestsDuring(mock, attempt, index).length;
          // One request, plus at most the one retry Baton leaves the CLI.
          expect(sent, `${id} attempt ${attempt.attempt}`).toBeGreaterThanOrEqual(1);
          expect(sent, `${id} attempt ${attempt.attempt}`).toBeLessThanOrEqual(2);
        }
        // Baton's own backoff: the second attempt started after the first ended.
        expect(tries[1]!.startedAt!).toBeGreaterThanOrEqual(tries[0]!.endedAt!);
        expect(tries[1]!.message).not.toMatch(/\{"type"|"uuid"/);
      }
    });

    it('401 is fatal at once, with the provider message', async () => {
      const mock = await serve([
        { fault: 'fatal', status: 401, when: agentTurn('FAULT-401'), repeat: 'forever' },
      ]);
      const c = cliCase(cli, mock);
      const { run } = await runPlan(c, {
        name: `${cli}-auth`,
        defaults: {
          agent: { command: cliCommand(cli) },
          timeoutMs: attemptMs,
          retry: { maxAttempts: 3, initialDelayMs: 10 },
        },
        steps: [{ id: 'auth', instruction: 'FAULT-401' }],
      });
      expect(run.status).toBe('blocked');
      const tries = await stepAttempts(c, run.id, 'auth');
      expect(tries.map((t) => t.failureClass)).toEqual(['fatal']);
      expect(tries[0]?.message).toMatch(/api key|authenticat|credential|401/i);
      expect(stepOf(run, 'auth').blockedReason ?? '').not.toBe('');
    });

    it('a hang, with a long shell command running through its own tool, is killed at the step timeout; nothing of the attempt is left', async () => {
      const marker = `baton-long-${cli}-${Date.now()}`;
      const mock = await serve([
        {
          fault: 'ok',
          when: agentTurn('HANG-HERE', { hasToolResult: false }),
          reply: { toolCalls: [shellCall(cli, `tail -f /dev/null # ${marker}`)] },
        },
        {
          fault: 'stall',
          ms: 600_000,
          when: agentTurn('HANG-HERE', { hasToolResult: true }),
          repeat: 'forever',
        },
      ]);
      const c = cliCase(cli, mock);
      // The CLI must reach its shell tool before the timeout stops it: its start is the bound.
      const timeoutMs = CLI_START_MS[cli];
      let seen: { pid: number; cmdline: string }[] = [];
      let ended = false;
      const running = runPlan(c, {
        name: `${cli}-hang`,
        defaults: {
          agent: { command: cliCommand(cli, { shell: true }) },
          timeoutMs,
          retry: { maxAttempts: 1 },
        },
        steps: [{ id: 'hang', instruction: 'HANG-HERE: run the long command' }],
      });
      void running.finally(() => {
        ended = true;
      });
      // The shell command runs, carrying the attempt's marker (so it can be found once the CLI is gone).
      await waitFor(
        () => {
          seen = readdirRuns(c.home)
            .flatMap((id) => processesOfRun(id))
            .filter((p) => p.cmdline.includes(marker));
          if (seen.length === 0 && ended) {
            // The attempt is over and the command never ran: the CLI did not get as far as its tool.
            throw new Error(
              `the run ended before the ${cli} shell tool ran the long command: ${mock.requests.length} model request(s) (the tool call is the first answer) within the ${timeoutMs} ms step timeout`,
            );
          }
          return seen.length > 0;
        },
        timeoutMs + 100_000,
        `the ${cli} shell tool running a long command with the attempt's marker`,
      );
      const { run } = await running;
      const [attempt] = await stepAttempts(c, run.id, 'hang');
      expect(attempt?.failureClass).toBe('transient');
      expect(attempt?.message).toMatch(new RegExp(`timed out after ${timeoutMs} ms`));
      expect(processesOfRun(run.id)).toEqual([]);
      for (const { pid } of seen) expect(processesOfRun(run.id).some((p) => p.pid === pid)).toBe(false);
    });
  });
}

/** Run ids with attempt logs under a home (the run's id is known only once `baton run` prints it). */
function readdirRuns(home: string): string[] {
  try {
    return readdirSync(`${home}/runs`);
  } catch {
    return [];
  }
}
