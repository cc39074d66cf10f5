/**
 * End to end: a prompt is one literal argument (never shell text), and required outputs cannot
 * point Baton at files outside the run workspace.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  agentCommand,
  attempts,
  expectExit,
  removeTempDirs,
  runBaton,
  runStatus,
  stopProcesses,
  tempDir,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { planDir } from './helpers/plans.js';

const TEST_TIMEOUT = 60_000;

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

function artifactRows(home: string): unknown[] {
  const db = new Database(join(home, 'baton.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT * FROM artifacts').all();
  } finally {
    db.close();
  }
}

describe('prompts reach the agent as one literal argument', () => {
  it(
    'an instruction full of shell metacharacters is passed verbatim and runs nothing',
    async () => {
      const { dir, home } = planDir('baton-cli-shell-');
      // If anything ever ran this through a shell, `~` is a throw-away HOME, never the real one.
      const fakeHome = join(dir, 'fake-home');
      const marker = join(fakeHome, 'keep-me');
      mkdirSync(marker, { recursive: true });
      const pwned = `/tmp/baton-pwned-${randomBytes(6).toString('hex')}`;
      const instruction = `$(touch ${pwned}); rm -rf ~/keep-me && echo "x" | cat > y; \`touch ${pwned}-tick\` '\\" * ? \${HOME} %s \n second line; > z`;
      const argvFile = join(dir, 'argv.json');
      const file = writePlan(
        dir,
        {
          name: 'metachars',
          defaults: { agent: { command: agentCommand('agent-echo-argv') } },
          steps: [{ id: 'echo', instruction }],
        },
        { format: 'json' },
      );
      const env = { ARGV_FILE: argvFile, HOME: fakeHome };
      expectExit(await runBaton(['run', file, '--id', 'meta'], { home, env }), 0);

      expect(JSON.parse(readFileSync(argvFile, 'utf8'))).toEqual([instruction]);
      expect(existsSync(pwned)).toBe(false);
      expect(existsSync(`${pwned}-tick`)).toBe(false);
      expect(existsSync(join(dir, 'y'))).toBe(false);
      expect(existsSync(join(dir, 'z'))).toBe(false);
      expect(existsSync(marker)).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    'an --input value with metacharacters, rendered into the instruction, stays literal',
    async () => {
      const { dir, home } = planDir('baton-cli-input-');
      const pwned = `/tmp/baton-pwned-${randomBytes(6).toString('hex')}`;
      const value = `"; touch ${pwned}; echo "{{inputs.topic}}`;
      const argvFile = join(dir, 'argv.json');
      const file = writePlan(dir, {
        name: 'input-metachars',
        inputs: { topic: {} },
        defaults: { agent: { command: agentCommand('agent-echo-argv') } },
        steps: [{ id: 'echo', instruction: 'Research <{{inputs.topic}}> now' }],
      });
      expectExit(
        await runBaton(['run', file, '--id', 'inp', '--input', `topic=${value}`], {
          home,
          env: { ARGV_FILE: argvFile },
        }),
        0,
      );
      // Substituted once, never re-scanned for templates, never parsed by a shell.
      expect(JSON.parse(readFileSync(argvFile, 'utf8'))).toEqual([`Research <${value}> now`]);
      expect(existsSync(pwned)).toBe(false);
    },
    TEST_TIMEOUT,
  );
});

describe('agent commands are checked where the kernel will find them', () => {
  it(
    'a shell reached through "link/.." in the workspace is refused when the plan loads (exit 2)',
    async () => {
      // workspace/link -> other/sub, so the kernel runs other/agent (a shell) for "link/../agent";
      // text-wise that path is workspace/agent, which does not exist.
      const { dir, home } = planDir('baton-cli-dotdot-');
      mkdirSync(join(dir, 'other', 'sub'), { recursive: true });
      symlinkSync(join(dir, 'other', 'sub'), join(dir, 'link'));
      symlinkSync('/bin/sh', join(dir, 'other', 'agent'));
      const pwned = `/tmp/baton-pwned-${randomBytes(6).toString('hex')}`;
      const file = writePlan(dir, {
        name: 'dotdot',
        defaults: { agent: { command: ['timeout', '60', 'link/../agent'], promptVia: 'stdin' } },
        steps: [{ id: 'a', instruction: `touch ${pwned}` }],
      });
      const result = await runBaton(['run', file, '--id', 'dotdot'], { home });
      expectExit(result, 2);
      expect(result.stderr).toContain('link/../agent');
      expect(result.stderr).toContain('is a shell');
      expect(existsSync(pwned)).toBe(false);
      expect(existsSync(join(home, 'baton.db'))).toBe(false);
    },
    TEST_TIMEOUT,
  );
});

describe('secrets from the environment are not stored', () => {
  it(
    'an agent and a hook command that echo an API key on stderr: masked in the database, the events and the output',
    async () => {
      const { dir, home } = planDir('baton-cli-secret-');
      const secret = 'zz9MYREALKEY0123456789abcdef';
      const file = writePlan(dir, {
        name: 'leaky',
        defaults: {
          agent: { command: agentCommand('agent-fail') },
          retry: { maxAttempts: 2, initialDelayMs: 1 },
        },
        hooks: [{ on: ['blocked'], command: agentCommand('agent-fail'), retries: 0 }],
        steps: [{ id: 'a', instruction: 'call the API' }],
      });
      const env = { FAIL_MESSAGE: `unauthorized: ${secret} was rejected`, ANTHROPIC_API_KEY: secret };
      const run = await runBaton(['run', file, '--id', 'leak'], { home, env });
      expectExit(run, 1);
      const status = await runBaton(['status', 'leak', '--json'], { home });
      const events = await runBaton(['timeline', 'leak', '--json'], { home });
      for (const result of [run, status, events]) expect(result.stdout + result.stderr).not.toContain(secret);
      expect(status.stdout).toContain('unauthorized: [redacted] was rejected');
      expect(run.stderr).toContain('hook 0 of run leak failed for good: hook command');
      expect(run.stderr).toContain('unauthorized: [redacted] was rejected');
      // Every byte the database keeps (the last process to close it folded the WAL into the file).
      expect(readFileSync(join(home, 'baton.db')).includes(secret)).toBe(false);
      expect(existsSync(join(home, 'baton.db-wal'))).toBe(false);
    },
    TEST_TIMEOUT,
  );
});

describe('required outputs stay inside the workspace', () => {
  it(
    'a required output that is a symlink to a file outside the workspace fails the step',
    async () => {
      const { dir, home } = planDir('baton-cli-symlink-');
      const workspace = join(dir, 'workspace');
      const outside = join(tempDir('baton-cli-outside-'), 'secret.txt');
      writeFileSync(outside, 'not yours\n');
      mkdirSync(workspace);
      symlinkSync(outside, join(workspace, 'report.md'));
      const file = writePlan(dir, {
        name: 'symlink',
        workspace: 'workspace',
        defaults: {
          agent: { command: agentCommand('agent-succeed') },
          retry: { maxAttempts: 3, initialDelayMs: 10 },
        },
        steps: [{ id: 'write', instruction: 'write the report', requiredOutputs: ['report.md'] }],
      });
      expectExit(await runBaton(['run', file, '--id', 'link'], { home }), 1);

      const run = await runStatus(home, 'link');
      expect(run.workspace).toBe(workspace);
      const step = run.steps[0]!;
      expect(step.status).toBe('blocked');
      expect(step.lastError).toContain('report.md');
      expect(step.lastError).toContain('outside the workspace');
      // A path escape is for a human: not retried.
      expect(step.attempt).toBe(1);
      const records = await attempts(home, 'link', 'write');
      expect(records.map((a) => [a.outcome, a.outputs])).toEqual([['failed', []]]);
      expect(artifactRows(home)).toEqual([]);
      const events = await timeline(home, 'link');
      expect(events.some((e) => e.type === 'step.succeeded')).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'a required output under a symlinked folder that leads outside fails the step too',
    async () => {
      const { dir, home } = planDir('baton-cli-symdir-');
      const outsideDir = tempDir('baton-cli-outside-dir-');
      const file = writePlan(dir, {
        name: 'symdir',
        defaults: {
          agent: { command: agentCommand('agent-write-outputs') },
          retry: { maxAttempts: 1 },
        },
        steps: [{ id: 'write', instruction: 'write it', requiredOutputs: ['out/result.txt'] }],
      });
      symlinkSync(outsideDir, join(dir, 'out'));
      // The agent writes through the symlink, so the file exists, but outside the workspace.
      expectExit(
        await runBaton(['run', file, '--id', 'symdir'], { home, env: { WRITE_OUTPUTS: 'out/result.txt' } }),
        1,
      );
      expect(existsSync(join(outsideDir, 'result.txt'))).toBe(true);
      const step = (await runStatus(home, 'symdir')).steps[0]!;
      expect(step.status).toBe('blocked');
      expect(step.lastError).toContain('outside the workspace');
      expect(artifactRows(home)).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it.each([['../x'], ['/etc/hostname'], ['a/../../x']])(
    'requiredOutputs %j is refused when the plan loads (exit 2)',
    async (output) => {
      const { dir, home } = planDir('baton-cli-escape-');
      const file = writePlan(dir, {
        name: 'escape',
        defaults: { agent: { command: agentCommand('agent-succeed') } },
        steps: [{ id: 'a', instruction: 'a', requiredOutputs: [output] }],
      });
      const result = await runBaton(['run', file, '--id', 'esc'], { home });
      expectExit(result, 2);
      expect(result.stderr).toMatch(/^baton: .*plan\.yaml: steps\.a\.requiredOutputs\[0\]: /);
      expect(result.stderr).toContain(JSON.stringify(output));
      expect(existsSync(join(home, 'baton.db'))).toBe(false);
    },
    TEST_TIMEOUT,
  );
});
