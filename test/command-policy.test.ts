import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import {
  assertAgentCommand,
  type CommandPolicyOptions,
  checkAgentCommand as checkWith,
} from '../src/executors/command-policy.js';
import { trustedPrograms } from '../src/executors/trusted-programs.js';
import { makeAgentWorld } from './helpers/agent-world.js';

// Agent CLIs installed as npm installs them, and the operator's trusted scripts (see agent-world.ts).
const world = makeAgentWorld();
afterAll(() => fs.rmSync(world.dir, { recursive: true, force: true }));
const IN_WORLD: CommandPolicyOptions = { pathEnv: world.pathEnv, cwd: world.agents, trust: world.trust };
/** The policy on this machine as the world sets it up; `options` override. */
const checkAgentCommand = (argv: readonly string[], options: CommandPolicyOptions = {}) =>
  checkWith(argv, { ...IN_WORLD, ...options });

/** [argv, the element the reason must name, options] */
type Refused = [argv: string[], culprit: string, options?: CommandPolicyOptions];

const LEGACY: CommandPolicyOptions = { mode: 'legacy' };

const REFUSED: Refused[] = [
  // Shells, by base name (case-insensitive, with or without .exe).
  [['sh', '-c'], 'sh'],
  [['bash'], 'bash'],
  [['/bin/bash', '-lc'], '/bin/bash'],
  [['/usr/bin/sh'], '/usr/bin/sh'],
  [['dash'], 'dash'],
  [['zsh', '-c'], 'zsh'],
  [['ksh93'], 'ksh93'],
  [['mksh'], 'mksh'],
  [['ash'], 'ash'],
  [['fish', '-c'], 'fish'],
  [['csh'], 'csh'],
  [['tcsh'], 'tcsh'],
  [['busybox', 'sh'], 'busybox'],
  [['rbash'], 'rbash'],
  [['yash'], 'yash'],
  [['pwsh', '-Command'], 'pwsh'],
  [['powershell.exe', '-EncodedCommand', 'ZQBjAGgAbwA='], 'powershell.exe'],
  [['bash.EXE'], 'bash.EXE'],
  [['BASH'], 'BASH'],
  [['cmd.exe', '/C'], 'cmd.exe'],
  [['CMD', '/k'], 'CMD'],
  [['C:\\Windows\\System32\\cmd.exe', '/c'], 'C:\\Windows\\System32\\cmd.exe'],
  // Wrappers: the wrapped command is checked with every rule.
  [['env', 'bash'], 'bash'],
  [['env', '-i', 'PATH=/x', 'sh'], 'sh'],
  [['/usr/bin/env', '-u', 'HOME', 'zsh'], 'zsh'],
  [['env', '-', 'sh'], 'sh'],
  [['env', '-S', 'claude -p'], '-S'],
  [['env', '-iS', 'claude -p'], '-iS'],
  [['env'], 'env'],
  [['nohup', 'bash'], 'bash'],
  [['xargs', 'claude'], 'xargs'],
  [['sudo', '-u', 'x', 'bash'], 'bash'],
  [['sudo', '-s', 'claude'], '-s'],
  [['sudo', 'FOO=1', 'dash'], 'dash'],
  [['doas', 'sh'], 'sh'],
  [['su', '-c'], 'su'],
  [['timeout', '5', 'python3', '-c'], '-c'],
  [['timeout', '-k', '5', '10', 'bash'], 'bash'],
  [['timeout', '5'], 'timeout'],
  [['nice', '-n', '3', 'node', '-e'], '-e'],
  [['nice', '-10', 'bash'], 'bash'],
  [['ionice', '-c', '3', 'bash'], 'bash'],
  [['stdbuf', '-oL', 'sh'], 'sh'],
  [['setsid', '-w', 'bash'], 'bash'],
  [['chrt', '-f', '10', 'bash'], 'bash'],
  [['taskset', '0x1', 'sh'], 'sh'],
  [['flock', '/tmp/lock', '-c'], '-c'],
  [['flock', '-w', '5', '/tmp/lock', 'bash'], 'bash'],
  [['nsenter', '-t', '1', '-m', 'sh'], 'nsenter'],
  [['unshare', '-r', 'bash'], 'unshare'],
  [['chroot', '/', 'sh'], 'chroot'],
  [['chroot', '/tmp/root', 'claude'], 'chroot'],
  [['time', '-f', '%e', 'bash'], 'bash'],
  [['command', 'bash'], 'bash'],
  [['builtin', 'eval'], 'eval'],
  [['exec', 'claude'], 'exec'],
  [['eval'], 'eval'],
  [['source'], 'source'],
  [['.'], '.'],
  [['watch', 'claude'], 'watch'],
  [['script', '-qc'], 'script'],
  [['ssh', 'host'], 'ssh'],
  [['find', '.', '-exec'], '-exec'],
  [['find', '.', '-okdir', 'rm', '{}', ';'], '-okdir'],
  [['env', 'nice', '-n', '1', 'timeout', '5', 'sudo', 'sh'], 'sh'],
  [['coreutils', '--coreutils-prog=env', 'bash'], '--coreutils-prog=env'],
  [['env', '{prompt}'], '{prompt}'],
  [['{prompt}'], '{prompt}'],
  // Interpreters given inline code, stdin, or no script at all.
  [['python3', '-c'], '-c'],
  // A module run as a program decides what its arguments mean: `python -m timeit <prompt>` runs it.
  [['python3', '-m', 'timeit', '-n', '1'], '-m'],
  [['python3', '-m', 'agent'], '-m'],
  [['python', '-Ic'], '-Ic'],
  [['python3.12', '-c', 'print(1)'], '-c'],
  [['pypy3', '-c'], '-c'],
  [['python3', '-'], '-'],
  [['python3'], 'python3'],
  [['python3', '-i', 'agent.py'], '-i'],
  [['python3', '-c', '{prompt}'], '-c'],
  [['python3', '{prompt}'], '{prompt}'],
  [['node', '-e'], '-e'],
  [['node', '-p'], '-p'],
  [['node', '-pe'], '-pe'],
  [['node', '--print'], '--print'],
  [['node', '--eval=1'], '--eval=1'],
  [['nodejs', '-e', '1'], '-e'],
  [['node', '--import', 'data:text/javascript,1', 'agent.mjs'], '--import'],
  [['node', '--import'], '--import'],
  [['node', '-r', '{prompt}', 'agent.mjs'], '-r'],
  [['node'], 'node'],
  [['perl', '-e'], '-e'],
  [['perl', '-E', 'say 1'], '-E'],
  [['perl', '-ne'], '-ne'],
  [['perl', '-pe'], '-pe'],
  [['ruby', '-e'], '-e'],
  [['php', '-r'], '-r'],
  [['php', '-a'], '-a'],
  [['osascript', '-e'], '-e'],
  [['deno', 'eval'], 'deno'],
  [['deno', 'run', 'agent.ts'], 'deno'],
  [['bun', 'agent.ts'], 'bun'],
  [['bun', '-e'], 'bun'],
  [['lua', '-e'], '-e'],
  [['luajit', '-e'], '-e'],
  [['lua5.4', '-e', 'x'], '-e'],
  [['tclsh'], 'tclsh'],
  [['wish', 'app.tcl'], 'wish'],
  [['Rscript', '-e'], 'Rscript'],
  [['julia', '-e'], '-e'],
  [['julia', '--eval', '1'], '--eval'],
  [['awk'], 'awk'],
  [['gawk', '-f', 'x.awk'], 'gawk'],
  [['mawk'], 'mawk'],
  [['nawk'], 'nawk'],
  [['sed', '-n'], 'sed'],
  [['npx', '-c'], 'npx'],
  [['npx', '-y', 'some-agent'], 'npx'],
  [['npx', 'claude'], 'npx'],
  [['npm', 'exec', '--call', 'x'], 'npm'],
  [['npm', 'run', 'agent'], 'npm'],
  // Interpreters' other ways to load code, and what reads its program from stdin.
  [['perl', '-Mstrict;system("id")', 'agent.pl'], '-Mstrict;system("id")'],
  [['node', '--require', './agent.mjs', 'agent.mjs'], '--require'],
  [['node', '--env-file=.env', 'agent.mjs'], '--env-file=.env'],
  [['ruby', '-r./evil', 'agent.rb'], '-r./evil'],
  [['perl', '-d:Foo', 'agent.pl'], '-d:Foo'],
  [['php', '-d', 'auto_prepend_file=/tmp/x.php', 'agent.php'], '-d'],
  [['python3', '/dev/stdin'], '/dev/stdin'],
  [['python3', '/proc/self/fd/0'], '/proc/self/fd/0'],
  [['node', '/dev/stdin'], '/dev/stdin'],
  [['python3', 'untrusted.py'], 'untrusted.py'],
  // Code-loading variables set through env, whatever the program.
  [['env', 'NODE_OPTIONS=--require=/tmp/x.js', 'claude', '-p'], 'NODE_OPTIONS=--require=/tmp/x.js'],
  [['env', 'PERL5OPT=-Mstrict', 'perl', 'agent.pl'], 'PERL5OPT=-Mstrict'],
  [['env', 'LESSOPEN=|id', 'less'], 'LESSOPEN=|id'],
  [['env', 'GIT_CONFIG_COUNT=1', 'GIT_CONFIG_KEY_0=alias.x', 'git', 'x'], 'GIT_CONFIG_COUNT=1'],
  [['env', 'LD_PRELOAD=/tmp/x.so', 'claude'], 'LD_PRELOAD=/tmp/x.so'],
  [['env', 'BASH_ENV=/tmp/x', 'claude'], 'BASH_ENV=/tmp/x'],
  // Programs that are no agent: not trusted, whatever they would do with the prompt.
  [['git', '-c', 'alias.x=!f(){ eval "$1"; }; f', 'x'], 'git'],
  [['setarch', 'x86_64', 'sh', '-c'], 'setarch'],
  [['strace', '-f', '-o', '/dev/null', 'sh', '-c'], 'strace'],
  [['prlimit', '--nofile=256', 'sh', '-c'], 'prlimit'],
  [['setpriv', 'sh', '-c'], 'setpriv'],
  [['/lib64/ld-linux-x86-64.so.2', '/bin/sh', '-c'], '/lib64/ld-linux-x86-64.so.2'],
  [['vim', '-c', '!id'], 'vim'],
  [['make', '--eval', 'x:;id'], 'make'],
  [['tar', '--checkpoint-action=exec=id', '-cf', '/dev/null', '.'], 'tar'],
  [['gdb', '-ex', 'shell id'], 'gdb'],
  [['sqlite3', ':memory:', '.shell id'], 'sqlite3'],
  [['zip', '-T', '-TT', 'id', 'x.zip', '.'], 'zip'],
  [['ed'], 'ed'],
  [['less'], 'less'],
  [['cat'], 'cat'],
  [['no-such-agent-binary-xyz', '-p'], 'no-such-agent-binary-xyz'],
  [['expect', '-c'], '-c'],
  // Legacy mode refuses every -c and -e.
  [['amp', '-c'], '-c', LEGACY],
  [['claude', '-e'], '-e', LEGACY],
  [['codex', 'exec', '-c', 'model=o3'], '-c', LEGACY],
];

