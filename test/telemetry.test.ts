import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { Engine } from '../src/engine/engine.js';
import { startRun } from '../src/engine/start-run.js';
import { FunctionExecutor, FunctionRegistry } from '../src/executors/function-executor.js';
import { ModelExecutor } from '../src/executors/model-executor.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { startMockLlmServer } from '../src/testing/mock-llm/server.js';

const exporter = new InMemorySpanExporter();
let home: string;
beforeAll(() => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  home = mkdtempSync(join(tmpdir(), 'baton-otel-'));
});
afterAll(() => {
  trace.disable();
  rmSync(home, { recursive: true, force: true });
});

describe('OpenTelemetry spans', () => {
  it('spans the run, each step and attempt, and each recovery action of a model call', async () => {
    const llm = await startMockLlmServer({
      script: [{ fault: 'rate_limit', retryAfterMs: 20 }, { fault: 'ok' }],
    });
    const store = SqliteStore.open(join(home, 'baton.db'));
    try {
      let calls = 0;
      const registry = new FunctionRegistry().register('flaky', () => {
        if (++calls === 1) throw new Error('first try fails');
        return 'ok';
      });
      const plan = validatePlanObject(
        {
          name: 'traced',
          defaults: { retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 1 } },
          steps: [
            { id: 'prep', fn: 'flaky' },
            {
              id: 'ask',
              dependsOn: ['prep'],
              model: { provider: 'openai', model: 'gpt-test', baseUrl: llm.openaiBaseUrl, prompt: 'hi' },
            },
          ],
        },
        'test',
      );
      const run = await startRun(store, { plan, runId: 't1', workspace: home });
      await new Engine({
        store,
        home,
        owner: 'test',
        pollMs: 10,
        executors: {
          agent: new FunctionExecutor(registry),
          fn: new FunctionExecutor(registry),
          model: new ModelExecutor(),
        },
      }).run({ kind: 'until-settled', runId: run.id });
    } finally {
      await store.close();
      await llm.close();
    }
    const spans = exporter.getFinishedSpans();
    const names = spans.map((s) => s.name);
    expect(names.filter((n) => n === 'baton.attempt prep')).toHaveLength(2);
    expect(names).toEqual(
      expect.arrayContaining(['baton.step prep', 'baton.attempt ask', 'baton.step ask', 'baton.run traced']),
    );
    const failed = spans.find(
      (s) => s.name === 'baton.attempt prep' && s.attributes['baton.outcome'] === 'failed',
    );
    expect(failed?.attributes).toMatchObject({
      'baton.run_id': 't1',
      'baton.attempt': 1,
      'baton.failure_class': 'agent_failed',
    });
    const retried = spans.find((s) => s.name === 'baton.recovery.retried');
    const ask = spans.find((s) => s.name === 'baton.attempt ask');
    expect(retried?.attributes).toMatchObject({
      'baton.failure_class': 'transient',
      'baton.status': 429,
      'baton.wait_ms': 20,
    });
    expect(retried?.parentSpanContext?.spanId).toBe(ask?.spanContext().spanId);
    expect(spans.find((s) => s.name === 'baton.run traced')?.attributes).toMatchObject({
      'baton.status': 'succeeded',
    });
  });
});
