/** Which tool calls `agent.approve` holds for a person, and which still wait (the pure half). */
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../src/core/events.js';
import { approvalRuleFor, globMatches, pendingToolApprovals } from '../src/core/tool-approval.js';

describe('globMatches', () => {
  it('matches * as any text and ? as one character, nothing else special', () => {
    expect(globMatches('git push*', 'git push --force')).toBe(true);
    expect(globMatches('git push*', 'git pull')).toBe(false);
    expect(globMatches('secrets/?.env', 'secrets/a.env')).toBe(true);
    expect(globMatches('a.b', 'axb')).toBe(false);
    expect(globMatches('*', '')).toBe(true);
  });

  it('decides a hostile pattern against a long text without backtracking blow-up', () => {
    expect(globMatches(`${'a*'.repeat(30)}b`, 'a'.repeat(5000))).toBe(false);
  });
});

describe('approvalRuleFor', () => {
  const rules = [{ tool: 'Bash', match: 'git push*' }, { tool: 'Write', path: '.env' }, { tool: 'WebFetch' }];

  it('holds the calls a rule names, by command, by path relative to the workspace, or every call', () => {
    expect(approvalRuleFor(rules, 'Bash', { command: '  git push --force' }, '/w')).toBe(rules[0]);
    expect(approvalRuleFor(rules, 'Bash', { command: 'ls' }, '/w')).toBeUndefined();
    expect(approvalRuleFor(rules, 'Write', { file_path: '/w/.env', content: 'x' }, '/w')).toBe(rules[1]);
    expect(approvalRuleFor(rules, 'Write', { file_path: '/w/notes.md' }, '/w')).toBeUndefined();
    expect(approvalRuleFor(rules, 'WebFetch', { url: 'https://x' }, '/w')).toBe(rules[2]);
    expect(approvalRuleFor(rules, 'Read', { file_path: '/w/.env' }, '/w')).toBeUndefined();
  });
});

describe('pendingToolApprovals', () => {
  const at = 1_000;
  const requested = (callId: string, attempt = 1) =>
    ({
      type: 'step.tool_approval_requested',
      stepId: 's',
      attempt,
      callId,
      tool: 'Bash',
      digest: 'd',
      summary: 'git push',
      timeoutAt: at + 60_000,
      seq: 1,
      runId: 'r',
      at,
    }) as StoredEvent;

  it('lists requests of the running attempt not yet decided', () => {
    const decided = {
      type: 'step.tool_approval_decided',
      stepId: 's',
      attempt: 1,
      callId: 'a',
      tool: 'Bash',
      digest: 'd',
      decision: 'allow',
      by: 'ann',
      comment: null,
      seq: 3,
      runId: 'r',
      at,
    } as StoredEvent;
    const pending = pendingToolApprovals([requested('a'), requested('b'), decided], new Map([['s', 1]]));
    expect(pending.map((p) => p.callId)).toEqual(['b']);
    // Of an attempt that ended (the step runs attempt 2 now), nothing waits.
    expect(pendingToolApprovals([requested('b')], new Map([['s', 2]]))).toEqual([]);
  });
});
