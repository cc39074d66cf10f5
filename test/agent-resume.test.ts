/**
 * `agent.resume`: a retry continues the agent CLI's own session. Each real CLI that supports it
 * (claude, codex, gemini; openclaw in its `agent --local` form) against the mock model server: attempt 1 writes a file through its own tool, then
 * its provider fails for good; attempt 2 resumes the conversation (the mock sees attempt 1's tool
 * call and its result) and finishes without writing again. A session the CLI cannot find starts
 * fresh with the reason in the timeline; with `resume: never` the retry starts over.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attemptBoundMs, testBoundMs } from './helpers/agent-cli-bounds.js';
import {
  agentTurn,
  cliCase,
  cliCommand,
  mockPerTest,
  requestsDuring,
  runPlan,
  stepAttempts,
  writeCall,
} from './helpers/agent-steps.js';
import { expectExit, runBaton, timeline } from './helpers/cli.js';
import { type AgentCli, describeWithOpenclaw, openclawEntry, openclawNode } from './helpers/mock-cli.js';

const serve = mockPerTest();

/** Where each CLI keeps its conversations, under the folders the test gave it: removed, none is found. */
const SESSION_STORES: Record<
  'claude' | 'codex' | 'gemini',
  (env: Record<string, string | undefined>) => string[]
> = {
  gemini: (env) => [join(String(env.HOME), '.gemini', 'tmp')],
  claude: (env) => [join(String(env.HOME), '.claude', 'projects')],
  codex: (env) => {
    const home = String(env.CODEX_HOME);
    return [
      join(home, 'sessions'),
      ...readdirSync(home)
        .filter((name) => name.startsWith('state_'))
        .map((name) => join(home, name)),
    ];
  },
};

type ResumingCli = AgentCli & ('claude' | 'codex' | 'gemini');

/** What a retry that starts a fresh conversation (the whole troubleshoot prompt) is answered. */
const STARTED_OVER = {
  fault: 'ok' as const,
  when: agentTurn('Please troubleshoot and retry: RESUME-ME', { hasToolResult: false }),
  reply: { text: 'started over' },
};

/** The tool calls attempt 1 makes before its provider fails: none of them is made again. */
const TOOL_CALLS = 6;

/**
 * What the mock answers a resuming CLI: attempt 1 writes `path` through its own tool `toolCalls`
 * times over as many turns, then its provider fails for good; only a resumed attempt (whose
 * conversation already holds those tool calls) is told it finished.
 */
function resumeScript(cli: AgentCli, path: string, toolCalls: number) {
  return [
    // Only a resumed attempt says this, and its conversation already holds attempt 1's tool call.
    {
      fault: 'ok' as const,
      when: agentTurn('finish the task you were given above', { hasToolResult: true }),
      reply: { text: 'finished after resume' },
    },
    // Attempt 1: writes the file through its own tool, once per turn...
    {
      fault: 'ok' as const,
      when: agentTurn('RESUME-ME', { hasToolResult: false }),
      reply: { toolCalls: [writeCall(cli, path, 'written once')] },
    },
    {
      fault: 'ok' as const,
      when: agentTurn('RESUME-ME', { hasToolResult: true }),
      reply: { toolCalls: [writeCall(cli, path, 'written again')] },
      repeat: toolCalls - 1,
    },
    // ...then its provider fails (claude retries once itself, then gives up).
    {
      fault: 'server_error' as const,
      status: 500 as const,
      when: agentTurn('RESUME-ME', { hasToolResult: true }),
      repeat: 'forever' as const,
    },
  ];
}

