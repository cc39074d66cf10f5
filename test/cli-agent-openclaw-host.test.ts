/**
 * OpenClaw, the skill's own host, without surprises: the real openclaw 2026.9 (Node 26,
 * test/hosts/openclaw) driven by the baton binary against the mock model server. A command that
 * reads its prompt with `--message-file` gets it there; an attempt Baton stops leaves nothing in
 * the temp folder Baton was given nor lock files of its own in openclaw's fixed lock folder;
 * `baton agents --plan` reminds of openclaw's uncapped retries for the form the docs recommend.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { attemptBoundMs, CLI_START_MS, testBoundMs } from './helpers/agent-cli-bounds.js';
import {
  agentTurn,
  attemptTempFolders,
  cliCase,
  cliCommand,
  mockPerTest,
  runPlan,
  stepAttempts,
} from './helpers/agent-steps.js';
import { batonJson, runBaton, writePlan } from './helpers/cli.js';
import { describeWithOpenclaw, openclawEntry, openclawNode } from './helpers/mock-cli.js';

/** openclaw's lock folder: fixed under /tmp, keyed on the user id (see openclaw.ts). */
const lockFolder = `/tmp/openclaw-state-locks-${process.getuid?.() ?? 0}`;

// Long enough for two attempts one after the other (the --message-file test).
describeWithOpenclaw('openclaw as the skill runs it', { timeout: testBoundMs('openclaw', 2) }, () => {
  const serve = mockPerTest();

  it('a command with --message-file - (or a bare --message-file last) gets the prompt on stdin and runs', async () => {
    const server = await serve([
      { fault: 'ok', when: agentTurn('FROM-STDIN'), reply: { text: 'read from stdin' } },
      { fault: 'ok', when: agentTurn('BARE-FLAG'), reply: { text: 'read from the bare flag' } },
    ]);
    const c = cliCase('openclaw', server);
    const seen = watchStateDirs(c.home, []);
    const { result, run } = await runPlan(c, {
      name: 'openclaw-message-file',
      defaults: { timeoutMs: attemptBoundMs('openclaw') },
      steps: [
        {
          id: 'dash',
          instruction: 'FROM-STDIN: -starts like a flag and has "quotes"',
          agent: { command: [...cliCommand('openclaw'), '--message-file', '-'] },
        },
        {
          id: 'bare',
          instruction: 'BARE-FLAG: answer',
          agent: { command: [...cliCommand('openclaw'), '--message-file'] },
        },
      ],
    }).finally(seen.stop);
    expect(result.code, result.stderr).toBe(0);
    expect(run.status).toBe('succeeded');
    expect((await stepAttempts(c, run.id, 'dash'))[0]?.summary).toBe('read from stdin');
    expect((await stepAttempts(c, run.id, 'bare'))[0]?.summary).toBe('read from the bare flag');
    // The whole instruction arrived as it was written.
    const dash = server.requests.find((r) => r.scriptIndex === 0);
    expect(dash?.userText).toContain('FROM-STDIN: -starts like a flag and has "quotes"');
    // openclaw removed its state folders itself, and Baton the lock files it left for them.
    expect(seen.dirs.size).toBeGreaterThan(0);
    expect(lockFilesOf(seen.dirs)).toEqual([]);
  });

  it('an attempt stopped at its timeout leaves nothing in the temp folder Baton was given, nor lock files of its own in /tmp', async () => {
    const server = await serve([
      { fault: 'stall', ms: 600_000, when: agentTurn('STALL-HERE'), repeat: 'forever' },
    ]);
    const c = cliCase('openclaw', server);
    const batonTmp = join(c.dir, 'tmp');
    mkdirSync(batonTmp);
    c.env.TMPDIR = batonTmp;
    const systemTmpBefore = execFolders(tmpdir());
    const seen = watchStateDirs(c.home, [batonTmp]);
    const { run } = await runPlan(c, {
      name: 'openclaw-stopped',
      // openclaw must make its per-turn state before the timeout stops it: its start is the bound.
      defaults: {
        agent: { command: cliCommand('openclaw') },
        timeoutMs: CLI_START_MS.openclaw,
        retry: { maxAttempts: 1 },
      },
      steps: [{ id: 'stall', instruction: 'STALL-HERE: wait for the model' }],
    }).finally(seen.stop);
    const [attempt] = await stepAttempts(c, run.id, 'stall');
    expect(attempt?.failureClass).toBe('transient');
    expect(attempt?.message).toMatch(`timed out after ${CLI_START_MS.openclaw} ms`);
    // openclaw got as far as making its per-turn state before it was stopped.
    expect(seen.dirs.size, 'openclaw-agent-exec-* folders seen during the attempt').toBeGreaterThan(0);
    expect(readdirSync(batonTmp)).toEqual([]);
    expect(attemptTempFolders(c.home)).toEqual([]);
    expect(execFolders(tmpdir()).filter((name) => !systemTmpBefore.includes(name))).toEqual([]);
    expect(lockFilesOf(seen.dirs)).toEqual([]);
  });

  it('baton agents --plan reminds of its uncapped retries for [node, …/openclaw.mjs, agent, exec], until the workspace caps them', async () => {
    const server = await serve([]);
    const c = cliCase('openclaw', server);
    const planPath = writePlan(c.dir, {
      version: 1,
      name: 'openclaw-reminder',
      workspace: './work',
      defaults: { agent: { command: [openclawNode, openclawEntry, 'agent', 'exec', '--json'] } },
      steps: [{ id: 'one', instruction: 'hello' }],
    });
    // No openclaw on PATH: only the plan names it.
    const env = { ...c.env, PATH: '/usr/bin:/bin' };
    const settings = join(c.workspace, '.openclaw', 'settings.json');
    writeFileSync(settings, '{}');
    const text = await runBaton(['agents', '--plan', planPath], { home: c.home, env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `✗ steps.one.agent (openclaw): openclaw retries a 429 up to 10 times (about 150 s) inside one attempt`,
    );
    expect(text.stdout).toContain(`put {"retry":{"provider":{"maxRetries":1}}} in ${settings}`);
    // Once the workspace caps them, nothing to remind.
    writeFileSync(settings, JSON.stringify({ retry: { provider: { maxRetries: 1 } } }));
    const json = await batonJson<{ plan: { warnings: { message: string }[] } }>(
      ['agents', '--plan', planPath],
      { home: c.home, env },
    );
    expect(json.plan.warnings).toEqual([]);
  }, 120_000);
});

/**
 * The state folders openclaw makes (`openclaw-agent-exec-*` in its TMPDIR: the attempts' own temp
 * folders under `home`, or `folders`), by real path, seen while it runs (polled until `stop`).
 */
function watchStateDirs(home: string, folders: string[]): { dirs: Set<string>; stop: () => void } {
  const dirs = new Set<string>();
  const look = () => {
    for (const folder of [...folders, ...attemptTempFolders(home)])
      for (const entry of execFolders(folder)) dirs.add(join(realOrSelf(folder), entry));
  };
  const poll = setInterval(look, 100);
  return { dirs, stop: () => clearInterval(poll) };
}

/**
 * The lock files openclaw keeps for these state folders in its fixed lock folder:
 * `<family>.<first 8 hex digits of sha256(<state>/state/openclaw.sqlite)>.lock.sqlite`.
 */
function lockFilesOf(stateDirs: Set<string>): string[] {
  const locks = existsSync(lockFolder) ? readdirSync(lockFolder) : [];
  const hashes = [...stateDirs].map((dir) =>
    createHash('sha256')
      .update(join(dir, 'state', 'openclaw.sqlite'))
      .digest('hex')
      .slice(0, 8),
  );
  return locks.filter((name) => hashes.some((hash) => name.includes(`.${hash}.lock.sqlite`)));
}

/** `openclaw-agent-exec-*` entries of a folder (none when it does not exist). */
function execFolders(folder: string): string[] {
  try {
    return readdirSync(folder).filter((name) => name.startsWith('openclaw-agent-exec-'));
  } catch {
    return [];
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