const ALLOWED: string[][] = [
  ['codex', 'exec', '-c', 'model=o3'],
  ['claude', '-c', '-p'],
  ['claude', '-p', '--output-format', 'json'],
  ['gemini', '-p'],
  ['openclaw', 'agent', '--message', '{prompt}', '--agent', 'main'],
  ['python3', 'agent.py'],
  ['/usr/bin/env', 'claude', '-p'],
  ['timeout', '60', 'claude', '-p'],
  ['nice', '-n', '5', 'codex', 'exec'],
  ['aider', '--message'],
  ['amp', '-x'],
  ['claude', '-p', '{prompt}', '--output-format', 'json'],
  ['node', 'agent.mjs', '-e', '-p'],
  ['python3', 'agent.py', '-c'],
  ['python3', '-W', 'error', 'agent.py'],
  ['env', 'FOO=1', 'claude', '-p'],
  ['timeout', '--signal=KILL', '600', 'codex', 'exec', '--json'],
  ['stdbuf', '-oL', 'gemini', '-p'],
  ['perl', '-w', 'agent.pl'],
  ['opencode', 'run'],
  ['echo'],
  ['true'],
  ['false'],
  ['env', 'PATH=/usr/bin:/bin', 'echo'],
];

describe('checkAgentCommand refuses', () => {
  it(`has a corpus of at least 120 commands (${REFUSED.length})`, () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(120);
  });

  it.each(REFUSED)('%j (naming %s)', (argv, culprit, options) => {
    const verdict = checkAgentCommand(argv, options);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toContain(JSON.stringify(culprit));
  });

  it.each([
    [[], 'argv is empty'],
    [[''], 'argv[0] is empty'],
    [['claude', 'a\0b'], 'argv[1] contains a NUL byte'],
    [['claude', 42 as unknown as string], 'argv[1] is not a string'],
  ])('malformed argv %j', (argv, reason) => {
    const verdict = checkAgentCommand(argv);
    expect(verdict).toEqual({ ok: false, reason: expect.stringContaining(reason) });
  });

  it('explains why and how to fix', () => {
    expect(checkAgentCommand(['bash'])).toEqual({
      ok: false,
      reason:
        '"bash" is a shell: a shell would interpret the prompt as code; run the agent binary directly, e.g. ["claude","-p"]',
    });
  });
});