describe.each([
  'claude',
  'codex',
  'gemini',
] as const)('%s resumes its session on retry', (cli: ResumingCli) => {
  const script = (path: string) => resumeScript(cli, path, TOOL_CALLS);

  const plan = (c: ReturnType<typeof cliCase>, agent: Record<string, unknown> = {}) => ({
    name: `${cli}-resume`,
    defaults: {
      agent: { command: cliCommand(cli), ...agent },
      timeoutMs: attemptBoundMs(cli),
      retry: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 50 },
    },
    steps: [{ id: 'write', instruction: `RESUME-ME: write ${c.workspace}/notes.md, then say done` }],
  });

  it('attempt 2 continues attempt 1 conversation: the model sees its six tool calls, none made again', {
    timeout: testBoundMs(cli, 3),
  }, async () => {
    const mock = await serve([]);
    const c = cliCase(cli, mock);
    mock.enqueue(...script(`${c.workspace}/notes.md`));
    const { result, run } = await runPlan(c, plan(c));
    expect(result.code, result.stderr).toBe(0);
    expect(run.status).toBe('succeeded');
    const [first, second] = await stepAttempts(c, run.id, 'write');
    expect(first).toMatchObject({ outcome: 'failed', failureClass: 'transient' });
    expect(second).toMatchObject({ outcome: 'succeeded', summary: 'finished after resume' });
    // The six tool calls were asked for in attempt 1 only; attempt 2's first request carried them.
    const toolTurns = mock.requests.filter((r) => r.scriptIndex === 1 || r.scriptIndex === 2);
    expect(toolTurns).toHaveLength(TOOL_CALLS);
    expect(requestsDuring(mock, second!).filter((r) => r.scriptIndex === 1 || r.scriptIndex === 2)).toEqual(
      [],
    );
    // Answered by entry 0, which only a request holding a tool result matches: attempt 1's.
    const [resumed] = requestsDuring(mock, second!, 0);
    const [started] = requestsDuring(mock, first!, 1);
    expect(resumed?.userText).toContain('RESUME-ME');
    expect(resumed!.messagesCount).toBeGreaterThan(started!.messagesCount + 1);
    // The timeline says which attempt resumed which session, and so do the attempt records.
    const sessions = (await timeline(c.home, run.id)).filter((e) => e.type === 'step.session');
    expect(sessions.map((e) => [e.attempt, e.resumed])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect([first!.session, second!.session]).toEqual([
      { sessionId: sessions[0]!.sessionId, resumed: false },
      { sessionId: sessions[1]!.sessionId, resumed: true },
    ]);
    // claude forks the conversation into the new attempt's own session; codex and gemini go on in theirs.
    if (cli === 'claude') expect(sessions[1]!.sessionId).not.toBe(sessions[0]!.sessionId);
    else expect(sessions[1]!.sessionId).toBe(sessions[0]!.sessionId);
  });

  it('starts fresh, and says why, when the session to continue is gone', {
    timeout: testBoundMs(cli, 3),
  }, async () => {
    const mock = await serve([]);
    const c = cliCase(cli, mock);
    mock.enqueue(...script(`${c.workspace}/notes.md`), STARTED_OVER);
    const once = plan(c);
    const { result, run } = await runPlan(c, {
      ...once,
      defaults: { ...once.defaults, retry: { maxAttempts: 1 } },
    });
    expect(result.code, result.stderr).toBe(1);
    const stores = SESSION_STORES[cli](c.env);
    expect(readdirSync(stores[0]!).length).toBeGreaterThan(0);
    for (const store of stores) rmSync(store, { recursive: true, force: true });
    expectExit(await runBaton(['retry', run.id, 'write'], { home: c.home }), 0);
    expectExit(
      await runBaton(['check'], { home: c.home, env: c.env, timeoutMs: attemptBoundMs(cli) * 2 }),
      0,
    );
    const [, second] = await stepAttempts(c, run.id, 'write');
    expect(second).toMatchObject({ outcome: 'succeeded', summary: 'started over' });
    const sessions = (await timeline(c.home, run.id)).filter((e) => e.type === 'step.session');
    expect(sessions.at(-1)).toMatchObject({ attempt: 2, resumed: false });
    expect(String(sessions.at(-1)!.reason)).toMatch(
      /^the CLI found no session [0-9a-f-]{36} to continue: started a fresh one$/,
    );
  });

  it('with resume: never the retry starts a fresh conversation', {
    timeout: testBoundMs(cli, 3),
  }, async () => {
    const mock = await serve([]);
    const c = cliCase(cli, mock);
    mock.enqueue(...script(`${c.workspace}/notes.md`), STARTED_OVER);
    const { result, run } = await runPlan(c, plan(c, { resume: 'never' }));
    expect(result.code, result.stderr).toBe(0);
    const [, second] = await stepAttempts(c, run.id, 'write');
    expect(second).toMatchObject({ outcome: 'succeeded', summary: 'started over' });
    expect(requestsDuring(mock, second!).some((r) => r.hasToolResult)).toBe(false);
    expect((await timeline(c.home, run.id)).some((e) => e.type === 'step.session')).toBe(false);
  });
});

