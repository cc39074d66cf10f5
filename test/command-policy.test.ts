import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import {
  assertAgentCommand,
  type CommandPolicyOptions,
  checkAgentCommand,
} from '../src/executors/command-policy.js';

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
  [['nsenter', '-t', '1', '-m', 'sh'], 'sh'],
  [['unshare', '-r', 'bash'], 'bash'],
  [['chroot', '/', 'sh'], 'sh'],
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
  [['deno', 'eval'], 'eval'],
  [['deno', 'run', 'data:application/javascript,1'], 'data:application/javascript,1'],
  [['deno', 'run', '-A'], 'deno'],
  [['deno', 'repl'], 'repl'],
  [['bun', '-e'], '-e'],
  [['bun', '--eval', '1'], '--eval'],
  [['bun', '--print'], '--print'],
  [['bun', '-p'], '-p'],
  [['bun', 'exec'], 'exec'],
  [['lua', '-e'], '-e'],
  [['luajit', '-e'], '-e'],
  [['lua5.4', '-e', 'x'], '-e'],
  [['tclsh'], 'tclsh'],
  [['wish', 'app.tcl'], 'wish'],
  [['Rscript', '-e'], '-e'],
  [['julia', '-e'], '-e'],
  [['julia', '--eval', '1'], '--eval'],
  [['awk'], 'awk'],
  [['gawk', '-f', 'x.awk'], 'gawk'],
  [['mawk'], 'mawk'],
  [['nawk'], 'nawk'],
  [['sed', '-n'], 'sed'],
  [['npx', '-c'], '-c'],
  [['npx', '-y', 'bash'], 'bash'],
  [['npx'], 'npx'],
  [['npm', 'exec', '--call', 'x'], '--call'],
  [['expect', '-c'], '-c'],
  // Legacy mode refuses every -c and -e.
  [['mytool', '-c'], '-c', LEGACY],
  [['claude', '-e'], '-e', LEGACY],
  [['codex', 'exec', '-c', 'model=o3'], '-c', LEGACY],
];

const ALLOWED: string[][] = [
  ['codex', 'exec', '-c', 'model=o3'],
  ['claude', '-c', '-p'],
  ['claude', '-p', '--output-format', 'json'],
  ['gemini', '-p'],
  ['openclaw', 'agent', '--message', '{prompt}', '--agent', 'main'],
  ['node', 'fixtures/agent.mjs'],
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
  ['sudo', '-u', 'bot', 'claude', '-p'],
  ['timeout', '--signal=KILL', '600', 'codex', 'exec', '--json'],
  ['stdbuf', '-oL', 'gemini', '-p'],
  ['deno', 'run', '-A', 'agent.ts'],
  ['bun', 'agent.ts'],
  ['npx', '-y', 'some-agent'],
  ['perl', '-w', 'agent.pl'],
  ['no-such-agent-binary-xyz', '-p'],
];

describe('checkAgentCommand refuses', () => {
  it(`has a corpus of at least 40 commands (${REFUSED.length})`, () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(40);
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
    expect(checkAgentCommand([helper, 'agent.mjs'])).toMatchObject({ ok: true });
    const env = ['/usr/bin/env', '/bin/env'].find((file) => fs.existsSync(file));
    if (env !== undefined) expect(checkAgentCommand([link('launch', env), 'bash']).ok).toBe(false);
  });

  it('reports where the program a wrapper runs is, for choosing its profile', () => {
    executable('claude');
    const at = (argv: string[]) => {
      const verdict = checkAgentCommand(argv, { pathEnv: dir });
      return verdict.ok ? verdict.programIndex : verdict.reason;
    };
    expect(at(['claude', '-p'])).toBe(0);
    expect(at(['timeout', '600', 'claude', '-p'])).toBe(2);
    expect(at(['env', 'A=1', 'nice', '-n', '5', 'claude'])).toBe(5);
  });

  it('follows the first executable match on PATH and ignores programs it cannot find', () => {
    executable('claude');
    // The file found is reported, so the spawn runs exactly what was checked (no second PATH search).
    expect(checkAgentCommand(['claude', '-p'], { pathEnv: dir })).toEqual({
      ok: true,
      executable: path.join(dir, 'claude'),
      programIndex: 0,
    });
    expect(checkAgentCommand(['missing-agent', '-p'], { pathEnv: dir })).toEqual({
      ok: true,
      executable: null,
      programIndex: 0,
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
    expect(checkAgentCommand(['env', '-i', 'agent'], { pathEnv: shells })).toMatchObject({ ok: true });
    expect(checkAgentCommand(['env', '-u', 'PATH', 'agent'], { pathEnv: shells })).toMatchObject({
      ok: true,
    });
    refused(['env', '-i', `PATH=${shells}`, 'agent']);
    // After `-` or `--` env reads no more options: `-C=x` and `-i=1` are assignments there.
    refused(['env', '-', '-C=x', './agent'], { cwd: shells });
    refused(['env', '--', '-i=1', 'agent'], { pathEnv: shells });
    // GNU env takes unambiguous abbreviations of its long options.
    refused(['env', '--sp', 'sh -c "echo hi"']);
    refused(['env', '--ch', '/tmp', 'sh', '-c']);
    refused(['env', '--ch', shells, './agent']);
    refused(['env', '--argv0', 'x', 'agent'], { pathEnv: shells });
    expect(checkAgentCommand(['env', '--u', 'PATH', 'agent'], { pathEnv: shells })).toMatchObject({
      ok: true,
    });
    expect(checkAgentCommand(['env', '--ignore-e', 'agent'], { pathEnv: shells })).toMatchObject({
      ok: true,
    });
  });

  it('reports the link it found, not the file the link points to (argv[0] keeps its meaning)', () => {
    const target = executable('real-agent');
    const alias = link('alias-agent', target);
    expect(checkAgentCommand(['alias-agent'], { pathEnv: dir })).toEqual({
      ok: true,
      executable: alias,
      programIndex: 0,
    });
    expect(assertAgentCommand(['alias-agent'], { pathEnv: dir })).toBe(alias);
  });

  it('lets a multi-call binary run the applet named by the link (busybox env on Alpine)', () => {
    const busybox = executable('busybox');
    link('env', busybox);
    expect(checkAgentCommand([path.join(dir, 'env'), 'claude', '-p'])).toMatchObject({ ok: true });
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
      'agent command ["sh","-c"] refused: "sh" is a shell: a shell would interpret the prompt as code. ' +
        'Run the agent binary directly, e.g. ["claude","-p"].',
    );
  });

  it('returns for an allowed command', () => {
    expect(() => assertAgentCommand(['claude', '-p'])).not.toThrow();
  });

  it('rejects an unknown mode as a bad argument', () => {
    const mode = 'strict' as unknown as 'native';
    expect(() => checkAgentCommand(['claude'], { mode })).toThrow(/mode "strict"/);
  });
});
