/**
 * `StepFailure(message, failureClass)` takes only the classes a step function may choose: a class
 * from anywhere else (the arguments swapped, a typo in plain JavaScript) is a TypeError naming the
 * classes, and a step that throws one fails as `agent_failed` with that message, not with an
 * arbitrary class in its events, its fingerprint and `/metrics`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StepFailure } from '../src/index.js';
import { Baton, RunNotSucceededError } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

const CLASSES = 'transient, agent_failed, invalid, fatal, unknown_outcome';

describe('StepFailure', () => {
  it('keeps a class it knows, and refuses any other with a TypeError naming the classes, saying when the arguments are swapped', () => {
    expect(new StepFailure('quota used up', 'fatal').failureClass).toBe('fatal');
    expect(new StepFailure('try again').failureClass).toBe('agent_failed');
    const swapped = () => new StepFailure('transient', 'the mail server timed out' as never);
    expect(swapped).toThrow(TypeError);
    expect(swapped).toThrow(
      `new StepFailure(message, failureClass): failureClass "the mail server timed out" is not one of ${CLASSES} (the arguments look swapped: the message comes first, new StepFailure("the mail server timed out", "transient"))`,
    );
    // Classes the engine gives but a step may not choose are refused too.
    expect(() => new StepFailure('stuck', 'no_progress' as never)).toThrow(
      `"no_progress" is not one of ${CLASSES}`,
    );
    expect(() => new StepFailure('x', 'x'.repeat(10_000) as never)).toThrow(/"x{100}" is not one of/);
  });

  it('a step that swaps the arguments fails as agent_failed with the TypeError, not with its text as a class', async () => {
    const home = mkdtempSync(join(tmpdir(), 'baton-step-failure-'));
    homes.push(home);
    const wf = defineWorkflow({ name: 'swapped' }).step('send', { retry: { maxAttempts: 1 } }, () => {
      throw new StepFailure('transient', 'the mail server timed out' as never);
    });
    const baton = Baton.open({ home, pollMs: 20 });
    try {
      const { runId } = await baton.start(wf, {});
      await expect(baton.result(wf, runId)).rejects.toBeInstanceOf(RunNotSucceededError);
      const [attempt] = await baton.store.getAttempts(runId, 'send');
      expect(attempt?.failureClass).toBe('agent_failed');
      expect(attempt?.message).toContain(`is not one of ${CLASSES}`);
      const events = await baton.store.getEvents(runId);
      const failed = events.find((event) => event.type === 'step.failed');
      expect(failed).toMatchObject({ failureClass: 'agent_failed' });
    } finally {
      await baton.close();
    }
  });
});