/**
 * openclaw keeps a conversation per `--session-id` only in its `agent --local` (and Gateway) form;
 * `agent exec` keeps none. It creates a session for an unknown id rather than refusing it: its JSON
 * then counts no messages before the prompt, and Baton starts the attempt again, fresh.
 */
describeWithOpenclaw('openclaw resumes its session on retry (agent --local)', () => {
  const OPENCLAW_TOOL_CALLS = 2;
  const localCommand = () => [openclawNode, openclawEntry, 'agent', '--local', '--agent', 'main', '--json'];
  const script = (path: string) => resumeScript('openclaw', path, OPENCLAW_TOOL_CALLS);
  /** A case whose `agent --local` retries a provider error once (its agent's own settings.json). */
  const localCase = (mock: Parameters<typeof cliCase>[1]) => {
    const c = cliCase('openclaw', mock);
    const agentDir = join(String(c.env.HOME), '.openclaw', 'agents', 'main', 'agent');
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, 'settings.json'),
      JSON.stringify({ retry: { provider: { maxRetries: 1 } } }),
    );
    return { c, agentDir };
  };
  const plan = (c: ReturnType<typeof cliCase>, maxAttempts: number) => ({
    name: 'openclaw-resume',
    defaults: {
      agent: { command: localCommand() },
      timeoutMs: attemptBoundMs('openclaw'),
      retry: { maxAttempts, initialDelayMs: 10, maxDelayMs: 50 },
    },
    steps: [{ id: 'write', instruction: `RESUME-ME: write ${c.workspace}/notes.md, then say done` }],
  });

  it('attempt 2 goes on in attempt 1 session: the model sees its tool calls, none made again', {
    timeout: testBoundMs('openclaw', 3),
  }, async () => {
    const mock = await serve([]);
    const { c } = localCase(mock);
    mock.enqueue(...script(`${c.workspace}/notes.md`));
    const { result, run } = await runPlan(c, plan(c, 2));
    const [first, second] = await stepAttempts(c, run.id, 'write');
    const seen = JSON.stringify({
      first,
      second,
      requests: mock.requests.map((r) => [r.scriptIndex, r.userText]),
    });
    expect(result.code, `${result.stderr}\n${seen}`).toBe(0);
    // Its agent's settings.json caps its retries, so the plan has nothing to remind.
    expect(result.stderr).not.toContain('retries a 429');
    expect(first, seen).toMatchObject({ outcome: 'failed', failureClass: 'transient' });
    expect(second, seen).toMatchObject({ outcome: 'succeeded', summary: 'finished after resume' });
    expect(mock.requests.filter((r) => r.scriptIndex === 1 || r.scriptIndex === 2)).toHaveLength(
      OPENCLAW_TOOL_CALLS,
    );
    expect(requestsDuring(mock, second!).filter((r) => r.scriptIndex === 1 || r.scriptIndex === 2)).toEqual(
      [],
    );
    const [resumed] = requestsDuring(mock, second!, 0);
    const [started] = requestsDuring(mock, first!, 1);
    expect(resumed!.messagesCount).toBeGreaterThan(started!.messagesCount + 1);
    // openclaw goes on in the session it was given: both attempts name the same one.
    const sessions = (await timeline(c.home, run.id)).filter((e) => e.type === 'step.session');
    expect(sessions.map((e) => [e.attempt, e.resumed])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(sessions[1]!.sessionId).toBe(sessions[0]!.sessionId);
    expect(second!.session).toEqual({ sessionId: sessions[0]!.sessionId, resumed: true });
  });

  it('starts fresh, and says why, when its state no longer holds the session', {
    timeout: testBoundMs('openclaw', 4),
  }, async () => {
    const mock = await serve([]);
    const { c, agentDir } = localCase(mock);
    mock.enqueue(...script(`${c.workspace}/notes.md`), STARTED_OVER);
    const { result, run } = await runPlan(c, plan(c, 1));
    expect(result.code, result.stderr).toBe(1);
    // Its sessions live in the agent's SQLite state: removed, the id is unknown to it.
    const state = readdirSync(agentDir).filter((name) => name.startsWith('openclaw-agent.sqlite'));
    expect(state.length).toBeGreaterThan(0);
    for (const name of state) rmSync(join(agentDir, name), { recursive: true, force: true });
    expectExit(await runBaton(['retry', run.id, 'write'], { home: c.home }), 0);
    expectExit(
      await runBaton(['check'], { home: c.home, env: c.env, timeoutMs: attemptBoundMs('openclaw') * 3 }),
      0,
    );
    const [, second] = await stepAttempts(c, run.id, 'write');
    expect(second).toMatchObject({ outcome: 'succeeded', summary: 'started over' });
    const sessions = (await timeline(c.home, run.id)).filter((e) => e.type === 'step.session');
    expect(sessions.at(-1)).toMatchObject({ attempt: 2, resumed: false });
    expect(String(sessions.at(-1)!.reason)).toMatch(
      /^the CLI found no session [0-9a-f-]{36} to continue: started a fresh one$/,
    );
  });
});

