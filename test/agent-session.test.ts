/**
 * Which session an attempt gives its CLI (executors/agent-session.ts), for a CLI that goes on in the
 * session it was given (openclaw `agent --local`): each retry continues the very session the first
 * attempt started, however many attempts come between, from Baton's own record beside each log. The
 * real CLI runs in agent-resume.test.ts; this covers the chain beyond one retry, and the exec form.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_PROFILES } from '../src/executors/agent-profiles/choose-profile.js';
import { attemptSession, recordSessionUse, sessionLaunch } from '../src/executors/agent-session.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const openclaw = AGENT_PROFILES.openclaw;
const local = { command: ['openclaw', 'agent', '--local', '--agent', 'main', '--json'] };

/** Launches attempts 1..n of one step, each after a transient failure, as agent-attempt.ts does. */
function launches(n: number, agent: { command: string[] } = local) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-session-'));
  dirs.push(dir);
  const logOf = (attempt: number) => join(dir, 'runs', 'r1', 'write', `attempt-${attempt}.log`);
  const seen = [];
  for (let attempt = 1; attempt <= n; attempt++) {
    const claim = { runId: 'r1', stepId: 'write', attempt, lastFailureClass: 'transient' as const };
    const launch = sessionLaunch(openclaw, agent as never, attemptSession(claim, logOf));
    recordSessionUse(openclaw, logOf(attempt), launch?.use);
    seen.push(launch);
  }
  return { seen, logOf };
}

describe('a CLI that continues its sessions in place (openclaw agent --local)', () => {
  it('every retry goes on in the session the first attempt started', () => {
    const { seen } = launches(3);
    const first = seen[0]!.use.sessionId!;
    expect(seen[0]).toEqual({ args: ['--session-id', first], use: { sessionId: first, resumed: false } });
    for (const launch of seen.slice(1))
      expect(launch).toEqual({ args: ['--session-id', first], use: { sessionId: first, resumed: true } });
  });

  it('starts fresh, saying why, when the attempt before left no record on this machine', () => {
    const { seen, logOf } = launches(1);
    rmSync(logOf(1).replace(/\.log$/, '.session'));
    const claim = { runId: 'r1', stepId: 'write', attempt: 2, lastFailureClass: 'transient' as const };
    const launch = sessionLaunch(openclaw, local as never, attemptSession(claim, logOf));
    expect(launch?.use).toEqual({
      sessionId: expect.not.stringMatching(seen[0]!.use.sessionId!),
      resumed: false,
      reason: 'the attempt before left no record of its session on this machine: started a fresh one',
    });
  });

  it('agent exec keeps no session, and a command that names its own is left alone', () => {
    expect(launches(2, { command: ['openclaw', 'agent', 'exec', '--json'] }).seen).toEqual([null, null]);
    expect(
      launches(2, { command: ['openclaw', 'agent', '--local', '--session-key', 'k', '--json'] }).seen,
    ).toEqual([null, null]);
  });
});
