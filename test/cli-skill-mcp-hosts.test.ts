/**
 * `baton skill install --target <host>` in a project, read back by each host's own CLI rather than
 * by our parser: `claude mcp get` and `list`, `codex mcp list --json`, `gemini mcp list`, and
 * `openclaw mcp list --json` and `probe`. None of them needs a network or a login to list its
 * servers; claude, gemini and openclaw also start the registered command and report it connected.
 * Another server's entry survives, installing twice is the same as once, and `baton agents` reports
 * the registration. HOME (and CODEX_HOME) are temp folders: nothing of the machine is read or written.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { attemptBoundMs, testBoundMs } from './helpers/agent-cli-bounds.js';
import { cliPath, expectExit, removeTempDirs, runBaton, tempDir } from './helpers/cli.js';
import {
  type AgentCli,
  agentCliPath,
  describeWithAgentCli,
  describeWithOpenclaw,
  makeCodexHome,
  openclawEntry,
  openclawNode,
  runInOwnGroup,
} from './helpers/mock-cli.js';

afterEach(removeTempDirs);

interface InstallJson {
  mcp: { host: string; path: string; action: string };
  next: string[];
}

/** A project, a user home of its own, and the host CLIs' environment (nothing of this process's). */
function world(options: { codex?: boolean } = {}) {
  const root = tempDir('baton-mcp-hosts-');
  const project = join(root, 'project');
  const user = join(root, 'user');
  mkdirSync(project);
  mkdirSync(user);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: user,
    TERM: 'dumb',
    NO_COLOR: '1',
    ...(options.codex ? makeCodexHome(root) : {}),
  };
  const batonEnv = { HOME: user, CODEX_HOME: env.CODEX_HOME };
  const install = async (target: string): Promise<InstallJson> =>
    JSON.parse(
      expectExit(
        await runBaton(['skill', 'install', '--target', target, '--heartbeat', 'none', '--json'], {
          cwd: project,
          env: batonEnv,
        }),
        0,
      ).stdout,
    );
  /** Installs again: nothing changes in the host's config, the entry is kept. */
  const installAgain = async (target: string, config: string) => {
    const before = readFileSync(config, 'utf8');
    expect((await install(target)).mcp.action).toBe('kept');
    expect(readFileSync(config, 'utf8')).toBe(before);
  };
  const agents = async (host: string) => {
    const result = expectExit(await runBaton(['agents', '--json'], { cwd: project, env: batonEnv }), 0);
    return (JSON.parse(result.stdout).mcp as { host: string; registeredIn: string[] }[]).find(
      (entry) => entry.host === host,
    );
  };
  return { root, project, user, home: join(project, '.baton'), env, install, installAgain, agents };
}

/** The host's own CLI, stdin closed; resolves at its exit (its process group killed after attemptBoundMs). */
function hostCli(cli: AgentCli, args: string[], cwd: string, env: Record<string, string>) {
  const timeoutMs = attemptBoundMs(cli);
  return cli === 'openclaw'
    ? runInOwnGroup(openclawNode, [openclawEntry, ...args], { cwd, env, timeoutMs })
    : runInOwnGroup(agentCliPath(cli), args, { cwd, env, timeoutMs });
}

const linesStarting = (text: string, prefix: string) =>
  text.split('\n').filter((line) => line.startsWith(prefix));

const other = { command: 'other-server', args: ['--x'] };