describe('a workspace put back between attempts', () => {
  it('claude starts a fresh session, saying why, when the files changed since the attempt before', {
    timeout: testBoundMs('claude', 3),
  }, async () => {
    const mock = await serve([]);
    const c = cliCase('claude', mock);
    const notes = `${c.workspace}/notes.md`;
    mock.enqueue(
      {
        fault: 'ok',
        when: agentTurn('RESUME-ME', { hasToolResult: false }),
        reply: { toolCalls: [writeCall('claude', notes, 'written once')] },
      },
      {
        fault: 'server_error',
        status: 500,
        when: agentTurn('RESUME-ME', { hasToolResult: true }),
        repeat: 'forever',
      },
      STARTED_OVER,
    );
    const { result, run } = await runPlan(c, {
      name: 'claude-rollback',
      defaults: {
        agent: { command: cliCommand('claude') },
        timeoutMs: attemptBoundMs('claude'),
        retry: { maxAttempts: 1 },
        checkpoint: 'workspace',
      },
      steps: [{ id: 'write', instruction: `RESUME-ME: write ${notes}, then say done` }],
    });
    expect(result.code, result.stderr).toBe(1);
    expect(existsSync(notes)).toBe(true);
    // Attempt 1's file goes: the conversation that wrote it no longer matches the folder.
    expectExit(await runBaton(['rollback', run.id, 'write'], { home: c.home }), 0);
    expect(existsSync(notes)).toBe(false);
    expectExit(await runBaton(['retry', run.id, 'write'], { home: c.home }), 0);
    expectExit(
      await runBaton(['check'], { home: c.home, env: c.env, timeoutMs: attemptBoundMs('claude') * 2 }),
      0,
    );
    const [, second] = await stepAttempts(c, run.id, 'write');
    expect(second).toMatchObject({ outcome: 'succeeded', summary: 'started over' });
    const reason =
      'the workspace changed since attempt 1 ended (restored or edited): started a fresh session';
    const sessions = (await timeline(c.home, run.id)).filter((e) => e.type === 'step.session');
    expect(sessions.at(-1)).toMatchObject({ attempt: 2, resumed: false, reason });
    // The attempt record says the same (baton logs --json).
    expect(second!.session).toEqual({ sessionId: sessions.at(-1)!.sessionId, resumed: false, reason });
  });
});
