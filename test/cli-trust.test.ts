/**
 * End to end, as an attacker writing plans would try: commands that get a shell or an interpreter to
 * run text, through the real `baton` command. None may run (a canary file proves it) unless the
 * operator trusted it; each refusal is exit 2 naming the plan file and field, with nothing stored.
 */
import { copyFileSync, existsSync, linkSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { makeAgentWorld } from './helpers/agent-world.js';
import {
  agentCommand,
  expectExit,
  removeTempDirs,
  runBaton,
  stopProcesses,
  tempDir,
  writePlan,
} from './helpers/cli.js';
import { legacyState, runLegacy, writeState } from './helpers/legacy.js';

const TEST_TIMEOUT = 180_000;

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

const bash = ['/usr/bin/bash', '/bin/bash'].find((file) => existsSync(file))!;
const sh = ['/usr/bin/sh', '/bin/sh'].find((file) => existsSync(file))!;

/** Runs `jobs` with at most `limit` at a time (each is a baton process). */
async function pool<T>(items: readonly T[], limit: number, job: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await job(item);
    }),
  );
}

describe('hostile agent and hook commands never run', () => {
  it(
    'a corpus of at least 120 commands: exit 2 naming the field, no canary, nothing stored',
    async () => {
      const dir = tempDir('baton-trust-corpus-');
      const canary = join(dir, 'CANARY');
      const touch = `touch ${canary}`;
      // Shells reached by path, link, hardlink and copy, and scripts named like agents.
      symlinkSync(bash, join(dir, 'claude-link'));
      copyFileSync(bash, join(dir, 'claude'));
      copyFileSync(sh, join(dir, 'agent'));
      let hardlink = join(dir, 'codex');
      try {
        linkSync(bash, hardlink);
      } catch {
        hardlink = join(dir, 'claude'); // bash is on another file system: the copy stands in
      }
      writeFileSync(join(dir, 'gemini'), `#!/bin/sh\n${touch}\n`, { mode: 0o755 });
      writeFileSync(join(dir, 'evil.py'), `import os\nos.system(${JSON.stringify(touch)})\n`);
      writeFileSync(
        join(dir, 'evil.mjs'),
        `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(canary)}, '');\n`,
      );
      const shells = ['sh', 'bash', 'dash', sh, bash, './claude-link', './claude', './agent', hardlink];
      const corpus: string[][] = [
        ...shells.flatMap((shell) => [[shell, '-c', touch], [shell, '-ec', touch], [shell]]),
        ['env', 'sh', '-c', touch],
        ['env', '-i', 'bash', '-c', touch],
        ['nohup', 'sh', '-c', touch],
        ['timeout', '60', 'sh', '-c', touch],
        ['nice', '-n', '1', 'bash', '-c', touch],
        ['stdbuf', '-oL', 'sh', '-c', touch],
        ['setsid', 'sh', '-c', touch],
        ['flock', join(dir, 'lock'), '-c', touch],
        ['time', 'sh', '-c', touch],
        ['env', 'nice', 'timeout', '5', 'sh', '-c', touch],
        ['setarch', 'x86_64', 'sh', '-c', touch],
        ['strace', '-f', '-o', '/dev/null', 'sh', '-c', touch],
        ['prlimit', '--nofile=256', 'sh', '-c', touch],
        ['setpriv', 'sh', '-c', touch],
        ['/lib64/ld-linux-x86-64.so.2', '/bin/sh', '-c', touch],
        ['chroot', '/', 'sh', '-c', touch],
        ['unshare', 'sh', '-c', touch],
        ['nsenter', '-t', '1', 'sh', '-c', touch],
        ['sudo', 'sh', '-c', touch],
        ['su', '-c', touch],
        ['runuser', '-u', 'root', '--', 'sh', '-c', touch],
        ['script', '-qc', touch, '/dev/null'],
        ['watch', '-n', '1', touch],
        ['xargs', 'touch'],
        ['find', dir, '-maxdepth', '0', '-exec', 'touch', canary, ';'],
        ['git', '-c', `alias.x=!f(){ ${touch}; }; f`, 'x'],
        ['git', '-c', 'alias.x=!f(){ eval "$1"; }; f', 'x'],
        ['env', 'GIT_CONFIG_COUNT=1', 'GIT_CONFIG_KEY_0=alias.x', `GIT_CONFIG_VALUE_0=!${touch}`, 'git', 'x'],
        ['python3', '-c', `import os; os.system(${JSON.stringify(touch)})`],
        ['python3', '-'],
        ['python3', '/dev/stdin'],
        ['python3', '/proc/self/fd/0'],
        ['python3', '-m', 'timeit', '-n', '1'],
        ['python3', './evil.py'],
        ['python3', '-i', './evil.py'],
        ['env', 'PYTHONSTARTUP=./evil.py', 'python3', '-i'],
        ['env', 'PYTHONPATH=.', 'python3', './evil.py'],
        ['node', '-e', `require('fs').writeFileSync(${JSON.stringify(canary)}, '')`],
        ['node', '-p', '1'],
        ['node', '--eval=1'],
        ['node', '/dev/stdin'],
        ['node', '-'],
        ['node', './evil.mjs'],
        ['node', '--import', './evil.mjs', './evil.mjs'],
        ['node', '-r', './evil.mjs', './evil.mjs'],
        ['node', '--env-file=.env', './evil.mjs'],
        ['env', 'NODE_OPTIONS=--import=./evil.mjs', 'node', './evil.mjs'],
        ['env', 'NODE_OPTIONS=--require=./evil.mjs', 'claude', '-p'],
        ['perl', '-e', `system(${JSON.stringify(touch)})`],
        ['perl', `-Mstrict;system(${JSON.stringify(touch)})`, '-e1'],
        ['perl', '-ne', 'print'],
        ['env', `PERL5OPT=-Mstrict;system(${JSON.stringify(touch)})`, 'perl'],
        ['env', 'PERL5LIB=.', 'perl', './evil.py'],
        ['env', `LESSOPEN=|${touch}`, 'less', '/etc/hostname'],
        ['env', 'LD_PRELOAD=./evil.so', 'claude'],
        ['env', 'BASH_ENV=./evil.sh', 'claude'],
        ['env', 'ENV=./evil.sh', 'claude'],
        ['env', '-S', `sh -c '${touch}'`],
        ['env', '--split-string', `sh -c '${touch}'`],
        ['ruby', '-e', `system(${JSON.stringify(touch)})`],
        ['php', '-r', `system(${JSON.stringify(touch)});`],
        ['lua', '-e', `os.execute(${JSON.stringify(touch)})`],
        ['tclsh'],
        ['awk', `BEGIN{system(${JSON.stringify(touch)})}`],
        ['sed', '-n', `1e ${touch}`, '/etc/hostname'],
        ['vim', '-c', `!${touch}`, '-c', 'q'],
        ['vi', '-c', `!${touch}`],
        ['ex', `+!${touch}`, '+q'],
        ['make', '--eval', `x:;${touch}`, 'x'],
        ['tar', `--checkpoint-action=exec=${touch}`, '--checkpoint=1', '-cf', '/dev/null', '/etc/hostname'],
        ['tar', `--to-command=${touch}`, '-xf', '/dev/null'],
        ['gdb', '-batch', '-ex', `shell ${touch}`],
        ['sqlite3', ':memory:', `.shell ${touch}`],
        ['zip', '-T', '-TT', touch, join(dir, 'x.zip'), '/etc/hostname'],
        ['ed'],
        ['expect', '-c', `exec ${touch}`],
        ['npx', '-y', 'some-agent'],
        ['npm', 'exec', '--', 'touch', canary],
        ['npm', 'run', 'agent'],
        ['bun', './evil.mjs'],
        ['deno', 'run', './evil.mjs'],
        ['eval', touch],
        ['exec', 'sh'],
        ['ssh', 'localhost', touch],
        ['busybox', 'sh', '-c', touch],
        ['./gemini', '-p'],
        [join(dir, 'gemini'), '-p'],
        ['timeout', '5', './gemini'],
        ['cat'],
        ['tee', canary],
        ['cp', '/etc/hostname', canary],
        ['touch', canary],
        ['{prompt}'],
        ['env', '{prompt}'],
        ['no-such-agent-xyz', '-p'],
        ['claude', '-p'], // not installed on PATH here: nothing can be checked, nothing runs
      ];
      expect(corpus.length).toBeGreaterThanOrEqual(120);
      const home = join(dir, 'home');
      const failures: string[] = [];
      const plans = corpus.map((command, index) => {
        const field = index % 4 === 3 ? 'hooks[0].command' : `steps.s${index}.agent.command`;
        const step = {
          id: `s${index}`,
          instruction: `hello $(${touch}) \`${touch}\`; ${touch}`,
          ...(field.startsWith('hooks') ? { agent: { command: ['echo'] } } : { agent: { command } }),
        };
        const plan = {
          name: `attack-${index}`,
          steps: [step],
          ...(field.startsWith('hooks') ? { hooks: [{ on: ['succeeded'], command }] } : {}),
        };
        return { command, field, file: writePlan(dir, plan, { format: 'json', name: `plan-${index}.json` }) };
      });
      // The plans' PATH has no agent CLI: a program named like one is whatever file the plan names.
      const env = { PATH: '/usr/local/bin:/usr/bin:/bin', BATON_TRUSTED_AGENTS: '' };
      await pool(plans, 4, async ({ command, field, file }) => {
        const result = await runBaton(['run', file], { home, cwd: dir, env });
        const where = `${file}: ${field}`;
        if (result.code !== 2 || !result.stderr.startsWith(`baton: ${where}`)) {
          failures.push(`${JSON.stringify(command)} → exit ${result.code}: ${result.stderr.trim()}`);
        }
      });
      expect(failures).toEqual([]);
      expect(existsSync(canary)).toBe(false);
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'STEP_AGENT_CMD on the legacy path: refused with the variable named, the state file untouched',
    async () => {
      const dir = tempDir('baton-trust-legacy-');
      const canary = join(dir, 'CANARY');
      copyFileSync(bash, join(dir, 'claude'));
      writeFileSync(join(dir, 'openclaw'), `#!/bin/sh\ntouch ${canary}\n`, { mode: 0o755 });
      const file = writeState(dir, legacyState(['one']));
      const before = readFileSync(file, 'utf8');
      const commands = [
        `sh -ec touch ${canary}`,
        `env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0=!touch${canary} git x`,
        `${dir}/claude -p`,
        `${dir}/openclaw agent --message`,
        'python3 /dev/stdin',
        JSON.stringify(['python3', '-c', `open(${JSON.stringify(canary)}, 'w')`]),
      ];
      for (const command of commands) {
        const result = expectExit(
          await runLegacy('check', file, { STEP_AGENT_CMD: command, BATON_TRUSTED_AGENTS: '' }),
          2,
        );
        expect(result.stderr, command).toMatch(/^baton: STEP_AGENT_CMD\[\d+\]: command .* refused: /);
      }
      expect(readFileSync(file, 'utf8')).toBe(before);
      expect(existsSync(canary)).toBe(false);
    },
    TEST_TIMEOUT,
  );
});

describe('baton trust', () => {
  it(
    'a trusted program runs; once changed it is refused until trusted again; rm forgets it',
    async () => {
      const dir = tempDir('baton-trust-add-');
      const home = join(dir, 'home');
      const agent = join(dir, 'my-agent');
      const argvFile = join(dir, 'argv.json');
      writeFileSync(agent, `#!/bin/sh\nprintf '%s' "$1" > ${argvFile}\n`, { mode: 0o755 });
      const file = writePlan(dir, {
        name: 'mine',
        steps: [{ id: 'a', instruction: 'hi', agent: { command: [agent] } }],
      });
      const env = { BATON_TRUSTED_AGENTS: '' };
      const refused = expectExit(await runBaton(['run', file], { home, env }), 2);
      expect(refused.stderr).toContain(`baton trust add ${agent}`);
      expect(existsSync(join(home, 'baton.db'))).toBe(false);

      expectExit(await runBaton(['trust', 'add', agent], { home, env }), 0);
      expectExit(await runBaton(['run', file], { home, env }), 0);
      expect(readFileSync(argvFile, 'utf8')).toBe('hi');

      writeFileSync(agent, `#!/bin/sh\nsh -c "$1"\n`);
      const changed = expectExit(await runBaton(['run', file], { home, env }), 2);
      expect(changed.stderr).toContain('changed since it was trusted');
      const list = expectExit(await runBaton(['trust', 'list', '--json'], { home, env }), 0);
      expect(JSON.parse(list.stdout).programs).toEqual([
        expect.objectContaining({ path: agent, state: 'changed' }),
      ]);

      expectExit(await runBaton(['trust', 'add', agent], { home, env }), 0);
      expectExit(await runBaton(['trust', 'rm', agent], { home, env }), 0);
      expectExit(await runBaton(['run', file], { home, env }), 2);
      expectExit(await runBaton(['trust', 'rm', agent], { home, env }), 2);
    },
    TEST_TIMEOUT,
  );

  it(
    'a file in the current folder named without ./ is looked up on PATH: the refusal says ./name, which is trusted',
    async () => {
      const dir = tempDir('baton-trust-here-');
      const home = join(dir, 'home');
      writeFileSync(join(dir, 'report-agent.mjs'), 'console.log("done");\n');
      const bare = expectExit(await runBaton(['trust', 'add', 'report-agent.mjs'], { home, cwd: dir }), 2);
      expect(bare.stderr).toContain('baton trust: "report-agent.mjs" not found on PATH (');
      expect(bare.stderr).toContain(
        'a name without a slash is looked up on PATH only. The file in this folder is ./report-agent.mjs: baton trust add ./report-agent.mjs',
      );
      expect(existsSync(join(home, 'trusted-programs.json'))).toBe(false);
      // A name found nowhere gets no such hint.
      const missing = expectExit(await runBaton(['trust', 'add', 'no-such-agent'], { home, cwd: dir }), 2);
      expect(missing.stderr).not.toContain('./no-such-agent');
      const added = expectExit(
        await runBaton(['trust', 'add', './report-agent.mjs', '--json'], { home, cwd: dir }),
        0,
      );
      expect(JSON.parse(added.stdout)).toMatchObject({ path: join(dir, 'report-agent.mjs') });
    },
    TEST_TIMEOUT,
  );

  it(
    'refuses to trust a shell, an interpreter, a wrapper or a copy of a shell',
    async () => {
      const dir = tempDir('baton-trust-refuse-');
      const home = join(dir, 'home');
      copyFileSync(bash, join(dir, 'my-agent'));
      for (const program of ['bash', 'python3', 'env', 'node', join(dir, 'my-agent')]) {
        const result = expectExit(await runBaton(['trust', 'add', program], { home }), 2);
        expect(result.stderr, program).toMatch(
          /baton trust: refused: .*(runs other programs or text as code)/,
        );
      }
      expect(existsSync(join(home, 'trusted-programs.json'))).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'a known agent CLI installed from npm needs no trust; a script merely named like it does',
    async () => {
      const world = makeAgentWorld();
      const dir = tempDir('baton-trust-known-');
      const file = writePlan(dir, {
        name: 'known',
        steps: [
          { id: 'c', instruction: 'hi', agent: { command: ['claude', '-p'] } },
          { id: 'x', instruction: 'hi', agent: { command: ['codex', 'exec'] } },
        ],
      });
      const env = { PATH: `${world.bin}:/usr/bin:/bin`, BATON_TRUSTED_AGENTS: '' };
      expectExit(await runBaton(['propose', file], { home: join(dir, 'home'), env }), 0);
      writeFileSync(join(dir, 'claude'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      const fake = expectExit(
        await runBaton(['propose', file], {
          home: join(dir, 'home2'),
          env: { ...env, PATH: `${dir}:/usr/bin:/bin` },
        }),
        2,
      );
      expect(fake.stderr).toContain(`${file}: steps.c.agent.command[0]`);
      expect(fake.stderr).toContain('is neither a known agent CLI');
    },
    TEST_TIMEOUT,
  );
});

describe('baton agents', () => {
  it(
    'says a program merely named like a CLI is not it, and does not run it',
    async () => {
      const dir = tempDir('baton-trust-agents-');
      const canary = join(dir, 'CANARY');
      writeFileSync(join(dir, 'claude'), `#!/bin/sh\ntouch ${canary}\necho 2.0.0\n`, { mode: 0o755 });
      const result = expectExit(
        await runBaton(['agents', '--json'], {
          cwd: dir,
          env: { PATH: `${dir}:/usr/bin:/bin`, BATON_TRUSTED_AGENTS: '' },
        }),
        0,
      );
      const claude = (
        JSON.parse(result.stdout).agents as { profile: string; problems: { fix: string }[] }[]
      ).find((agent) => agent.profile === 'claude');
      expect(claude?.problems).toEqual([
        expect.objectContaining({ fix: expect.stringContaining(`baton trust add ${join(dir, 'claude')}`) }),
      ]);
      expect(existsSync(canary)).toBe(false);
    },
    TEST_TIMEOUT,
  );
});

describe('prompts with shell text reach the agent as one literal argument in every prompt mode', () => {
  const prompt =
    '--dangerously-skip-permissions $(touch CANARY) `touch CANARY`; touch CANARY\n-p second line';
  it.each([
    // As a bare argument, a prompt starting with "-" gets the leading space docs/safety.md describes (no CLI reads it as a flag).
    ['arg', { promptVia: 'arg' }, (argv: string[]) => argv[argv.length - 1]?.replace(/^ -/, '-')],
    [
      'placeholder',
      { promptVia: 'placeholder', extra: ['--in', '{prompt}', '--after'] },
      (argv: string[]) => argv[1]?.replace(/^ -/, '-'),
    ],
    ['claude profile (after --)', { profile: 'claude' }, (argv: string[]) => argv[argv.indexOf('--') + 1]],
    [
      'gemini profile (--prompt=)',
      { profile: 'gemini' },
      (argv: string[]) => argv.find((a) => a.startsWith('--prompt='))?.slice(9),
    ],
    [
      'openclaw profile (--message=)',
      { profile: 'openclaw' },
      (argv: string[]) => argv.find((a) => a.startsWith('--message='))?.slice(10),
    ],
  ] as const)(
    '%s',
    async (_mode, spec, pick) => {
      const dir = tempDir('baton-prompt-mode-');
      const argvFile = join(dir, 'argv.json');
      const { extra = [], ...rest } = spec as { extra?: string[]; promptVia?: string; profile?: string };
      const file = writePlan(
        dir,
        {
          name: 'modes',
          defaults: { retry: { maxAttempts: 1 } },
          steps: [
            {
              id: 'p',
              instruction: prompt,
              agent: { command: [...agentCommand('agent-echo-argv'), ...extra], capRetries: false, ...rest },
            },
          ],
        },
        { format: 'json' },
      );
      await runBaton(['run', file], { home: join(dir, 'home'), cwd: dir, env: { ARGV_FILE: argvFile } });
      const argv = JSON.parse(readFileSync(argvFile, 'utf8')) as string[];
      expect(pick(argv as string[])).toBe(prompt);
      expect(existsSync(join(dir, 'CANARY'))).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'stdin',
    async () => {
      const dir = tempDir('baton-prompt-stdin-');
      const argvFile = join(dir, 'argv.json');
      const file = writePlan(dir, {
        name: 'stdin',
        steps: [
          {
            id: 'p',
            instruction: prompt,
            agent: { command: agentCommand('agent-echo-argv'), promptVia: 'stdin' },
          },
        ],
      });
      expectExit(
        await runBaton(['run', file], {
          home: join(dir, 'home'),
          cwd: dir,
          env: { ARGV_FILE: argvFile, READ_STDIN: '1' },
        }),
        0,
      );
      expect(JSON.parse(readFileSync(argvFile, 'utf8'))).toEqual({ argv: [], stdin: prompt });
      expect(existsSync(join(dir, 'CANARY'))).toBe(false);
    },
    TEST_TIMEOUT,
  );
});
