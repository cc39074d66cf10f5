import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentInvocation, summarizeAgentOutput, troubleshootPrompt } from '../src/core/agent-prompt.js';
import { type AgentExit, classifyAgentExit } from '../src/core/classify-agent-exit.js';
import { failureFingerprint, normaliseFailureMessage } from '../src/core/fingerprint.js';

const exit = (patch: Partial<AgentExit>): AgentExit => ({
  exitCode: 1,
  signal: null,
  timedOut: false,
  timeoutMs: 1000,
  command: 'claude',
  stdoutTail: '',
  stderrTail: '',
  ...patch,
});

describe('classifyAgentExit', () => {
  it.each([
    [{ exitCode: 0 }, null],
    [{ spawnErrorCode: 'ENOENT', exitCode: null }, 'fatal'],
    [{ timedOut: true, exitCode: null, signal: 'SIGTERM' }, 'transient'],
    [{ stderrTail: 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}' }, 'transient'],
    [{ stderrTail: 'overloaded_error: Overloaded' }, 'transient'],
    [{ stderrTail: 'Error: authentication_failed' }, 'fatal'],
    [{ stderrTail: 'billing_error: your credit balance is too low' }, 'fatal'],
    [{ stderrTail: '--dangerously-skip-permissions cannot be used with root/sudo privileges' }, 'fatal'],
    [{ stderrTail: 'RESOURCE_EXHAUSTED: Resource has been exhausted', command: 'gemini' }, 'transient'],
    [{ exitCode: 41, stderrTail: 'something', command: '/usr/bin/gemini' }, 'fatal'],
    [{ stderrTail: 'read ECONNRESET' }, 'transient'],
    [{ stderrTail: 'TypeError: x is undefined' }, 'agent_failed'],
    [
      {
        exitCode: 0,
        stdoutTail: 'litellm.RateLimitError: slow down\nRetrying in 20 seconds...',
        command: 'aider',
      },
      'transient',
    ],
    [
      { exitCode: 0, stdoutTail: '{"type":"result","subtype":"error_max_turns","is_error":true}' },
      'agent_failed',
    ],
  ] as const)('%j -> %s', (patch, expected) => {
    const verdict = classifyAgentExit(exit(patch as Partial<AgentExit>));
    if (expected === null) expect(verdict.ok).toBe(true);
    else expect(verdict).toMatchObject({ ok: false, failureClass: expected });
  });

  it('reads a requested wait ("Retrying in N seconds") as retryAfterMs', () => {
    const verdict = classifyAgentExit(exit({ stderrTail: 'rate limit hit. Retrying in 20 seconds...' }));
    expect(verdict).toMatchObject({ ok: false, failureClass: 'transient', retryAfterMs: 20_000 });
  });

  it('names the command, the exit and the last lines of output in the message', () => {
    const verdict = classifyAgentExit(
      exit({ exitCode: 3, command: '/opt/bin/codex', stderrTail: 'line 1\nfinal problem\n' }),
    );
    expect(verdict).toMatchObject({ ok: false, message: 'codex exited with code 3: line 1\nfinal problem' });
  });
});

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

  it('summarises a JSON final record by its result, else by the end of stdout', () => {
    expect(summarizeAgentOutput('noise\n{"type":"result","result":"All done."}\n')).toBe('All done.');
    expect(summarizeAgentOutput('a\nb\n')).toBe('a\nb');
    expect(summarizeAgentOutput('x'.repeat(5000))).toHaveLength(2000);
  });
});
