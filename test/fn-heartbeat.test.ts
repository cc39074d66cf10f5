/**
 * A function step's `heartbeatTimeoutMs` and `ctx.heartbeat()`: a function that stops beating is
 * stopped (its signal aborted) and its attempt retried as transient with the stall message, a
 * function that keeps beating runs past the heartbeat timeout, an unsafe one is handed to a person,
 * and only function steps may have the field.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlanInvalidError } from '../src/core/plan/issues.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});
const open = () => {
  const home = mkdtempSync(join(tmpdir(), 'baton-beat-'));
  homes.push(home);
  return Baton.open({ home, pollMs: 20 });
};

/** Resolves when `signal` aborts, with its reason. */
const aborted = (signal: AbortSignal) =>
  new Promise<unknown>((resolve) =>
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
  );

describe('function heartbeats', () => {
  it('stops a function that went heartbeatTimeoutMs without a beat, and the retry that beats runs on past it', async () => {
    const reasons: unknown[] = [];
    const wf = defineWorkflow({ name: 'crawl' }).step(
      'crawl',
      { heartbeatTimeoutMs: '1s', retry: { maxAttempts: 2, initialDelayMs: 0 } },
      async (ctx) => {
        if (ctx.attempt === 1) {
          ctx.heartbeat('starting');
          // Hangs: only its signal ends it.
          const reason = await aborted(ctx.signal);
          reasons.push(reason);
          throw reason;
        }
        // Beats for three times the heartbeat timeout: alive all along.
        const until = Date.now() + 3000;
        let pages = 0;
        while (Date.now() < until) {
          ctx.heartbeat(`page ${++pages}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return { pages };
      },
    );
    const baton = open();
    baton.register(wf);
    const worker = baton.worker();
    try {
      // The counters count from the first scrape on.
      await baton.metrics();
      const { runId } = await baton.start(wf, {});
      const results = await baton.result(wf, runId);
      expect((results.crawl as { pages: number }).pages).toBeGreaterThan(0);
      const attempts = await baton.store.getAttempts(runId, 'crawl');
      expect(attempts).toHaveLength(2);
      expect(attempts[0]).toMatchObject({ outcome: 'failed', failureClass: 'transient' });
      expect(attempts[0]!.message).toBe(
        'no heartbeat for 1s (heartbeatTimeoutMs); it was stopped through its signal',
      );
      expect(attempts[1]).toMatchObject({ outcome: 'succeeded' });
      // The function was told why through its signal.
      expect(reasons).toHaveLength(1);
      expect(reasons[0]).toMatchObject({
        name: 'TimeoutError',
        message: 'no heartbeat for 1s (heartbeatTimeoutMs)',
      });
      const events = await baton.store.getEvents(runId);
      const stalling = events.filter((event) => event.type === 'step.stalling');
      expect(stalling).toHaveLength(1);
      expect(stalling[0]).toMatchObject({ stepId: 'crawl', attempt: 1, stallTimeoutMs: 1000 });
      expect(events.find((event) => event.type === 'step.heartbeat')).toMatchObject({ note: 'starting' });
      // /metrics counts it as a stall.
      expect(await baton.metrics()).toMatch(/^baton_attempts_stalled_total 1$/m);
    } finally {
      await worker.stop(0);
      await baton.close();
    }
  });

  it('hands an unsafe function that stopped beating to a person (unknown_outcome), not to a retry', async () => {
    let calls = 0;
    const wf = defineWorkflow({ name: 'charge' }).step(
      'charge',
      { heartbeatTimeoutMs: '1s', sideEffect: 'unsafe', retry: { maxAttempts: 3, initialDelayMs: 0 } },
      async (ctx) => {
        calls++;
        throw await aborted(ctx.signal);
      },
    );
    const baton = open();
    baton.register(wf);
    const worker = baton.worker();
    try {
      const { runId } = await baton.start(wf, {});
      await expect(baton.result(wf, runId)).rejects.toMatchObject({ status: 'blocked' });
      const [attempt, second] = await baton.store.getAttempts(runId, 'charge');
      expect(attempt).toMatchObject({ failureClass: 'unknown_outcome' });
      expect(attempt!.message).toContain('no heartbeat for 1s (heartbeatTimeoutMs)');
      expect(second).toBeUndefined();
      expect(calls).toBe(1);
    } finally {
      await worker.stop(0);
      await baton.close();
    }
  });

  it('refuses heartbeatTimeoutMs on a step that is not a function, and keeps plans without it as they were', () => {
    const refused = () =>
      validatePlanObject(
        {
          name: 'p',
          steps: [
            {
              id: 'write',
              instruction: 'write it',
              agent: { command: ['claude', '-p'] },
              heartbeatTimeoutMs: '30s',
            },
          ],
        },
        'plan.json',
      );
    expect(refused).toThrow(PlanInvalidError);
    expect(refused).toThrow(
      /steps\.write\.heartbeatTimeoutMs.*only a function step calls ctx\.heartbeat\(\) \(an agent step has agent\.stallTimeoutMs\)/,
    );
    const plan = validatePlanObject(
      {
        name: 'p',
        steps: [
          { id: 'a', fn: 'f' },
          { id: 'b', fn: 'f', heartbeatTimeoutMs: 0 },
          { id: 'c', fn: 'f', heartbeatTimeoutMs: '2m' },
        ],
      },
      'plan.json',
    );
    expect(plan.steps.map((step) => step.heartbeatTimeoutMs)).toEqual([undefined, undefined, 120_000]);
    expect('heartbeatTimeoutMs' in plan.steps[0]!).toBe(false);
  });
});
