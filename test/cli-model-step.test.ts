/**
 * Model steps end to end: `baton run` as a real child process calling the fault-injecting mock
 * provider over real HTTP through the official SDK adapters.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startMockLlmServer } from '../src/testing/mock-llm/server.js';
import type { MockLlmServer } from '../src/testing/mock-llm/types.js';
import {
  batonJson,
  expectExit,
  removeTempDirs,
  runBaton,
  runStatus,
  stopProcesses,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { planDir, stepOf } from './helpers/plans.js';

const SECRET = 'sk-planted-secret-0123456789abcdef';
let server: MockLlmServer | null = null;

afterEach(async () => {
  await stopProcesses();
  await server?.close();
  server = null;
});
afterAll(() => removeTempDirs());

function modelPlan(steps: object[]) {
  return {
    name: 'model-test',
    inputs: { topic: { default: 'x' } },
    defaults: { retry: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 20 } },
    steps,
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

describe('model steps', () => {
  it('run through both wire formats, recover from a 429, pass results on, and record usage and recovery', async () => {
    server = await startMockLlmServer({
      script: [{ fault: 'rate_limit', retryAfterMs: 50 }, { fault: 'ok' }, { fault: 'ok' }],
    });
    const { dir, home } = planDir();
    const file = writePlan(
      dir,
      modelPlan([
        {
          id: 'research',
          model: {
            provider: 'openai',
            model: 'gpt-test',
            baseUrl: server.openaiBaseUrl,
            apiKeyEnv: 'TEST_KEY',
            prompt: 'research {{inputs.topic}}',
          },
        },
        {
          id: 'report',
          dependsOn: ['research'],
          model: {
            provider: 'anthropic',
            model: 'claude-test',
            baseUrl: server.anthropicBaseUrl,
            apiKeyEnv: 'TEST_KEY',
            system: 'Be brief.',
            prompt: 'R:{{steps.research.summary}}',
            stream: true,
          },
        },
      ]),
    );
    const result = expectExit(
      await runBaton(['run', file, '--id', 'm1', '-i', 'topic=otters'], { home, env: { TEST_KEY: SECRET } }),
      0,
    );
    const run = await runStatus(home, 'm1');
    expect(run.status).toBe('succeeded');
    expect(server.requests.map((r) => [r.wire, r.stream])).toEqual([
      ['openai', false],
      ['openai', false],
      ['anthropic', true],
    ]);
    const events = await timeline(home, 'm1');
    expect(events.find((e) => e.type === 'recovery.retried')).toMatchObject({
      stepId: 'research',
      waitMs: 50,
      status: 429,
    });
    expect(events.find((e) => e.type === 'recovery.finished')).toMatchObject({
      stepId: 'research',
      outcome: 'recovered',
    });
    const raw = await batonJson<{
      usage: { inputTokens: number; outputTokens: number };
      steps: { stepId: string; result?: { summary: string } }[];
    }>(['status', 'm1'], { home });
    expect(raw.usage.inputTokens).toBeGreaterThan(0);
    expect(raw.usage.outputTokens).toBeGreaterThan(0);
    const logs = await batonJson<{ summary: string; usage: { inputTokens: number } }[]>(
      ['logs', 'm1', 'report'],
      { home },
    );
    // The report's prompt carried the research result: the mock echoes its first 40 characters.
    expect(logs.at(-1)?.summary).toBe('ok: R:ok: research otters');
    expect(logs.at(-1)?.usage.inputTokens).toBeGreaterThan(0);
    // The API key never reaches the database, the logs or the output.
    for (const path of filesUnder(home)) expect(readFileSync(path).includes(SECRET), path).toBe(false);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });

  it('the timeline numbers step attempts in ATTEMPT and the model requests inside one in the text', async () => {
    server = await startMockLlmServer({
      script: [{ fault: 'rate_limit', retryAfterMs: 10, repeat: 3 }, { fault: 'ok' }],
    });
    const { dir, home } = planDir();
    const model = { provider: 'openai', model: 'gpt-test', baseUrl: server.openaiBaseUrl, prompt: 'hi' };
    const file = writePlan(dir, modelPlan([{ id: 'research', model }]));
    expectExit(await runBaton(['run', file, '--id', 't1'], { home }), 0);
    expect(server.requests).toHaveLength(4);
    const text = expectExit(await runBaton(['timeline', 't1'], { home }), 0).stdout;
    const rows = text
      .split('\n')
      .filter((line) => / research /.test(line))
      .map((line) => line.split(/ {2,}/));
    // TIME, +ELAPSED, STEP, ATTEMPT, (DURATION,) EVENT: every row of the one attempt says attempt 1.
    const attempts = rows.map((cells) => cells[3]);
    expect(new Set(attempts)).toEqual(new Set(['1']));
    const events = rows.map((cells) => cells.at(-1));
    expect(events.filter((what) => what?.startsWith('request '))).toEqual([
      expect.stringMatching(/^request 1: model rate_limited 429: retry in /),
      expect.stringMatching(/^request 2: model rate_limited 429: retry in /),
      expect.stringMatching(/^request 3: model rate_limited 429: retry in /),
    ]);
    expect(events).toContainEqual(expect.stringMatching(/^model call recovered after 4 request\(s\)/));
  });

  it("uses the plan's capabilities for a model the built-in table does not know", async () => {
    server = await startMockLlmServer({ script: [{ fault: 'truncate_text' }, { fault: 'ok' }] });
    const { dir, home } = planDir();
    const file = writePlan(
      dir,
      modelPlan([
        {
          id: 'a',
          model: {
            provider: 'openai',
            model: 'local-llama',
            baseUrl: server.openaiBaseUrl,
            prompt: 'hi',
            maxOutputTokens: 300,
            capabilities: { contextWindow: 4096, maxOutputTokens: 400 },
          },
        },
      ]),
    );
    expectExit(await runBaton(['run', file, '--id', 'cap1'], { home }), 0);
    // The reissue after the cut answer doubles the budget, capped at the model's 400.
    expect(server.requests.map((r) => r.maxTokens)).toEqual([300, 400]);
  });

  it("prices a model's tokens from the plan, so a cost budget can stop the run", async () => {
    server = await startMockLlmServer();
    const { dir, home } = planDir();
    const model = {
      provider: 'openai',
      model: 'local-llama',
      baseUrl: server.openaiBaseUrl,
      prompt: 'hi',
      price: { inputPerMTok: 1_000_000, outputPerMTok: 2_000_000 },
    };
    const file = writePlan(dir, {
      ...modelPlan([
        { id: 'a', model },
        { id: 'b', dependsOn: ['a'], model },
      ]),
      limits: { maxCostUsd: 1 },
    });
    expectExit(await runBaton(['run', file, '--id', 'price1'], { home }), 1);
    const raw = await batonJson<{
      status: string;
      blockedReason: string;
      usage: { inputTokens: number; outputTokens: number; costUsd: number };
    }>(['status', 'price1'], { home }, [1]);
    expect(raw.status).toBe('blocked');
    expect(raw.blockedReason).toMatch(/^budget: maxCostUsd/);
    expect(raw.usage.costUsd).toBeCloseTo(raw.usage.inputTokens + 2 * raw.usage.outputTokens);
    expect(server.requests).toHaveLength(1);
  });

  it('blocks a step at once on a fatal provider error, with one request and no retry', async () => {
    server = await startMockLlmServer({ script: [{ fault: 'fatal', status: 401 }] });
    const { dir, home } = planDir();
    const file = writePlan(
      dir,
      modelPlan([
        {
          id: 'a',
          model: { provider: 'openai', model: 'gpt-test', baseUrl: server.openaiBaseUrl, prompt: 'hi' },
        },
      ]),
    );
    expectExit(await runBaton(['run', file, '--id', 'f1'], { home }), 1);
    const run = await runStatus(home, 'f1');
    expect(stepOf(run, 'a')).toMatchObject({ status: 'blocked', lastFailureClass: 'fatal' });
    expect(server.requests).toHaveLength(1);
  });

  it('fails a step without an API key with a message naming the variable', async () => {
    const { dir, home } = planDir();
    const file = writePlan(dir, {
      name: 'no-key',
      steps: [
        {
          id: 'a',
          model: { provider: 'anthropic', model: 'claude-test', apiKeyEnv: 'MISSING_KEY_VAR', prompt: 'hi' },
        },
      ],
    });
    expectExit(await runBaton(['run', file, '--id', 'k1'], { home }), 1);
    const run = await runStatus(home, 'k1');
    expect(stepOf(run, 'a').lastError).toContain('MISSING_KEY_VAR');
  });

  it('refuses a step that is both an agent step and a model step, or an unknown provider (exit 2)', async () => {
    const { dir, home } = planDir();
    const both = writePlan(dir, {
      name: 'bad',
      steps: [
        { id: 'a', instruction: 'x', model: { provider: 'openai', model: 'm', prompt: 'p' } },
        { id: 'c', model: { provider: 'openai', model: 'm', prompt: 'p {{steps.a.summary}}' } },
      ],
    });
    const first = expectExit(await runBaton(['run', both], { home }), 2);
    expect(first.stderr).toContain('steps.a: has "instruction" and "model"');
    expect(first.stderr).toContain(
      'steps.c.model.prompt: {{steps.a.summary}}: step "a" is not a dependency of "c"',
    );
    const provider = writePlan(
      dir,
      { name: 'bad', steps: [{ id: 'b', model: { provider: 'gemini', model: 'm', prompt: 'p' } }] },
      { name: 'provider.yaml' },
    );
    const second = expectExit(await runBaton(['run', provider], { home }), 2);
    expect(second.stderr).toContain('steps.b.model.provider: expected "openai" or "anthropic", got "gemini"');
  });
});
