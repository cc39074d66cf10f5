/**
 * `baton skill install --target claude|codex|gemini|openclaw` also registers `baton mcp` in that
 * host's own MCP config (project, or --global), next to the servers already there, which are never
 * changed; `baton agents` reports where it is registered; the registered command starts a server
 * the SDK's client talks to.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath, expectExit, removeTempDirs, runBaton, tempDir } from './helpers/cli.js';
import { serverEnv } from './helpers/mcp.js';

afterEach(removeTempDirs);

function world() {
  const root = tempDir('baton-skill-mcp-');
  const project = join(root, 'project');
  const user = join(root, 'user');
  mkdirSync(project);
  mkdirSync(user);
  // No CODEX_HOME of the test process: codex's --global config is then ~/.codex/config.toml.
  const run = (args: string[]) =>
    runBaton(args, { cwd: project, env: { HOME: user, CODEX_HOME: undefined } });
  const install = (args: string[]) => run(['skill', 'install', '--heartbeat', 'none', ...args]);
  return { project, user, run, install };
}

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

describe('baton skill install registers the MCP server', () => {
  it('claude: .mcp.json in the project, beside the servers there; --json says what it wrote; the command serves', async () => {
    const { project, install, run } = world();
    const other = { command: 'other-server', args: ['--x'] };
    writeFileSync(join(project, '.mcp.json'), JSON.stringify({ mcpServers: { other } }));
    const result = JSON.parse(expectExit(await install(['--json']), 0).stdout);
    const config = join(project, '.mcp.json');
    expect(result.mcp).toEqual({ host: 'claude', path: config, action: 'added' });
    const home = join(project, '.baton');
    const servers = json(config).mcpServers;
    expect(servers.other).toEqual(other);
    expect(servers.baton).toEqual({ command: process.execPath, args: [cliPath, '--home', home, 'mcp'] });

    const again = JSON.parse(expectExit(await install(['--json', '--force']), 0).stdout);
    expect(again.mcp.action).toBe('replaced');
    expect(json(config).mcpServers.other).toEqual(other);

    const agents = JSON.parse(expectExit(await run(['agents', '--json']), 0).stdout);
    expect(agents.mcp).toContainEqual({ host: 'claude', registeredIn: [config] });
    expect(agents.mcp).toContainEqual({ host: 'gemini', registeredIn: [] });

    // What the host would start answers as an MCP server.
    const client = new Client({ name: 'host', version: '1' });
    await client.connect(
      new StdioClientTransport({ ...servers.baton, cwd: project, env: serverEnv(), stderr: 'pipe' }),
    );
    try {
      const listed = await client.callTool({ name: 'list_runs', arguments: {} });
      expect(listed.structuredContent).toEqual({ runs: [] });
    } finally {
      await client.close();
    }
  });

  it('claude --global: ~/.claude.json, its other keys kept', async () => {
    const { user, install } = world();
    writeFileSync(join(user, '.claude.json'), JSON.stringify({ numStartups: 3, mcpServers: {} }));
    expectExit(await install(['--global']), 0);
    const config = json(join(user, '.claude.json'));
    expect(config.numStartups).toBe(3);
    expect(config.mcpServers.baton.args.at(-1)).toBe('mcp');
  });

  it('codex: a [mcp_servers.baton] table in config.toml, once; other tables kept', async () => {
    const { user, install } = world();
    const file = join(user, '.codex', 'config.toml');
    mkdirSync(join(user, '.codex'));
    writeFileSync(file, 'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other"\n');
    const result = expectExit(await install(['--target', 'codex', '--global']), 0);
    expect(result.stdout).toContain(`registered the Baton MCP server (baton mcp) in ${file}`);
    expect(existsSync(join(user, '.agents', 'skills', 'baton', 'SKILL.md'))).toBe(true);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other"\n');
    expect(text).toContain(`[mcp_servers.baton]\ncommand = ${JSON.stringify(process.execPath)}\n`);
    expect(text).toMatch(/args = \[.*"mcp"\]\n$/);
    expectExit(await install(['--target', 'codex', '--global', '--force']), 0);
    const after = readFileSync(file, 'utf8');
    expect(after.match(/\[mcp_servers\.baton\]/g)).toHaveLength(1);
    expect(after).toContain('[mcp_servers.other]\ncommand = "other"\n');
  });

  it('codex --global: the config.toml in $CODEX_HOME, the one codex reads, when it is set', async () => {
    const { project, user } = world();
    const codexHome = join(user, 'elsewhere');
    const env = { HOME: user, CODEX_HOME: codexHome };
    const args = ['skill', 'install', '--heartbeat', 'none', '--target', 'codex', '--global', '--json'];
    const result = JSON.parse(expectExit(await runBaton(args, { cwd: project, env }), 0).stdout);
    const file = join(codexHome, 'config.toml');
    expect(result.mcp).toEqual({ host: 'codex', path: file, action: 'added' });
    expect(readFileSync(file, 'utf8')).toContain('[mcp_servers.baton]\n');
    expect(existsSync(join(user, '.codex', 'config.toml'))).toBe(false);
    const agents = JSON.parse(
      expectExit(await runBaton(['agents', '--json'], { cwd: project, env }), 0).stdout,
    );
    expect(agents.mcp).toContainEqual({ host: 'codex', registeredIn: [file] });
    expect(result.next.join('\n')).not.toContain('trusted project');
    // A project's .codex/config.toml is read only in a project codex trusts: the user is told how.
    const inProject = ['skill', 'install', '--heartbeat', 'none', '--target', 'codex', '--json', '--force'];
    const project_ = JSON.parse(expectExit(await runBaton(inProject, { cwd: project, env }), 0).stdout);
    expect(project_.mcp.path).toBe(join(project, '.codex', 'config.toml'));
    expect(project_.next).toContainEqual(
      `codex reads ${project_.mcp.path} only in a trusted project: add [projects.${JSON.stringify(project)}] trust_level = "trusted" to ${file} (or trust it when codex asks), or install with --global`,
    );
  });

  it('gemini: .gemini/settings.json mcpServers, its other settings kept; --no-mcp writes none', async () => {
    const { project, user, install } = world();
    mkdirSync(join(project, '.gemini'));
    const file = join(project, '.gemini', 'settings.json');
    writeFileSync(file, JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
    expectExit(await install(['--target', 'gemini']), 0);
    const config = json(file);
    expect(config.security.auth.selectedType).toBe('gemini-api-key');
    expect(config.mcpServers.baton.command).toBe(process.execPath);
    const other = world();
    expectExit(await other.install(['--target', 'gemini', '--no-mcp']), 0);
    expect(existsSync(join(other.project, '.gemini', 'settings.json'))).toBe(false);
    expect(existsSync(join(user, '.gemini', 'settings.json'))).toBe(false);
  });

  it('openclaw: mcp.servers in openclaw.json; a JSON5 file with comments is refused, nothing written', async () => {
    const { user, install } = world();
    mkdirSync(join(user, '.openclaw'));
    const file = join(user, '.openclaw', 'openclaw.json');
    writeFileSync(file, '{\n  // mine\n  agents: {},\n}\n');
    const refused = expectExit(await install(['--target', 'openclaw']), 2);
    expect(refused.stderr).toContain(`${file}: not a JSON object Baton can edit`);
    expect(readFileSync(file, 'utf8')).toBe('{\n  // mine\n  agents: {},\n}\n');
    expect(existsSync(join(user, '.openclaw', 'skills', 'baton'))).toBe(false);
    writeFileSync(file, JSON.stringify({ agents: {}, mcp: { servers: { docs: { command: 'uvx' } } } }));
    expectExit(await install(['--target', 'openclaw']), 0);
    const config = json(file);
    expect(config.mcp.servers.docs).toEqual({ command: 'uvx' });
    expect(config.mcp.servers.baton.args.at(-1)).toBe('mcp');
  });
});
