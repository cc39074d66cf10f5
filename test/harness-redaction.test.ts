import { describe, expect, it } from 'vitest';
import { runAgent } from '../src/harness/agent-loop.js';
import type { HarnessEvent } from '../src/harness/call-state.js';
import { recordableMessage, redactSecrets } from '../src/harness/redact.js';
import { ModelCallError, type ModelProvider } from '../src/harness/types.js';
import { fakeClock } from './helpers/harness.js';

const KEY = 'sk-proj-PLANTEDsecretKEY0123456789';

describe('redaction', () => {
  it('masks provider keys, bearer tokens and api_key pairs, and keys the caller names', () => {
    const text = `bad key ${KEY}; Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abcdef; api_key=abcdef123456 and my-own-token-xyz`;
    const out = redactSecrets(text, ['my-own-token-xyz']);
    expect(out).not.toContain(KEY);
    expect(out).not.toContain('eyJhbGciOiJIUzI1NiJ9');
    expect(out).not.toContain('abcdef123456');
    expect(out).not.toContain('my-own-token-xyz');
    expect(out).toContain('[redacted]');
    expect(recordableMessage('x'.repeat(1000))).toHaveLength(300);
  });

  it('a key planted in provider errors never reaches an event or a result', async () => {
    let calls = 0;
    const provider: ModelProvider = {
      name: 'leaky',
      kind: 'openai',
      async complete() {
        calls++;
        throw new ModelCallError(
          `Incorrect API key provided: ${KEY}. Header was Authorization: Bearer ${KEY}`,
          {
            status: calls === 1 ? 503 : 401,
            headers: { authorization: `Bearer ${KEY}` },
          },
        );
      },
    };
    const events: HarnessEvent[] = [];
    const result = await runAgent({
      provider,
      model: 'm',
      capabilities: { contextWindow: 8000, maxOutputTokens: 1000, supportsTools: true },
      prompt: 'hi',
      clock: fakeClock(),
      onEvent: (event) => events.push(event),
    });
    expect(result.ok).toBe(false);
    expect(events.length).toBeGreaterThan(1);
    const recorded = JSON.stringify({ events, result });
    expect(recorded).not.toContain(KEY);
    expect(recorded).not.toContain('PLANTEDsecret');
  });
});
