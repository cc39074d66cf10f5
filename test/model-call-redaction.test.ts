import { describe, expect, it } from 'vitest';
import { environmentSecrets, recordableMessage, redactOutcome, redactSecrets } from '../src/core/redact.js';
import { runAgent } from '../src/model-call/agent-loop.js';
import type { HarnessEvent } from '../src/model-call/call-state.js';
import { ModelCallError, type ModelProvider } from '../src/model-call/types.js';
import { fakeClock } from './helpers/model-call.js';

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

  it("takes the values of the environment's secret-looking variables, not paths or short values", () => {
    const secrets = environmentSecrets({
      ANTHROPIC_API_KEY: 'zz9-any-shape-0123456789',
      GITHUB_TOKEN: 'plain-token-value',
      PGPASSWORD: 'hunter2hunter2',
      BATON_DATABASE_URL: 'postgres://u:pw@h/db',
      SHORT_TOKEN: 'abc',
      SSH_AUTH_SOCK: '/tmp/ssh-XYZ/agent.1',
      GOOGLE_APPLICATION_CREDENTIALS: '/home/me/key.json',
      NPM_TOKEN_FILE: 'relative/token.txt',
      PATH: '/usr/bin:/bin',
      PWD: '/home/me/project',
      HOME: '/home/me',
    });
    expect(secrets.sort()).toEqual(
      ['zz9-any-shape-0123456789', 'plain-token-value', 'hunter2hunter2', 'postgres://u:pw@h/db'].sort(),
    );
  });

  it('masks those values in what an attempt records: failure messages, summaries, degraded notes', () => {
    const secret = 'zz9-any-shape-0123456789';
    const failed = redactOutcome({ ok: false, failureClass: 'fatal', message: `401 for ${secret}` }, [
      secret,
    ]);
    expect(failed).toEqual({ ok: false, failureClass: 'fatal', message: '401 for [redacted]' });
    const ok = redactOutcome(
      { ok: true, summary: `used ${secret}`, outputs: [], degraded: `fallback: ${secret}` },
      [secret],
    );
    expect(ok).toMatchObject({ summary: 'used [redacted]', degraded: 'fallback: [redacted]' });
  });

  it("masks them in a step's structured result too (a function's value, an agent's result file)", () => {
    const secret = 'zz9-any-shape-0123456789';
    const clean = { pages: [{ url: 'https://example.com', note: 'fine' }] };
    const ok = redactOutcome(
      {
        ok: true,
        summary: 'done',
        outputs: [],
        value: { pages: [{ url: `https://x?key=${secret}` }], clean },
      },
      [secret],
    );
    expect(ok).toMatchObject({ value: { pages: [{ url: 'https://x?key=[redacted]' }] } });
    expect(JSON.stringify(ok)).not.toContain(secret);
    // Nothing to mask: the same object comes back, not a copy.
    const untouched = { ok: true as const, summary: 'done', outputs: [], value: clean };
    expect(redactOutcome(untouched, [secret])).toBe(untouched);
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