describe('checkAgentCommand allows agent CLIs in native mode', () => {
  it.each(ALLOWED)('%j', (...argv) => {
    expect(checkAgentCommand(argv)).toMatchObject({ ok: true });
  });

  it('allows the same commands in legacy mode when they have no -c or -e element', () => {
    for (const argv of ALLOWED.filter((a) => !a.includes('-c') && !a.includes('-e'))) {
      expect(checkAgentCommand(argv, LEGACY), JSON.stringify(argv)).toMatchObject({ ok: true });
    }
  });

  it('treats any arguments of a plain agent as data; legacy refuses exactly the -c/-e elements', () => {
    const arg = fc.oneof(
      fc.constantFrom('-c', '-e', '-p', 'sh', 'bash', '{prompt}', '--eval=1', '|', ';'),
      fc.string({ minLength: 1 }).filter((s) => !s.includes('\0')),
    );
    fc.assert(
      fc.property(fc.constantFrom('claude', 'codex', 'gemini', 'aider'), fc.array(arg), (agent, args) => {
        const argv = [agent, ...args];
        expect(checkAgentCommand(argv)).toMatchObject({ ok: true });
        const legacy = checkAgentCommand(argv, LEGACY);
        expect(legacy.ok).toBe(!args.includes('-c') && !args.includes('-e'));
      }),
    );
  });
});

