/**
 * The agent profiles against what the real CLIs printed (test/fixtures/agent-output: claude 2.1.332,
 * codex 0.171.0 and gemini 0.61.0, each pointed at `baton mock-llm`), then the classification that
 * follows from what they read.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentProfileName } from '../src/core/plan/types.js';
import { AGENT_PROFILES, chooseProfile } from '../src/executors/agent-profiles/choose-profile.js';
import {
  classifyAgentRun,
  classifyReportedError,
} from '../src/executors/agent-profiles/classify-agent-run.js';
import type { AgentReport } from '../src/executors/agent-profiles/types.js';
import { fixturesDir } from './helpers/cli.js';

interface Recorded {
  cli: AgentProfileName;
  scenario: string;
  exitCode: number;
  stdout: string;
  stderr: string;
}

function recorded(cli: string, scenario: string): Recorded {
  return JSON.parse(readFileSync(join(fixturesDir, 'agent-output', cli, `${scenario}.json`), 'utf8'));
}

function read(sample: Recorded): AgentReport {
  return AGENT_PROFILES[sample.cli].read(sample);
}

function classify(sample: Recorded) {
  return classifyAgentRun({
    profile: AGENT_PROFILES[sample.cli],
    program: sample.cli,
    exitCode: sample.exitCode,
    signal: null,
    timedOut: false,
    timeoutMs: 60_000,
    stdoutTail: sample.stdout,
    stderrTail: sample.stderr,
    report: read(sample),
  });
}

describe('recorded outputs of the real CLIs', () => {
  it.each([
    ['claude', 'success', 'scripted answer'],
    ['claude', 'write-tool', 'done writing'],
    ['codex', 'success', 'scripted answer'],
    ['codex', 'write-tool', 'done writing'],
    ['gemini', 'success', 'scripted answer'],
    ['gemini', 'write-tool', 'done writing'],
    ['codex', 'blip-then-ok', 'answer after a blip'],
    ['openclaw', 'success-exec', 'MOCK_OK reply #2'],
    ['openclaw', 'success-local', 'MOCK_OK reply #5'],
  ])('%s %s: the answer is the final text, not the JSON around it', (cli, scenario, answer) => {
    const sample = recorded(cli, scenario);
    expect(read(sample).answer).toBe(answer);
    expect(classify(sample)).toEqual({ ok: true });
  });

  it('claude: usage is summed over modelUsage, with the cost it reports', () => {
    const usage = read(recorded('claude', 'write-tool')).usage;
    expect(usage).toMatchObject({ inputTokens: 5171, outputTokens: 18, costReported: true });
    expect(usage?.costUsd).toBeCloseTo(0.021044, 6);
  });

  it('codex: usage is summed over turn.completed; the model-metadata warning is not an error', () => {
    const report = read(recorded('codex', 'success'));
    expect(report.usage).toMatchObject({ inputTokens: 5344, outputTokens: 4, costReported: false });
    expect(report.error).toBeUndefined();
  });

  it('gemini: usage is summed over every model it called, the router included', () => {
    const sample = recorded('gemini', 'success');
    const models = Object.values(
      (JSON.parse(sample.stdout) as { stats: { models: Record<string, { tokens: { prompt: number } }> } })
        .stats.models,
    );
    expect(models.length).toBeGreaterThan(1);
    const prompt = models.reduce((sum, model) => sum + model.tokens.prompt, 0);
    expect(read(sample).usage?.inputTokens).toBe(prompt);
  });

  it.each([
    ['claude', 'rate-limit-429-min', 'transient', 429],
    ['claude', 'server-error-500', 'transient', 500],
    ['claude', 'overloaded-529', 'transient', 529],
    ['claude', 'auth-401', 'fatal', 401],
    ['codex', 'rate-limit-429-min', 'transient', 429],
    ['codex', 'rate-limit-429-default', 'transient', 429],
    ['codex', 'server-error-500', 'transient', undefined],
    ['codex', 'overloaded-529', 'transient', 529],
    ['codex', 'auth-401', 'fatal', 401],
    ['gemini', 'rate-limit-429-min', 'transient', 429],
    ['gemini', 'auth-401', 'fatal', 401],
    ['openclaw', 'rate-limit-429-default', 'transient', undefined],
    ['openclaw', 'server-error-500', 'transient', 500],
    // agent --local says a provider's failure is a cli_error: its HTTP status still decides.
    ['openclaw', 'server-error-500-local', 'transient', 500],
    ['openclaw', 'overloaded-529', 'transient', undefined],
    ['openclaw', 'auth-401', 'fatal', 401],
  ] as const)('%s %s: %s from the structured error', (cli, scenario, failureClass, status) => {
    const sample = recorded(cli, scenario);
    const report = read(sample);
    expect(report.error?.status).toBe(status);
    const verdict = classify(sample);
    expect(verdict).toMatchObject({ ok: false, failureClass });
    if (verdict.ok) return;
    // The message is the provider's words, never a slice of the JSON record.
    expect(verdict.message).toBe(report.error?.message.slice(0, 500));
    expect(verdict.message).not.toMatch(/"session_id"|"uuid"|\{"type"/);
    expect(verdict.message.length).toBeLessThanOrEqual(500);
  });

  it('openclaw: usage and its own cost figure; a timeout (exit 2) is transient; no Gateway is a setup problem', () => {
    const usage = read(recorded('openclaw', 'success-exec')).usage;
    expect(usage).toMatchObject({ inputTokens: 102, outputTokens: 7, costReported: true });
    expect(read(recorded('openclaw', 'success-local')).usage).toMatchObject({
      inputTokens: 105,
      outputTokens: 7,
    });
    expect(classify(recorded('openclaw', 'timeout'))).toMatchObject({ failureClass: 'transient' });
    expect(classify(recorded('openclaw', 'no-gateway'))).toMatchObject({
      failureClass: 'invalid',
      message: expect.stringMatching(/gateway agent requires credentials/),
    });
  });

  it('openclaw agent --local: its retry budget is read from its agent folder in the state', () => {
    const cap = (command: string[], env: Record<string, string>, files: Record<string, string>) =>
      AGENT_PROFILES.openclaw.retryCap!(command, 1, { env, readTextFile: (path) => files[path] });
    const capped = JSON.stringify({ retry: { provider: { maxRetries: 1 } } });
    const local = ['openclaw', 'agent', '--local', '--agent', 'ops', '--json'];
    expect(cap(local, { HOME: '/h' }, {}).reminder).toContain(
      'in /h/.openclaw/agents/ops/agent/settings.json',
    );
    expect(
      cap(local, { HOME: '/h' }, { '/h/.openclaw/agents/ops/agent/settings.json': capped }).reminder,
    ).toBe(undefined);
    // OPENCLAW_STATE_DIR moves the state; without --agent it is the main agent.
    const main = ['openclaw', 'agent', '--local', '--json'];
    expect(
      cap(main, { HOME: '/h', OPENCLAW_STATE_DIR: '/s' }, { '/s/agents/main/agent/settings.json': capped })
        .reminder,
    ).toBe(undefined);
    // The setting in the wrong place (a workspace's, read only by agent exec) still reminds.
    expect(cap(main, { HOME: '/h' }, { '/w/.openclaw/settings.json': capped }).reminder).toContain(
      'maxRetries',
    );
  });

  it.each([
    ['gemini', 'Please retry in 1s'],
    ['openclaw', 'Retry-After: 1 seconds'],
  ])('%s 429 saying "%s": the wait is honoured', (cli) => {
    expect(
      classify(recorded(cli, cli === 'gemini' ? 'rate-limit-429-min' : 'rate-limit-429-default')),
    ).toMatchObject({
      failureClass: 'transient',
      retryAfterMs: 1000,
    });
  });

  it('numbers in unrelated fields do not change the class', () => {
    const overloaded = recorded('claude', 'overloaded-529');
    const record = JSON.parse(overloaded.stdout.trim()) as Record<string, unknown>;
    const noisy = {
      ...record,
      duration_ms: 401,
      duration_api_ms: 403,
      num_turns: 429,
      session_id: '500-401',
    };
    expect(classify({ ...overloaded, stdout: `${JSON.stringify(noisy)}\n` })).toMatchObject({
      failureClass: 'transient',
    });
    const success = recorded('claude', 'success');
    const ok = { ...(JSON.parse(success.stdout.trim()) as object), duration_ms: 401, ttft_ms: 429 };
    expect(classify({ ...success, stdout: `${JSON.stringify(ok)}\n` })).toEqual({ ok: true });
  });

  it('codex with a model it has no metadata for: a 429 is still transient', () => {
    const sample = recorded('codex', 'rate-limit-429-min');
    expect(sample.stdout).toMatch(/Model metadata for `mock-model` not found/);
    expect(classify(sample)).toMatchObject({ failureClass: 'transient' });
  });

  it('every recorded sample is read without throwing', () => {
    for (const cli of ['claude', 'codex', 'gemini', 'openclaw']) {
      for (const file of readdirSync(join(fixturesDir, 'agent-output', cli))) {
        const sample = recorded(cli, file.replace(/\.json$/, ''));
        expect(() => classify(sample)).not.toThrow();
      }
    }
  });
});

describe('setup problems are never retried', () => {
  const run = (profile: AgentProfileName, exitCode: number, stdout: string, stderr = '') =>
    classifyAgentRun({
      profile: AGENT_PROFILES[profile],
      program: profile,
      exitCode,
      signal: null,
      timedOut: false,
      timeoutMs: 1000,
      stdoutTail: stdout,
      stderrTail: stderr,
      report: AGENT_PROFILES[profile].read({ stdout, stderr, exitCode }),
    });

  it.each([
    ['gemini', 55, '', 'Untrusted folder', 'invalid'],
    ['gemini', 41, '', 'auth', 'fatal'],
    ['claude', 1, '', '"do it" was read as a value of --allowedTools, not as a prompt', 'invalid'],
    ['claude', 1, '', "error: unknown option '--bogus'", 'invalid'],
    ['codex', 2, '', "error: unexpected argument '--bogus' found", 'invalid'],
    [
      'codex',
      1,
      '',
      'Not inside a trusted directory and --skip-git-repo-check was not specified.',
      'invalid',
    ],
  ] as const)('%s exit %i (%s)', (profile, exitCode, stdout, stderr, failureClass) => {
    expect(run(profile, exitCode, stdout, stderr)).toMatchObject({ ok: false, failureClass });
  });

  it('claude "Not logged in" is fatal', () => {
    const stdout = `${JSON.stringify({ type: 'result', subtype: 'success', is_error: true, api_error_status: null, result: 'Not logged in · Please run /login' })}\n`;
    expect(run('claude', 1, stdout)).toMatchObject({
      failureClass: 'fatal',
      message: 'Not logged in · Please run /login',
    });
  });

  it('aider: a rate limit it gave up on fails the attempt; one it recovered from does not', () => {
    const limited = 'litellm.RateLimitError: slow down\nRetrying in 20 seconds...\n';
    expect(run('aider', 0, limited)).toMatchObject({ failureClass: 'transient', retryAfterMs: 20_000 });
    const recovered = `${limited}Done.\nTokens: 2.1k sent, 150 received. Cost: $0.0072 message, $0.0072 session.\n`;
    expect(run('aider', 0, recovered)).toEqual({ ok: true });
  });

  it('exit 0 with text that merely mentions a limit is a success', () => {
    expect(run('generic', 0, "when you've hit your limit the API returns 429\n")).toEqual({ ok: true });
    expect(run('claude', 0, 'rate limit: 429 explained\n')).toEqual({ ok: true });
  });

  it('exit 0 with stderr text that a setup rule knows is still a success (only a record fails exit 0)', () => {
    expect(run('claude', 0, 'done\n', "to see it fail, try: error: unknown option '--bogus'\n")).toEqual({
      ok: true,
    });
    expect(run('codex', 0, 'done\n', "error: unexpected argument '--x' found (quoted)\n")).toEqual({
      ok: true,
    });
  });
});

describe('what a message says about waiting', () => {
  it.each([
    ['Please try again in 20s', 20_000],
    ['Rate limit reached … Please try again in 120ms.', 120],
    ['Retrying in 1m30s...', 90_000],
    ['try again in 13h42m', 49_320_000],
    ["You've hit your usage limit. Upgrade to Pro or try again in 3 days 2 hours.", 266_400_000],
    ['mock 429 rate_limit_exceeded; Retry-After: 30', 30_000],
    ['nothing about time', undefined],
  ])('%s -> %s ms', (message, wait) => {
    const verdict = classifyReportedError({ status: 429, message });
    expect(verdict).toMatchObject({
      ok: false,
      failureClass: wait === undefined ? 'transient' : 'transient',
    });
    expect((verdict as { retryAfterMs?: number }).retryAfterMs).toBe(wait);
  });

  it.each([
    ['Quota exceeded. Check your plan and billing details.', 'fatal'],
    [
      "API Error: Can't reach the API server at nonexistent.invalid (ENOTFOUND) (connection_failed)",
      'transient',
    ],
    ['Not logged in · Please run /login', 'fatal'],
    ['something went wrong in the agent', 'agent_failed'],
  ])('%s -> %s', (message, failureClass) => {
    expect(classifyReportedError({ message })).toMatchObject({ failureClass });
  });
});

describe('choosing a profile', () => {
  it.each([
    [['claude', '-p'], 0, 'claude'],
    [['/usr/local/bin/codex', 'exec', '--json'], 0, 'codex'],
    [['timeout', '600', 'gemini', '-o', 'json'], 2, 'gemini'],
    [['node', '/opt/x/node_modules/@google/gemini-cli/bundle/gemini.js'], 0, 'gemini'],
    [['my-agent', '--model', 'claude'], 0, 'generic'],
  ] as const)('%j -> %s', (command, programIndex, name) => {
    expect(chooseProfile({ command }, programIndex).name).toBe(name);
  });

  it('an explicit profile wins', () => {
    expect(chooseProfile({ command: ['my-wrapper'], profile: 'codex' }).name).toBe('codex');
  });
});

describe('prompt placement', () => {
  const prompt = '-starts with a dash $(rm -rf ~)';
  it('claude and codex: after "--", so a variadic flag cannot swallow it', () => {
    expect(
      AGENT_PROFILES.claude.invocation(
        { command: ['claude', '-p', '--allowedTools', 'Bash', 'Read'], promptVia: 'arg' },
        prompt,
      ).argv,
    ).toEqual(['claude', '-p', '--allowedTools', 'Bash', 'Read', '--', prompt]);
    expect(
      AGENT_PROFILES.codex.invocation({ command: ['codex', 'exec'], promptVia: 'arg' }, prompt).argv,
    ).toEqual(['codex', 'exec', '--', prompt]);
  });

  it("a CLI's own -- stays where it is: the prompt or its flag goes on the right side of it", () => {
    const at = (profile: AgentProfileName, command: string[], programIndex = 0) =>
      AGENT_PROFILES[profile].invocation({ command, promptVia: 'arg' }, prompt, programIndex).argv;
    // env's own -- is env's: claude still gets one of its own.
    expect(at('claude', ['env', '--', 'claude', '-p', '--allowedTools', 'Bash'], 2)).toEqual([
      'env',
      '--',
      'claude',
      '-p',
      '--allowedTools',
      'Bash',
      '--',
      prompt,
    ]);
    expect(at('codex', ['codex', 'exec', '--'])).toEqual(['codex', 'exec', '--', prompt]);
    expect(at('gemini', ['gemini', '-o', 'json', '--'])).toEqual([
      'gemini',
      '-o',
      'json',
      `--prompt=${prompt}`,
      '--',
    ]);
    expect(at('openclaw', ['openclaw', 'agent', '--local', '--json', '-m'])).toEqual([
      'openclaw',
      'agent',
      '--local',
      '--json',
      `--message=${prompt}`,
    ]);
    expect(at('openclaw', ['openclaw', 'agent', 'exec', '--json'])).toEqual([
      'openclaw',
      'agent',
      'exec',
      '--json',
      '--',
      prompt,
    ]);
    // An agent id that happens to be "exec" is not the exec form.
    expect(at('openclaw', ['openclaw', 'agent', '--agent', 'exec', '--local'])).toContain(
      `--message=${prompt}`,
    );
  });

  it('openclaw: a command with --message-file gets the prompt where that flag says, never --message beside it', () => {
    const via = (command: string[], promptVia: 'arg' | 'stdin' = 'arg') =>
      AGENT_PROFILES.openclaw.invocation({ command, promptVia }, prompt);
    const exec = ['openclaw', 'agent', 'exec', '--json'];
    // `-` is stdin for agent exec; /dev/stdin for either form.
    expect(via([...exec, '--message-file', '-'])).toEqual({
      argv: [...exec, '--message-file', '-'],
      stdinText: prompt,
    });
    expect(via(['openclaw', 'agent', '--local', '--message-file=/dev/stdin'])).toEqual({
      argv: ['openclaw', 'agent', '--local', '--message-file=/dev/stdin'],
      stdinText: prompt,
    });
    // A bare --message-file ending the command gets the file that is stdin in that form.
    expect(via([...exec, '--message-file'])).toEqual({
      argv: [...exec, '--message-file', '-'],
      stdinText: prompt,
    });
    expect(via(['openclaw', 'agent', '--local', '--message-file'])).toEqual({
      argv: ['openclaw', 'agent', '--local', '--message-file', '/dev/stdin'],
      stdinText: prompt,
    });
    // The user's own prompt file: nothing added (openclaw refuses a second prompt); warned below.
    expect(via([...exec, '--message-file', 'task.md'])).toEqual({
      argv: [...exec, '--message-file', 'task.md'],
    });
    // promptVia: stdin says the same thing itself.
    expect(via([...exec, '--message-file', '-'], 'stdin').stdinText).toBe(prompt);
  });

  it('openclaw: warns when --message-file keeps the instruction from reaching it', () => {
    const warnings = (command: string[]) => AGENT_PROFILES.openclaw.commandWarnings(command);
    expect(warnings(['openclaw', 'agent', 'exec', '--json', '--message-file', '-'])).toEqual([]);
    expect(warnings(['openclaw', 'agent', 'exec', '--json', '--message-file'])).toEqual([]);
    expect(warnings(['openclaw', 'agent', 'exec', '--json', '--message-file', 'task.md'])).toEqual([
      'openclaw reads its prompt from the file "task.md" (--message-file), so the step\'s instruction never reaches it: write --message-file -, and Baton sends the prompt on stdin',
    ]);
    expect(warnings(['openclaw', 'agent', '--local', '--json', '--message-file', '-'])).toEqual([
      'openclaw agent without exec reads --message-file - as a file named "-": write --message-file /dev/stdin, and Baton sends the prompt on stdin',
    ]);
  });

  it('gemini: one --prompt=<text> element; a bare -p waiting for it is dropped', () => {
    expect(
      AGENT_PROFILES.gemini.invocation({ command: ['gemini', '-o', 'json', '-p'], promptVia: 'arg' }, prompt)
        .argv,
    ).toEqual(['gemini', '-o', 'json', `--prompt=${prompt}`]);
  });
});
