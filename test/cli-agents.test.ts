/**
 * `baton agents` against the real CLIs installed in node_modules/.bin, each with a scratch HOME:
 * versions, profiles, and what is misconfigured with its fix; `--plan` warnings.
 */
import { chmodSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { batonJson, removeTempDirs, repoRoot, runBaton, tempDir, writePlan } from './helpers/cli.js';

interface AgentsJson {
  workspace: string;
  agents: {
    profile: string;
    path: string | null;
    version: string | null;
    retryCap: string;
    problems: { problem: string; fix: string }[];
  }[];
  plan?: { warnings: { where: string; profile: string; message: string }[] };
}

const bin = join(repoRoot, 'node_modules', '.bin');
const version = (pkg: string) =>
  (
    JSON.parse(readFileSync(join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

afterAll(() => removeTempDirs());

function scratch() {
  const dir = tempDir('baton-agents-');
  const home = join(dir, 'user-home');
  mkdirSync(home);
  return {
    dir,
    home,
    env: { HOME: home, PATH: `${bin}:${process.env.PATH}`, CODEX_HOME: join(home, '.codex') },
  };
}

const agentsOf = (json: AgentsJson, profile: string) => json.agents.find((a) => a.profile === profile)!;

/**
 * A folder (default: a new one, outside every workspace) holding a `bwrap` whose `--help` reads like
 * bubblewrap 0.8 (no --argv0, as Debian 12 ships) or 0.9 and newer: what codex probes to choose how
 * it enters its sandbox.
 */
function fakeBwrap(withArgv0: boolean, folder = tempDir('baton-bwrap-')): string {
  mkdirSync(folder, { recursive: true });
  const options = [
    '--perms OCTAL  Set permissions of next argument',
    ...(withArgv0 ? ['--argv0 VALUE  Set argv[0]'] : []),
  ];
  writeFileSync(
    join(folder, 'bwrap'),
    `#!/bin/sh\necho 'usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]'\n${options.map((o) => `echo '    ${o}'`).join('\n')}\n`,
  );
  chmodSync(join(folder, 'bwrap'), 0o755);
  return folder;
}

describe('baton agents', () => {
  it('finds the installed CLIs with their versions and names what is missing, with the fix', async () => {
    const { dir, env } = scratch();
    const json = await batonJson<AgentsJson>(['agents', '--workspace', dir], {
      env: {
        ...env,
        ANTHROPIC_API_KEY: undefined,
        OPENAI_API_KEY: undefined,
        GEMINI_CLI_TRUST_WORKSPACE: undefined,
      },
    });
    const claude = agentsOf(json, 'claude');
    expect(claude.version).toContain(version('@anthropic-ai/claude-code'));
    expect(claude.retryCap).toBe('CLAUDE_CODE_MAX_RETRIES=1');
    expect(claude.problems.map((p) => p.problem)).toEqual([expect.stringMatching(/no authentication/)]);
    expect(agentsOf(json, 'codex').version).toContain(version('@openai/codex'));
    const gemini = agentsOf(json, 'gemini');
    expect(gemini.version).toContain(version('@google/gemini-cli'));
    expect(gemini.problems.map((p) => p.problem)).toEqual([
      expect.stringMatching(/exits 41/),
      expect.stringMatching(/not trusted \(gemini exits 55\)/),
    ]);
    expect(gemini.problems[1]!.fix).toMatch(/GEMINI_CLI_TRUST_WORKSPACE=true/);
    expect(agentsOf(json, 'aider').path).toBeNull();
  }, 120_000);

  it('a configured machine has nothing to fix; a codex provider key that is not set is named', async () => {
    const { dir, home, env } = scratch();
    mkdirSync(join(home, '.gemini'));
    writeFileSync(
      join(home, '.gemini', 'settings.json'),
      JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
    );
    mkdirSync(join(home, '.codex'));
    writeFileSync(
      join(home, '.codex', 'config.toml'),
      'model_provider = "local"\n[model_providers.local]\nname = "local"\nbase_url = "http://127.0.0.1:9/v1"\nenv_key = "LOCAL_KEY"\nwire_api = "responses"\n',
    );
    const json = await batonJson<AgentsJson>(['agents', '--workspace', dir], {
      env: {
        ...env,
        PATH: `${fakeBwrap(true)}:${env.PATH}`,
        ANTHROPIC_API_KEY: 'sk-x',
        GEMINI_API_KEY: 'x',
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
      },
    });
    expect(agentsOf(json, 'claude').problems).toEqual([]);
    expect(agentsOf(json, 'gemini').problems).toEqual([]);
    const codex = agentsOf(json, 'codex');
    expect(codex.problems.map((p) => p.fix)).toEqual(['set LOCAL_KEY in the environment of baton']);
    expect(codex.retryCap).toBe(
      '-c model_providers.local.request_max_retries=0 -c model_providers.local.stream_max_retries=1',
    );
  }, 120_000);

  it.runIf(process.platform === 'linux')(
    'codex with a bubblewrap older than 0.9 and its home in the temp folder: its shell tool cannot run, named with the fix',
    async () => {
      const { dir, home, env } = scratch();
      mkdirSync(join(home, '.codex'));
      // The temp folder as codex compares it: with its home's real path.
      const temp = realpathSync(dir);
      const workspace = join(dir, 'work');
      const oldBwrap = realpathSync(fakeBwrap(false));
      // First on PATH, but inside the workspace: not the bwrap codex takes.
      const inWorkspace = fakeBwrap(true, join(workspace, 'bin'));
      const withOld = {
        ...env,
        OPENAI_API_KEY: 'x',
        PATH: `${inWorkspace}:${oldBwrap}:${env.PATH}`,
        TMPDIR: temp,
      };
      const agents = (e: Record<string, string>) =>
        batonJson<AgentsJson>(['agents', '--workspace', workspace], { env: e });
      const broken = agentsOf(await agents(withOld), 'codex');
      expect(broken.problems).toEqual([
        {
          problem: expect.stringContaining(
            `codex's shell tool fails every command ("bwrap: execvp codex-linux-sandbox: No such file or directory"`,
          ),
          fix: `set CODEX_HOME to a folder outside ${temp}, or put bubblewrap 0.9 or newer first on PATH`,
        },
      ]);
      expect(broken.problems[0]!.problem).toContain(
        `${join(oldBwrap, 'bwrap')} is older than bubblewrap 0.9`,
      );
      // Its home outside the temp folder (TMPDIR elsewhere), or a bwrap with --argv0 first: nothing to fix.
      for (const fixed of [
        { ...withOld, TMPDIR: join(temp, 'elsewhere') },
        { ...withOld, PATH: `${fakeBwrap(true)}:${withOld.PATH}` },
      ]) {
        expect(agentsOf(await agents(fixed), 'codex').problems).toEqual([]);
      }
    },
    120_000,
  );

  it('a CLI whose package asks for a newer Node.js than the node on PATH is reported with the fix', async () => {
    const { dir, env } = scratch();
    const pkg = join(dir, 'pkgs', 'openclaw');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'openclaw', engines: { node: '>=24.16.0 <25 || >=26.1.0' } }),
    );
    writeFileSync(join(pkg, 'openclaw.mjs'), '#!/usr/bin/env node\nconsole.log("2026.9.6")\n');
    chmodSync(join(pkg, 'openclaw.mjs'), 0o755);
    const fakeBin = join(dir, 'bin');
    mkdirSync(fakeBin);
    symlinkSync(join(pkg, 'openclaw.mjs'), join(fakeBin, 'openclaw'));
    const json = await batonJson<AgentsJson>(['agents', '--workspace', dir], {
      env: { ...env, PATH: `${fakeBin}:${env.PATH}` },
    });
    const openclaw = agentsOf(json, 'openclaw');
    expect(openclaw.path).toBe(join(fakeBin, 'openclaw'));
    expect(openclaw.problems).toEqual([
      {
        problem: `needs Node.js >=24.16.0 <25 || >=26.1.0, and the node on PATH is ${process.version}`,
        fix: expect.stringMatching(/run the CLI with one/),
      },
    ]);
  }, 120_000);

  it('--plan names each agent command that lacks its machine-readable flag; run warns the same', async () => {
    const { dir, env } = scratch();
    const plan = writePlan(dir, {
      name: 'flags',
      steps: [
        { id: 'a', instruction: 'x', agent: { command: [join(bin, 'claude'), '-p'] } },
        { id: 'b', instruction: 'y', agent: { command: [join(bin, 'codex'), 'exec', '--json'] } },
        { id: 'c', instruction: 'z', agent: { command: [join(bin, 'gemini')] } },
      ],
    });
    const json = await batonJson<AgentsJson>(['agents', '--plan', plan], { env });
    expect(json.plan?.warnings.map((w) => [w.where, w.profile])).toEqual([
      ['steps.a.agent', 'claude'],
      ['steps.c.agent', 'gemini'],
    ]);
    expect(json.plan?.warnings[0]?.message).toMatch(/add --output-format json/);
    const text = await runBaton(['agents', '--plan', plan], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/steps\.c\.agent \(gemini\): gemini without -o json/);
    const proposed = await runBaton(['propose', plan, '--json'], { env, home: join(dir, 'home') });
    expect(proposed.stderr).toMatch(
      /warning: .*plan\.yaml: steps\.a\.agent: claude without --output-format json/,
    );
  }, 120_000);
});