describe('checkAgentCommand resolves argv[0] on disk', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-policy-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  /** The operator trusts every regular file made in `dir` (shells stay refused: their rules come first). */
  const trustDir = (): CommandPolicyOptions['trust'] => {
    const files: string[] = [];
    const walk = (folder: string) => {
      for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
        const file = path.join(folder, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (entry.isFile()) files.push(file);
      }
    };
    walk(dir);
    return trustedPrograms(null, { BATON_TRUSTED_AGENTS: files.join(':') });
  };
  const checkAgentCommand = (argv: readonly string[], options: CommandPolicyOptions = {}) =>
    checkWith(argv, { trust: trustDir(), ...options });
  const link = (name: string, target: string): string => {
    const file = path.join(dir, name);
    fs.symlinkSync(target, file);
    return file;
  };
  const executable = (name: string): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    return file;
  };
  const bash = ['/bin/bash', '/usr/bin/bash'].find((file) => fs.existsSync(file));

  it.skipIf(bash === undefined)('refuses a symlink named "agent" that points at bash', () => {
    const agent = link('agent', bash!);
    const byPath = checkAgentCommand([agent, '-p']);
    expect(byPath.ok).toBe(false);
    if (!byPath.ok) expect(byPath.reason).toMatch(/resolves to .*bash.*is a shell/);
    expect(checkAgentCommand(['agent', '-p'], { pathEnv: dir }).ok).toBe(false);
    expect(checkAgentCommand(['./agent'], { cwd: dir }).ok).toBe(false);
    expect(checkAgentCommand(['timeout', '5', 'agent'], { pathEnv: dir }).ok).toBe(false);
  });

  it.skipIf(!fs.existsSync('/bin/sh'))('refuses a symlink to /bin/sh whatever sh resolves to', () => {
    expect(checkAgentCommand([link('runner', '/bin/sh')]).ok).toBe(false);
  });

  it('applies interpreter and wrapper rules to the resolved name', () => {
    const helper = link('helper', process.execPath);
    expect(checkAgentCommand([helper, '-e', '1'])).toEqual({
      ok: false,
      reason: expect.stringContaining('"-e" (argv[1]) makes'),
    });
    expect(checkAgentCommand([helper, 'agent.mjs'], IN_WORLD)).toMatchObject({ ok: true });
    const env = ['/usr/bin/env', '/bin/env'].find((file) => fs.existsSync(file));
    if (env !== undefined) expect(checkAgentCommand([link('launch', env), 'bash']).ok).toBe(false);
  });

  it('reports where the program a wrapper runs is, for choosing its profile', () => {
    executable('claude');
    const at = (argv: string[]) => {
      const verdict = checkAgentCommand(argv, { pathEnv: `${dir}:/usr/bin:/bin` });
      return verdict.ok ? verdict.programIndex : verdict.reason;
    };
    expect(at(['claude', '-p'])).toBe(0);
    expect(at(['timeout', '600', 'claude', '-p'])).toBe(2);
    expect(at(['env', 'A=1', 'nice', '-n', '5', 'claude'])).toBe(5);
  });

  it('follows the first executable match on PATH and refuses programs it cannot find', () => {
    executable('claude');
    // The file found is reported, so the spawn runs exactly what was checked (no second PATH search).
    expect(checkAgentCommand(['claude', '-p'], { pathEnv: dir })).toEqual({
      ok: true,
      executable: path.join(dir, 'claude'),
      programIndex: 0,
    });
    // What cannot be found cannot be checked: refused, with where it was looked for.
    expect(checkAgentCommand(['missing-agent', '-p'], { pathEnv: dir })).toEqual({
      ok: false,
      reason: expect.stringContaining(`"missing-agent" was not found on PATH (${dir})`),
    });
  });

  it.skipIf(bash === undefined)(
    'resolves "../agent" from a symlinked folder as the kernel does: against the real folder',
    () => {
      // <dir>/real/a/b is the workspace, reached as <dir>/w/ws (a symlink). The child runs
      // <dir>/real/a/agent for "../agent"; a lexical resolve would check <dir>/w/agent instead.
      fs.mkdirSync(path.join(dir, 'real', 'a', 'b'), { recursive: true });
      fs.mkdirSync(path.join(dir, 'w'));
      fs.symlinkSync(path.join(dir, 'real', 'a', 'b'), path.join(dir, 'w', 'ws'));
      fs.writeFileSync(path.join(dir, 'w', 'agent'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      fs.symlinkSync(bash!, path.join(dir, 'real', 'a', 'agent'));
      const cwd = path.join(dir, 'w', 'ws');
      expect(checkAgentCommand(['../agent'], { cwd }).ok).toBe(false);
      fs.rmSync(path.join(dir, 'real', 'a', 'agent'));
      fs.writeFileSync(path.join(dir, 'real', 'a', 'agent'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      expect(checkAgentCommand(['../agent'], { cwd })).toEqual({
        ok: true,
        executable: path.join(fs.realpathSync(dir), 'real', 'a', 'agent'),
        programIndex: 0,
      });
    },
  );

  it.skipIf(bash === undefined)(
    'resolves "link/.." as the kernel does: the parent of the link\'s target, not the link\'s folder',
    () => {
      // <dir>/k/ws/link -> <dir>/k/other/sub; "link/../agent" is <dir>/k/other/agent for the kernel,
      // where a lexical resolve names <dir>/k/ws/agent (no such file, so nothing would be checked).
      const base = path.join(dir, 'k');
      fs.mkdirSync(path.join(base, 'ws'), { recursive: true });
      fs.mkdirSync(path.join(base, 'other', 'sub'), { recursive: true });
      const ws = path.join(base, 'ws');
      fs.symlinkSync(path.join(base, 'other', 'sub'), path.join(ws, 'link'));
      const agent = path.join(base, 'other', 'agent');
      fs.symlinkSync(bash!, agent);
      expect(checkAgentCommand(['link/../agent'], { cwd: ws }).ok).toBe(false);
      expect(checkAgentCommand(['timeout', '60', 'link/../agent'], { cwd: ws }).ok).toBe(false);
      expect(checkAgentCommand(['agent'], { cwd: ws, pathEnv: 'link/..' }).ok).toBe(false);
      expect(checkAgentCommand(['agent'], { pathEnv: `${ws}/link/..` }).ok).toBe(false);
      fs.rmSync(agent);
      fs.writeFileSync(agent, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      expect(checkAgentCommand(['link/../agent'], { cwd: ws })).toEqual({
        ok: true,
        executable: path.join(fs.realpathSync(base), 'other', 'agent'),
        programIndex: 0,
      });
    },
  );

  it.skipIf(bash === undefined)('follows env where it changes how the wrapped program is found', () => {
    const shells = path.join(dir, 'shells');
    fs.mkdirSync(shells);
    fs.symlinkSync(bash!, path.join(shells, 'agent'));
    const refused = (argv: string[], options: CommandPolicyOptions = {}) =>
      expect(checkAgentCommand(argv, options), argv.join(' ')).toMatchObject({ ok: false });
    refused(['env', `PATH=${shells}`, 'agent']);
    refused(['env', 'FOO=1', 'agent'], { pathEnv: shells });
    refused(['env', '-C', shells, './agent']);
    refused(['env', `-C${shells}`, './agent']);
    refused(['env', `--chdir=${shells}`, './agent']);
    refused(['env', '--chdir', shells, 'agent'], { pathEnv: '.' });
    refused(['env', '-P', shells, 'agent']);
    refused(['timeout', '5', 'env', `PATH=${shells}`, 'agent']);
    // Without PATH (env -i, env -u PATH) env searches the default path, where no "agent" is.
    const notFound = {
      ok: false,
      reason: expect.stringContaining('"agent" was not found on PATH (/bin:/usr/bin)'),
    };
    expect(checkAgentCommand(['env', '-i', 'agent'], { pathEnv: shells })).toEqual(notFound);
    expect(checkAgentCommand(['env', '-u', 'PATH', 'agent'], { pathEnv: shells })).toEqual(notFound);
    refused(['env', '-i', `PATH=${shells}`, 'agent']);
    // After `-` or `--` env reads no more options: `-C=x` and `-i=1` are assignments there.
    refused(['env', '-', '-C=x', './agent'], { cwd: shells });
    refused(['env', '--', '-i=1', 'agent'], { pathEnv: shells });
    // GNU env takes unambiguous abbreviations of its long options.
    refused(['env', '--sp', 'sh -c "echo hi"']);
    refused(['env', '--ch', '/tmp', 'sh', '-c']);
    refused(['env', '--ch', shells, './agent']);
    refused(['env', '--argv0', 'x', 'agent'], { pathEnv: shells });
    expect(checkAgentCommand(['env', '--u', 'PATH', 'agent'], { pathEnv: shells })).toEqual(notFound);
    expect(checkAgentCommand(['env', '--ignore-e', 'agent'], { pathEnv: shells })).toEqual(notFound);
  });

  it('reports the link it found, not the file the link points to (argv[0] keeps its meaning)', () => {
    const target = executable('real-agent');
    const alias = link('alias-agent', target);
    expect(checkAgentCommand(['alias-agent'], { pathEnv: dir })).toEqual({
      ok: true,
      executable: alias,
      programIndex: 0,
    });
    expect(assertAgentCommand(['alias-agent'], { pathEnv: dir, trust: trustDir() })).toBe(alias);
  });

  it('reads a link to a multi-call binary as the applet it names (busybox env on Alpine)', () => {
    const busybox = executable('busybox');
    link('env', busybox);
    // Read as env, it wraps claude; but it is no system env, so Baton cannot tell what it does.
    expect(checkAgentCommand([path.join(dir, 'env'), 'claude', '-p'], IN_WORLD)).toEqual({
      ok: false,
      reason: expect.stringContaining(
        `is ${fs.realpathSync(busybox)}, not the system's program of that name`,
      ),
    });
    expect(checkAgentCommand([path.join(dir, 'env'), 'sh'])).toMatchObject({ ok: false });
    expect(checkAgentCommand([busybox, 'sh'])).toMatchObject({ ok: false });
  });
});

describe('assertAgentCommand', () => {
  it('throws a BatonError AGENT_CMD_REFUSED naming the command, the reason and the fix', () => {
    let thrown: unknown;
    try {
      assertAgentCommand(['sh', '-c']);
    } catch (error) {
      thrown = error;
    }
    expect(isBatonError(thrown, 'AGENT_CMD_REFUSED')).toBe(true);
    expect((thrown as Error).message).toBe(
      'command ["sh","-c"] refused: "sh" is a shell: a shell would interpret the prompt as code. ' +
        'Run the agent binary directly, e.g. ["claude","-p"].',
    );
  });

  it('returns for an allowed command', () => {
    expect(() => assertAgentCommand(['claude', '-p'], IN_WORLD)).not.toThrow();
  });

  it('names where the command came from and the element at fault', () => {
    expect(() =>
      assertAgentCommand(['timeout', '5', 'bash'], {
        ...IN_WORLD,
        where: 'plan.yaml: steps.report.agent.command',
      }),
    ).toThrow(
      /^plan\.yaml: steps\.report\.agent\.command\[2\]: command \["timeout","5","bash"\] refused: "bash" is a shell/,
    );
    expect(() =>
      assertAgentCommand(['env', 'NODE_OPTIONS=-r x', 'claude'], { ...IN_WORLD, where: 'STEP_AGENT_CMD' }),
    ).toThrow(/^STEP_AGENT_CMD\[1\]: .* sets NODE_OPTIONS, which makes programs load or run code/);
  });

  it('rejects an unknown mode as a bad argument', () => {
    const mode = 'strict' as unknown as 'native';
    expect(() => checkAgentCommand(['claude'], { mode })).toThrow(/mode "strict"/);
  });
});

describe('trust, not names: what may receive prompt text', () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-trust-')));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const bash = ['/usr/bin/bash', '/bin/bash'].find((file) => fs.existsSync(file))!;
  const refusedAs = (argv: string[], text: string, options: CommandPolicyOptions = {}) =>
    expect(checkWith(argv, { cwd: dir, pathEnv: '/usr/bin:/bin', ...options })).toEqual({
      ok: false,
      reason: expect.stringContaining(text),
    });

  it('refuses a shell script, a hardlink and a copy of a shell named like an agent CLI', () => {
    fs.writeFileSync(path.join(dir, 'claude'), '#!/bin/sh\nexec sh -c "$1"\n', { mode: 0o755 });
    fs.copyFileSync(bash, path.join(dir, 'codex'));
    fs.chmodSync(path.join(dir, 'codex'), 0o755);
    let hardlinked = true;
    try {
      fs.linkSync(bash, path.join(dir, 'gemini'));
    } catch {
      hardlinked = false; // another file system than bash's
    }
    for (const name of ['claude', 'codex', ...(hardlinked ? ['gemini'] : [])]) {
      refusedAs([`./${name}`, '-p'], 'is neither a known agent CLI');
      refusedAs([name, '-p'], 'is neither a known agent CLI', { pathEnv: dir });
      refusedAs(['timeout', '60', `./${name}`], 'is neither a known agent CLI');
    }
  });

  it('accepts a CLI by where npm installed it, also run as `node <script>`', () => {
    expect(checkAgentCommand(['claude', '-p'])).toMatchObject({ ok: true });
    const codexScript = path.join(world.dir, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
    expect(checkAgentCommand(['node', codexScript, 'exec'])).toMatchObject({ ok: true, programIndex: 0 });
    // The same file outside its package is anyone's file.
    fs.copyFileSync(codexScript, path.join(dir, 'codex.js'));
    refusedAs(['node', path.join(dir, 'codex.js'), 'exec'], 'is neither a known agent CLI');
  });

  it('refuses a trusted file whose content changed until it is trusted again', () => {
    const agent = path.join(dir, 'my-agent');
    fs.writeFileSync(agent, '#!/bin/sh\necho "$1"\n', { mode: 0o755 });
    const file = path.join(dir, 'home', 'trusted-programs.json');
    fs.mkdirSync(path.dirname(file));
    const sha256 = createHash('sha256').update(fs.readFileSync(agent)).digest('hex');
    fs.writeFileSync(file, JSON.stringify({ programs: [{ path: agent, sha256, trustedAt: 'now' }] }));
    const trust = () => ({ trust: trustedPrograms(path.dirname(file), {}) });
    expect(checkWith([agent], { cwd: dir, ...trust() })).toMatchObject({ ok: true });
    fs.appendFileSync(agent, 'sh -c "$1"\n');
    refusedAs([agent], `changed since it was trusted (sha256 ${sha256.slice(0, 12)}`, trust());
  });

  it('takes echo, true and false for what they are only where the system keeps them', () => {
    expect(checkWith(['echo'], { cwd: dir })).toMatchObject({ ok: true });
    fs.copyFileSync(bash, path.join(dir, 'echo'));
    fs.chmodSync(path.join(dir, 'echo'), 0o755);
    refusedAs(['./echo'], "not the system's program of that name");
    refusedAs(['echo'], "not the system's program of that name", { pathEnv: dir });
    refusedAs(['env', `PATH=${dir}`, 'echo'], "not the system's program of that name");
  });

  it('refuses a damaged trust file with its name, never guessing', () => {
    const home = path.join(dir, 'damaged');
    fs.mkdirSync(home);
    fs.writeFileSync(path.join(home, 'trusted-programs.json'), '{"programs": [{"path": "relative"}]}');
    expect(() => trustedPrograms(home, {})).toThrow(
      /trusted-programs\.json: programs\[0\] needs an absolute "path"/,
    );
  });
});
