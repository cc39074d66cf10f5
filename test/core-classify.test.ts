import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentInvocation, troubleshootPrompt } from '../src/core/agent-prompt.js';
import { failureFingerprint, normaliseFailureMessage } from '../src/core/fingerprint.js';

describe('fingerprints', () => {
  it('ignore numbers, times, ids and temp paths but not the words', () => {
    const a = failureFingerprint(
      's',
      'agent_failed',
      'timeout after 1200 ms at 2026-11-30T10:00:01Z in /tmp/x123',
    );
    const b = failureFingerprint(
      's',
      'agent_failed',
      'timeout after 900 ms at 2026-11-30T11:20:07Z in /tmp/y9',
    );
    const c = failureFingerprint('s', 'agent_failed', 'file not found');
    const d = failureFingerprint('t', 'agent_failed', 'file not found');
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(c).not.toBe(d);
    fc.assert(fc.property(fc.string(), (text) => normaliseFailureMessage(text).length <= 500));
  });
});

describe('agent prompts', () => {
  it('builds the troubleshoot prompt in the skill words', () => {
    expect(troubleshootPrompt('fetch', 2, 'exit 1', 'Fetch the data')).toBe(
      'Step fetch failed (tries: 2). Previous run ended with: exit 1. Please troubleshoot and retry: Fetch the data',
    );
  });

  it('passes the prompt as one argument, at the placeholder, or on stdin', () => {
    const prompt = '$(rm -rf ~); `id` && echo "x" | cat';
    expect(agentInvocation({ command: ['claude', '-p'], promptVia: 'arg' }, prompt).argv).toEqual([
      'claude',
      '-p',
      prompt,
    ]);
    expect(
      agentInvocation(
        {
          command: ['openclaw', 'agent', '--message', '{prompt}', '--agent', 'main'],
          promptVia: 'placeholder',
        },
        prompt,
      ).argv,
    ).toEqual(['openclaw', 'agent', '--message', prompt, '--agent', 'main']);
    expect(agentInvocation({ command: ['codex', 'exec', '-'], promptVia: 'stdin' }, prompt)).toEqual({
      argv: ['codex', 'exec', '-'],
      stdinText: prompt,
    });
  });
});
