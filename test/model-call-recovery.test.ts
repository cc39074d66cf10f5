import { afterEach, describe, expect, it } from 'vitest';
import { CONTINUE_PROMPT, callModelWithRecovery } from '../src/model-call/call-model.js';
import type { HarnessEvent } from '../src/model-call/call-state.js';
import { RecoveryBudget } from '../src/model-call/recovery-budget.js';
import { estimateRequestTokens } from '../src/model-call/token-estimate.js';
import type { ChatMessage, ModelCapabilities, ModelRequest } from '../src/model-call/types.js';
import type { FaultSpec } from '../src/testing/mock-llm/faults.js';
import type { MockLlmServer } from '../src/testing/mock-llm/types.js';
import { eventTypes, fakeClock, mockServer, providerFor, type Wire } from './helpers/model-call.js';

const WIRES: Wire[] = ['openai', 'anthropic'];
// Names outside the SDKs' deprecation lists (the Anthropic SDK warns about deprecated ones).
const MODEL = { openai: 'gpt-test', anthropic: 'claude-test' } as const;
const ROOMY: ModelCapabilities = { contextWindow: 200_000, maxOutputTokens: 64_000, supportsTools: true };

let server: MockLlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function call(
  wire: Wire,
  script: FaultSpec[],
  options: Partial<Parameters<typeof callModelWithRecovery>[0]> & {
    stream?: boolean;
    request?: Partial<ModelRequest>;
  } = {},
) {
  server = await mockServer({ script });
  const clock = fakeClock();
  const events: HarnessEvent[] = [];
  const { stream, request, ...rest } = options;
  const result = await callModelWithRecovery({
    provider: providerFor(server, wire, { stream: stream ?? false }),
    request: {
      model: MODEL[wire],
      messages: [{ role: 'user', content: 'hello there' }],
      maxOutputTokens: 500,
      ...request,
    },
    capabilities: ROOMY,
    clock,
    random: () => 1,
    onEvent: (event) => events.push(event),
    ...rest,
  });
  return { result, clock, events, requests: server.requests };
}

describe.each(WIRES)('transient failures through the %s adapter', (wire) => {
  it('waits exactly the Retry-After the provider asked for, then answers', async () => {
    const { result, clock, events, requests } = await call(wire, [
      { fault: 'rate_limit', retryAfterS: 7 },
      { fault: 'ok' },
    ]);
    expect(result.ok).toBe(true);
    expect(clock.slept).toEqual([7000]);
    expect(requests).toHaveLength(2);
    expect(result.ok && result.outcome).toBe('recovered');
    expect(eventTypes(events)).toEqual(['recovery.retried', 'recovery.finished']);
    expect(events[0]).toMatchObject({ reason: 'rate_limited', status: 429, waitMs: 7000, attempt: 1 });
  });

  it('prefers retry-after-ms over retry-after', async () => {
    const { clock } = await call(wire, [
      { fault: 'rate_limit', retryAfterS: 7, retryAfterMs: 1500 },
      { fault: 'ok' },
    ]);
    expect(clock.slept).toEqual([1500]);
  });

  it('treats a Retry-After above the cap as persistent: no silent wait, the call fails', async () => {
    const { result, clock, requests } = await call(wire, [
      { fault: 'rate_limit', retryAfterS: 120 },
      { fault: 'ok' },
    ]);
    expect(clock.slept).toEqual([]);
    expect(requests).toHaveLength(1);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.failure.reason).toBe('retry_after_too_long');
  });

  it('backs off with full jitter, doubling up to the cap, and stops after 3 retries', async () => {
    const five = Array.from({ length: 5 }, () => ({ fault: 'server_error', status: 503 }) as FaultSpec);
    const { result, clock, requests } = await call(wire, five, { random: () => 0.5 });
    expect(clock.slept).toEqual([500, 1000, 2000]);
    expect(requests).toHaveLength(4);
    expect(!result.ok && result.failure).toMatchObject({ kind: 'transient', failureClass: 'transient' });
  });

  it('never waits longer than the backoff cap', async () => {
    const many = Array.from({ length: 7 }, () => ({ fault: 'server_error' }) as FaultSpec);
    const { clock } = await call(wire, many, { limits: { transientRetries: 6 }, backoff: { capMs: 3000 } });
    expect(clock.slept).toEqual([1000, 2000, 3000, 3000, 3000, 3000]);
  });

  it('retries a connection reset in the middle of the body', async () => {
    const { result, requests } = await call(wire, [{ fault: 'reset' }, { fault: 'ok' }]);
    expect(result.ok).toBe(true);
    expect(requests).toHaveLength(2);
  });

  it('retries a stalled request once the client timeout fires', async () => {
    const { result, events } = await call(wire, [{ fault: 'stall', ms: 10_000 }, { fault: 'ok' }], {
      timeoutMs: 300,
    });
    expect(result.ok).toBe(true);
    expect(events[0]).toMatchObject({ type: 'recovery.retried', reason: 'timeout' });
  });

  it('retries an error event in the middle of a stream', async () => {
    const { result, requests } = await call(wire, [{ fault: 'midstream_error' }, { fault: 'ok' }], {
      stream: true,
    });
    expect(result.ok && result.response.text).toMatch(/^ok: hello there/);
    expect(requests).toHaveLength(2);
  });

  it.each([
    ['fatal 401', { fault: 'fatal', status: 401 }, 'auth'],
    ['fatal 404', { fault: 'fatal', status: 404 }, 'model_not_found'],
    ['fatal 400', { fault: 'fatal', status: 400 }, 'invalid_request'],
    ['quota', { fault: 'quota' }, 'quota_exhausted'],
  ] as const)('stops at once on %s: one request, no wait', async (_name, fault, reason) => {
    const { result, clock, requests, events } = await call(wire, [fault as FaultSpec, { fault: 'ok' }]);
    expect(requests).toHaveLength(1);
    expect(clock.slept).toEqual([]);
    expect(!result.ok && result.failure).toMatchObject({ kind: 'fatal', reason });
    expect(eventTypes(events)).toEqual(['recovery.gave_up', 'recovery.finished']);
  });
});

