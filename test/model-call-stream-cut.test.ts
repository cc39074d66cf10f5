import { afterEach, describe, expect, it } from 'vitest';
import { callModelWithRecovery } from '../src/model-call/call-model.js';
import type { HarnessEvent } from '../src/model-call/call-state.js';
import type { ModelCapabilities } from '../src/model-call/types.js';
import type { ScriptEntry } from '../src/testing/mock-llm/script-entry.js';
import type { MockLlmServer } from '../src/testing/mock-llm/types.js';
import { eventTypes, fakeClock, mockServer, providerFor, type Wire } from './helpers/model-call.js';

/**
 * A streamed answer that ends cleanly (no error, no reset) before its finish event is a cut answer:
 * through the real SDKs against the mock server's `cut_stream` fault, it is retried within the
 * call's budget and never returned as complete.
 */

const WIRES: Wire[] = ['openai', 'anthropic'];
const MODEL = { openai: 'gpt-test', anthropic: 'claude-test' } as const;
const ROOMY: ModelCapabilities = { contextWindow: 200_000, maxOutputTokens: 64_000, supportsTools: true };
const PROMPT = 'tell me about cut streams';
const ANSWER = 'A stream cut before its finish event is not an answer. '.repeat(8).trim();
const reply = { text: ANSWER };

let server: MockLlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function streamedCall(wire: Wire, script: ScriptEntry[]) {
  server = await mockServer({ script });
  const events: HarnessEvent[] = [];
  const clock = fakeClock();
  const result = await callModelWithRecovery({
    provider: providerFor(server, wire, { stream: true }),
    request: { model: MODEL[wire], messages: [{ role: 'user', content: PROMPT }], maxOutputTokens: 500 },
    capabilities: ROOMY,
    clock,
    random: () => 0.5,
    onEvent: (event) => events.push(event),
  });
  return { result, events, clock, requests: server.requests };
}

describe.each(WIRES)('a %s stream that ends before its finish event', (wire) => {
  it('is retried, and the complete answer of the next request is returned', async () => {
    const { result, events, requests } = await streamedCall(wire, [
      { fault: 'cut_stream', reply },
      { fault: 'ok', reply },
    ]);
    expect(requests.map((r) => [r.fault, r.stream])).toEqual([
      ['cut_stream', true],
      ['ok', true],
    ]);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.response.text).toBe(ANSWER);
    expect(result.response.finishReason).toBe('stop');
    expect(result.truncated).toBe(false);
    expect(result.outcome).toBe('recovered');
    expect(eventTypes(events)).toEqual(['recovery.retried', 'recovery.finished']);
    expect(events[0]).toMatchObject({
      failureClass: 'transient',
      reason: 'stream_interrupted',
      attempt: 1,
      waitMs: 500,
    });
    expect(String((events[0] as { message?: string }).message)).toMatch(/ended before its finish event/);
  });

  it('always cut: fails as transient once the transient retries are spent, never as an answer', async () => {
    const { result, events, clock, requests } = await streamedCall(wire, [
      { fault: 'cut_stream', reply, repeat: 'forever' },
    ]);
    // The first request and the 3 transient retries of a call's default budget.
    expect(requests).toHaveLength(4);
    expect(clock.slept).toEqual([500, 1000, 2000]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure).toMatchObject({
      kind: 'transient',
      failureClass: 'transient',
      reason: 'stream_interrupted',
    });
    expect(eventTypes(events)).toEqual([
      'recovery.retried',
      'recovery.retried',
      'recovery.retried',
      'recovery.gave_up',
      'recovery.finished',
    ]);
    expect(events.at(-1)).toMatchObject({ outcome: 'failed', failureClass: 'transient' });
  });
});

describe('the cut_stream fault on the wires the agent CLIs speak', () => {
  it.each([
    ['responses', '/v1/responses', { model: 'm', input: 'hi', stream: true }, 'response.completed'],
    [
      'gemini',
      '/v1beta/models/m:streamGenerateContent?alt=sse',
      { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
      'finishReason',
    ],
  ] as const)('%s: the stream ends cleanly without its finish event', async (_wire, path, body, finish) => {
    server = await mockServer({ script: [{ fault: 'cut_stream' }, { fault: 'ok' }] });
    const send = async () => {
      const response = await fetch(`${server?.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    const cut = await send();
    const whole = await send();
    expect(whole).toContain(finish);
    expect(cut).not.toContain(finish);
    expect(cut.length).toBeGreaterThan(0);
    expect(whole.startsWith(cut.slice(0, 40))).toBe(true);
  });
});
