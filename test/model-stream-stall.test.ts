/**
 * A model step's streamed response that goes silent (`model.stallTimeoutMs`): `baton run` as a
 * real child process against the mock provider over real HTTP, through both SDK adapters. The
 * silent request is stopped and sent again; when every request of the attempt went silent the
 * attempt ends transient with the stall message, and the next attempt goes on.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PlanInvalidError } from '../src/core/plan/issues.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { startMockLlmServer } from '../src/testing/mock-llm/server.js';
import type { MockLlmServer } from '../src/testing/mock-llm/types.js';
import { batonJson, expectExit, removeTempDirs, runBaton, stopProcesses, writePlan } from './helpers/cli.js';
import { planDir } from './helpers/plans.js';

let server: MockLlmServer | null = null;
afterEach(async () => {
  await stopProcesses();
  await server?.close();
  server = null;
});
afterAll(() => removeTempDirs());

/** The requests one attempt makes before it gives up on transient failures (1 + 3 retries). */
const REQUESTS_PER_ATTEMPT = 4;

describe('silent model streams', () => {
  it('stops a streamed response silent for stallTimeoutMs, fails the attempt as stalled once its requests are spent, and the retry goes on', async () => {
    // Every request of each step's first attempt goes silent after its first events, for far
    // longer than the stall timeout; then the answers are normal.
    const silent = { fault: 'silent_stream', ms: 120_000, repeat: REQUESTS_PER_ATTEMPT };
    server = await startMockLlmServer({
      script: [
        { ...silent, when: { wire: 'openai' } },
        { ...silent, when: { wire: 'anthropic' } },
        { fault: 'ok', repeat: 'forever' },
      ],
    });
    const { dir, home } = planDir();
    const model = (provider: string, baseUrl: string) => ({
      provider,
      model: `${provider}-test`,
      baseUrl,
      prompt: 'write it',
      stream: true,
      stallTimeoutMs: '1s',
    });
    const file = writePlan(dir, {
      name: 'stream-stall',
      defaults: { retry: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 20 } },
      steps: [
        { id: 'chat', model: model('openai', server.openaiBaseUrl) },
        { id: 'messages', model: model('anthropic', server.anthropicBaseUrl) },
      ],
    });
    expectExit(await runBaton(['run', file, '--id', 's1'], { home, timeoutMs: 180_000 }), 0);
    for (const step of ['chat', 'messages']) {
      const attempts = await batonJson<
        { attempt: number; outcome: string; failureClass?: string; message?: string }[]
      >(['logs', 's1', step], { home });
      expect(
        attempts.map((a) => a.outcome),
        step,
      ).toEqual(['failed', 'succeeded']);
      expect(attempts[0], step).toMatchObject({ failureClass: 'transient' });
      expect(attempts[0]!.message, step).toMatch(/^no streamed output for 1s \(model\.stallTimeoutMs\)/);
    }
    // Each silent request was stopped and sent again: 4 per first attempt, then one answer each.
    const byWire = (wire: string) => server!.requests.filter((r) => r.wire === wire && r.stream).length;
    expect(byWire('openai')).toBe(REQUESTS_PER_ATTEMPT + 1);
    expect(byWire('anthropic')).toBe(REQUESTS_PER_ATTEMPT + 1);
  });

  it('refuses stallTimeoutMs on a model step that does not stream', () => {
    const refused = () =>
      validatePlanObject(
        {
          name: 'p',
          steps: [
            { id: 'a', model: { provider: 'openai', model: 'm', prompt: 'hi', stallTimeoutMs: '30s' } },
          ],
        },
        'plan.json',
      );
    expect(refused).toThrow(PlanInvalidError);
    expect(refused).toThrow(
      /steps\.a\.model\.stallTimeoutMs.*only a streamed response is watched for silence/,
    );
  });
});