describeWithAgentCli('claude', 'claude reads the project registration (.mcp.json)', () => {
  it('claude mcp get and list show baton, connected once approved, beside the other server', async () => {
    const w = world();
    const config = join(w.project, '.mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { other } }));
    expect((await w.install('claude')).mcp).toEqual({ host: 'claude', path: config, action: 'added' });
    await w.installAgain('claude', config);
    // claude starts a project's servers only once they are approved (`claude -p` approves them
    // itself): approved as its user would, in their settings, so that claude health-checks it.
    mkdirSync(join(w.user, '.claude'), { recursive: true });
    writeFileSync(
      join(w.user, '.claude', 'settings.json'),
      JSON.stringify({ enabledMcpjsonServers: ['baton'] }),
    );
    const get = await hostCli('claude', ['mcp', 'get', 'baton'], w.project, w.env);
    expect(get.code, get.stderr + get.stdout).toBe(0);
    expect(get.stdout).toContain('Scope: Project config');
    expect(get.stdout).toContain('Status: ✔ Connected');
    expect(get.stdout).toContain(`Command: ${process.execPath}\n`);
    expect(get.stdout).toContain(`Args: ${cliPath} --home ${w.home} mcp\n`);
    const list = await hostCli('claude', ['mcp', 'list'], w.project, w.env);
    expect(list.code, list.stderr + list.stdout).toBe(0);
    expect(linesStarting(list.stdout, 'baton: ')).toEqual([
      `baton: ${process.execPath} ${cliPath} --home ${w.home} mcp - ✔ Connected`,
    ]);
    expect(linesStarting(list.stdout, 'other: ')).toEqual([
      expect.stringMatching(/^other: other-server --x - .*Pending approval/),
    ]);
    expect(await w.agents('claude')).toEqual({ host: 'claude', registeredIn: [config] });
  }, 120_000);
});

describeWithAgentCli('codex', 'codex reads the project registration (.codex/config.toml)', () => {
  it('codex mcp list shows baton beside the other server once the project is trusted, as the install says', async () => {
    const w = world({ codex: true });
    mkdirSync(join(w.project, '.codex'));
    const config = join(w.project, '.codex', 'config.toml');
    writeFileSync(config, '[mcp_servers.other]\ncommand = "other-server"\nargs = ["--x"]\n');
    const result = await w.install('codex');
    expect(result.mcp).toEqual({ host: 'codex', path: config, action: 'added' });
    await w.installAgain('codex', config);
    const listJson = async () => {
      const list = await hostCli('codex', ['mcp', 'list', '--json'], w.project, w.env);
      expect(list.code, list.stderr + list.stdout).toBe(0);
      return JSON.parse(list.stdout) as { name: string; transport: Record<string, unknown> }[];
    };
    // An untrusted project's config is not read at all: why the install says how to trust it.
    expect(await listJson()).toEqual([]);
    const userConfig = join(w.env.CODEX_HOME!, 'config.toml');
    const trust = `[projects.${JSON.stringify(w.project)}] trust_level = "trusted"`;
    expect(result.next).toContainEqual(expect.stringContaining(`add ${trust} to ${userConfig}`));
    appendFileSync(userConfig, `[projects.${JSON.stringify(w.project)}]\ntrust_level = "trusted"\n`);
    const servers = await listJson();
    expect(servers.map((server) => server.name).sort()).toEqual(['baton', 'other']);
    expect(servers.find((server) => server.name === 'baton')?.transport).toMatchObject({
      type: 'stdio',
      command: process.execPath,
      args: [cliPath, '--home', w.home, 'mcp'],
    });
    expect(servers.find((server) => server.name === 'other')?.transport).toMatchObject(other);
    expect(await w.agents('codex')).toEqual({ host: 'codex', registeredIn: [config] });
  }, 120_000);
});

describeWithAgentCli('gemini', 'gemini reads the project registration (.gemini/settings.json)', () => {
  it('gemini mcp list shows baton connected beside the other server in a trusted folder, both disabled in an untrusted one', async () => {
    const w = world();
    mkdirSync(join(w.project, '.gemini'));
    const config = join(w.project, '.gemini', 'settings.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { other } }));
    expect((await w.install('gemini')).mcp).toEqual({ host: 'gemini', path: config, action: 'added' });
    await w.installAgain('gemini', config);
    const baton = `${process.execPath} ${cliPath} --home ${w.home} mcp (stdio)`;
    const trusted = await hostCli('gemini', ['mcp', 'list'], w.project, {
      ...w.env,
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
    });
    expect(trusted.code, trusted.stderr + trusted.stdout).toBe(0);
    const out = trusted.stdout + trusted.stderr;
    expect(linesStarting(out, '✓ baton: ')).toEqual([`✓ baton: ${baton} - Connected`]);
    expect(linesStarting(out, '✗ other: ')).toEqual(['✗ other: other-server --x (stdio) - Disconnected']);
    const untrusted = await hostCli('gemini', ['mcp', 'list'], w.project, w.env);
    expect(untrusted.code, untrusted.stderr + untrusted.stdout).toBe(0);
    expect(linesStarting(untrusted.stdout + untrusted.stderr, '○ baton: ')).toEqual([
      `○ baton: ${baton} - Disabled`,
    ]);
    expect(await w.agents('gemini')).toEqual({ host: 'gemini', registeredIn: [config] });
  }, 120_000);
});

describeWithOpenclaw('openclaw reads the registration (its one config, ~/.openclaw/openclaw.json)', () => {
  it(
    'openclaw mcp list shows baton beside the other server; mcp probe starts it and lists its tools',
    async () => {
      const w = world();
      mkdirSync(join(w.user, '.openclaw'));
      const config = join(w.user, '.openclaw', 'openclaw.json');
      const docs = { command: 'uvx', args: ['docs-server'] };
      writeFileSync(config, JSON.stringify({ mcp: { servers: { docs } } }));
      expect((await w.install('openclaw')).mcp).toEqual({ host: 'openclaw', path: config, action: 'added' });
      await w.installAgain('openclaw', config);
      const list = await hostCli('openclaw', ['mcp', 'list', '--json'], w.project, w.env);
      expect(list.code, list.stderr + list.stdout).toBe(0);
      expect(JSON.parse(list.stdout.slice(list.stdout.indexOf('{')))).toEqual({
        docs,
        baton: { command: process.execPath, args: [cliPath, '--home', w.home, 'mcp'] },
      });
      const probe = await hostCli('openclaw', ['mcp', 'probe', 'baton', '--json'], w.project, w.env);
      expect(probe.code, probe.stderr + probe.stdout).toBe(0);
      const probed = JSON.parse(probe.stdout.slice(probe.stdout.indexOf('{')));
      expect(probed.servers.baton.launch).toBe(`${process.execPath} ${cliPath} --home ${w.home} mcp`);
      expect(probed.tools).toEqual(expect.arrayContaining(['baton__propose', 'baton__run_status']));
      expect(await w.agents('openclaw')).toEqual({ host: 'openclaw', registeredIn: [config] });
      // Two openclaw runs one after the other.
    },
    testBoundMs('openclaw', 2),
  );
});