it('does not wait out a request larger than the whole tokens-per-minute window', async () => {
  const { result, requests, clock } = await call('openai', [
    { fault: 'rate_window_too_large' },
    { fault: 'ok' },
  ]);
  expect(requests).toHaveLength(1);
  expect(clock.slept).toEqual([]);
  expect(!result.ok && result.failure).toMatchObject({ kind: 'fatal', reason: 'rate_window_too_large' });
});

it('treats 529 overloaded as transient', async () => {
  const { result, clock } = await call('anthropic', [
    { fault: 'server_error', status: 529 },
    { fault: 'ok' },
  ]);
  expect(result.ok).toBe(true);
  expect(clock.slept).toHaveLength(1);
});

/** A long history in a small window: compaction has something to remove. */
function longHistory(): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: 'You are terse.' }];
  for (let i = 0; i < 40; i++) {
    messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i} ${'x'.repeat(400)}` });
  }
  return messages;
}
const SMALL: ModelCapabilities = { contextWindow: 1000, maxOutputTokens: 500, supportsTools: true };

describe('context overflow', () => {
  it.each([
    ['openai', 'openai'],
    ['openai', 'azure'],
    ['anthropic', 'anthropic'],
    ['anthropic', 'anthropic_413'],
    ['openai', 'bedrock'],
    ['openai', 'gemini'],
    ['openai', 'vllm'],
    ['openai', 'openrouter'],
    ['openai', 'mistral'],
    ['openai', 'ollama'],
  ] as const)('%s wire, %s input overflow: compacts once, rebuilds the request and succeeds', async (wire, flavour) => {
    const history = longHistory();
    const { result, events, requests } = await call(wire, [{ fault: 'overflow', flavour }, { fault: 'ok' }], {
      capabilities: SMALL,
      request: { messages: history, maxOutputTokens: 200 },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(requests).toHaveLength(2);
    expect(requests[1]!.messagesCount).toBeLessThan(requests[0]!.messagesCount);
    // The compacted history replaces the caller's: the next turn starts from it.
    expect(result.messages.length).toBeLessThan(history.length);
    expect(result.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
    expect(result.messages.at(-1)).toEqual(history.at(-1));
    expect(estimateRequestTokens({ messages: result.messages }).total).toBeLessThanOrEqual(760);
    const compacted = events.find((e) => e.type === 'recovery.compacted');
    expect(compacted).toMatchObject({ failureClass: 'invalid' });
    expect(compacted && 'tokensBefore' in compacted && compacted.tokensBefore! > compacted.tokensAfter!).toBe(
      true,
    );
  });

  it('fails with a per-part diagnosis when the compacted request overflows again', async () => {
    const { result, requests, events } = await call(
      'openai',
      [{ fault: 'overflow', flavour: 'openai' }, { fault: 'overflow', flavour: 'openai' }, { fault: 'ok' }],
      { capabilities: SMALL, request: { messages: longHistory(), maxOutputTokens: 200 } },
    );
    expect(requests).toHaveLength(2);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.diagnosis).toMatch(
      /input tokens estimated \(system \d+, messages \d+, tools \d+\)/,
    );
    expect(events.filter((e) => e.type === 'recovery.compacted')).toHaveLength(1);
  });

  it.each([
    ['openai', 'openai_output', 4000, 3032],
    ['anthropic', 'anthropic_output', 64_000, 47_500],
    ['openai', 'vllm_output', 2000, 1041],
  ] as const)('%s %s: lowers the output budget to fit, once', async (wire, flavour, asked, lowered) => {
    const { result, requests, events } = await call(wire, [{ fault: 'overflow', flavour }, { fault: 'ok' }], {
      request: { maxOutputTokens: asked },
    });
    expect(result.ok).toBe(true);
    expect(requests.map((r) => r.maxTokens)).toEqual([asked, lowered]);
    expect(events[0]).toMatchObject({
      type: 'recovery.output_reduced',
      maxOutputBefore: asked,
      maxOutputAfter: lowered,
    });
  });

  it('does not send an overflow to the fallback model', async () => {
    server = await mockServer({ script: [{ fault: 'overflow', flavour: 'openai' }, { fault: 'ok' }] });
    const provider = providerFor(server, 'openai');
    const result = await callModelWithRecovery({
      provider,
      request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 100 },
      capabilities: ROOMY,
      fallback: { provider, model: 'gpt-4o', capabilities: ROOMY },
      compact: false,
      clock: fakeClock(),
    });
    expect(result.ok).toBe(false);
    expect(server.requests.map((r) => r.model)).toEqual(['gpt-4o-mini']);
  });
});

describe.each(WIRES)('truncation through the %s adapter', (wire) => {
  it('reissues cut text once with twice the output budget', async () => {
    const { result, requests, events } = await call(wire, [{ fault: 'truncate_text' }, { fault: 'ok' }]);
    expect(result.ok && !result.truncated).toBe(true);
    expect(requests.map((r) => r.maxTokens)).toEqual([500, 1000]);
    expect(events[0]).toMatchObject({
      type: 'recovery.reissued',
      reason: 'finish_length',
      maxOutputAfter: 1000,
    });
  });

  it('distrusts a "finished" response whose output tokens equal the limit', async () => {
    const { requests, events } = await call(wire, [{ fault: 'stop_at_limit' }, { fault: 'ok' }]);
    expect(requests).toHaveLength(2);
    expect(events[0]).toMatchObject({ type: 'recovery.reissued', reason: 'output_at_limit' });
  });

  it('continues still-cut text once on a temporary copy and joins the parts', async () => {
    const { result, requests, events } = await call(wire, [
      { fault: 'truncate_text' },
      { fault: 'truncate_text' },
      { fault: 'ok' },
    ]);
    expect(requests).toHaveLength(3);
    expect(eventTypes(events)).toEqual(['recovery.reissued', 'recovery.continued', 'recovery.finished']);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.truncated).toBe(false);
    expect(result.response.text).toMatch(/ok: Your previous answer was cut off/);
    // The continuation prompt never enters the history.
    expect(result.messages).toEqual([{ role: 'user', content: 'hello there' }]);
    expect(JSON.stringify(result.messages)).not.toContain(CONTINUE_PROMPT);
  });

  it('reports text still cut after the continuation as degraded, not complete', async () => {
    const { result, requests } = await call(wire, [
      { fault: 'truncate_text' },
      { fault: 'truncate_text' },
      { fault: 'truncate_text' },
      { fault: 'ok' },
    ]);
    expect(requests).toHaveLength(3);
    expect(result.ok && result.truncated && result.outcome).toBe('degraded');
  });

  it('regenerates a cut tool call, and fails clearly when it is cut again (never continued)', async () => {
    const tools = [
      {
        name: 'lookup',
        description: 'look up',
        parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      },
    ];
    const { result, requests, events } = await call(
      wire,
      [{ fault: 'truncate_tool' }, { fault: 'truncate_tool' }, { fault: 'ok' }],
      { stream: wire === 'anthropic', request: { tools } },
    );
    expect(requests).toHaveLength(2);
    expect(eventTypes(events)).not.toContain('recovery.continued');
    expect(!result.ok && result.failure.reason).toBe('truncated_tool_call');
  });
});

describe('fallback model', () => {
  const five = (): FaultSpec[] =>
    Array.from({ length: 4 }, () => ({ fault: 'server_error', status: 503 }) as FaultSpec);

  it('takes over only after the primary spent its transient retries, with fewer retries of its own', async () => {
    server = await mockServer({ script: [...five(), { fault: 'server_error' }, { fault: 'ok' }] });
    const clock = fakeClock();
    const events: HarnessEvent[] = [];
    const result = await callModelWithRecovery({
      provider: providerFor(server, 'openai'),
      request: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 100 },
      capabilities: ROOMY,
      fallback: {
        provider: providerFor(server, 'openai', { name: 'cheap' }),
        model: 'gpt-4o-mini',
        capabilities: ROOMY,
      },
      clock,
      random: () => 1,
      onEvent: (event) => events.push(event),
    });
    expect(server.requests.map((r) => r.model)).toEqual([
      'gpt-4o',
      'gpt-4o',
      'gpt-4o',
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4o-mini',
    ]);
    expect(clock.slept).toEqual([1000, 2000, 4000, 1000]);
    expect(result.ok && result.outcome).toBe('degraded');
    expect(result.model).toBe('gpt-4o-mini');
    expect(events.find((e) => e.type === 'recovery.fell_back')).toMatchObject({
      toModel: 'gpt-4o-mini',
      toProvider: 'cheap',
    });
  });

  it('is not used when it cannot take tools the request has', async () => {
    server = await mockServer({ script: [...five(), { fault: 'ok' }] });
    const events: HarnessEvent[] = [];
    const tools = [{ name: 't', description: 't', parameters: { type: 'object' } }];
    const result = await callModelWithRecovery({
      provider: providerFor(server, 'openai'),
      request: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 100, tools },
      capabilities: ROOMY,
      fallback: {
        provider: providerFor(server, 'openai'),
        model: 'tiny',
        capabilities: { ...ROOMY, supportsTools: false },
      },
      clock: fakeClock(),
      onEvent: (event) => events.push(event),
    });
    expect(result.ok).toBe(false);
    expect(server.requests.every((r) => r.model === 'gpt-4o')).toBe(true);
    expect(events.find((e) => e.type === 'recovery.gave_up')).toMatchObject({
      reason: 'fallback_incompatible',
    });
  });

  it('is not used when its window is smaller than the request', async () => {
    server = await mockServer({ script: [...five(), { fault: 'ok' }] });
    const result = await callModelWithRecovery({
      provider: providerFor(server, 'openai'),
      request: {
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'x'.repeat(8000) }],
        maxOutputTokens: 100,
      },
      capabilities: ROOMY,
      fallback: {
        provider: providerFor(server, 'openai'),
        model: 'small',
        capabilities: { ...ROOMY, contextWindow: 1000 },
      },
      clock: fakeClock(),
    });
    expect(result.ok).toBe(false);
    expect(server.requests).toHaveLength(4);
  });
});

describe('one recovery budget across layers', () => {
  it('a run budget caps retries across calls: the second call cannot retry what the first spent', async () => {
    server = await mockServer({
      script: [
        { fault: 'server_error' },
        { fault: 'server_error' },
        { fault: 'ok' },
        { fault: 'server_error' },
        { fault: 'ok' },
      ],
    });
    const budget = new RecoveryBudget({ transientRetries: 2 });
    const request = {
      model: 'gpt-4o',
      messages: [{ role: 'user' as const, content: 'hi' }],
      maxOutputTokens: 100,
    };
    const provider = providerFor(server, 'openai');
    const first = await callModelWithRecovery({
      provider,
      request,
      capabilities: ROOMY,
      budget,
      clock: fakeClock(),
    });
    const second = await callModelWithRecovery({
      provider,
      request,
      capabilities: ROOMY,
      budget,
      clock: fakeClock(),
    });
    expect(first.ok).toBe(true);
    expect(second.ok).toBe(false);
    expect(server.requests).toHaveLength(4);
    expect(budget.usedOf('transientRetries')).toBe(2);
  });

  it('stops exactly at the total-requests cap', async () => {
    const faults = Array.from({ length: 10 }, () => ({ fault: 'server_error' }) as FaultSpec);
    const { requests, result } = await call('openai', faults, {
      limits: { transientRetries: 10, requests: 3 },
    });
    expect(requests).toHaveLength(3);
    expect(!result.ok && result.failure).toMatchObject({
      failureClass: 'budget',
      reason: 'recovery_budget_requests',
    });
  });

  it('stops before a wait would pass the total-wait cap', async () => {
    const faults = Array.from({ length: 10 }, () => ({ fault: 'rate_limit', retryAfterS: 20 }) as FaultSpec);
    const { requests, clock } = await call('openai', faults, {
      limits: { transientRetries: 10, waitMs: 50_000 },
    });
    expect(clock.slept).toEqual([20_000, 20_000]);
    expect(requests).toHaveLength(3);
  });
});
