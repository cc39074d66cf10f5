import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError } from '../../core/errors.js';

/**
 * Where each agent host keeps the MCP servers it starts, and Baton's entry in it (`baton skill
 * install` writes it, `baton agents` reports it). Each host's own format:
 * - Claude Code: `.mcp.json` in the project, or `~/.claude.json` (user scope): `mcpServers.baton`;
 * - Codex: `.codex/config.toml` in the project, or `$CODEX_HOME/config.toml` (default
 *   `~/.codex/config.toml`, the one codex reads): `[mcp_servers.baton]`;
 * - Gemini CLI: `.gemini/settings.json` in the project, or `~/.gemini/settings.json`: `mcpServers.baton`;
 * - OpenClaw: `~/.openclaw/openclaw.json` (`OPENCLAW_CONFIG_PATH`): `mcp.servers.baton`.
 * Another server's entry is never changed; Baton's own is replaced only with --force.
 */

export const MCP_HOSTS = ['claude', 'codex', 'gemini', 'openclaw'] as const;
export type McpHost = (typeof MCP_HOSTS)[number];

/** The server as a host starts it: argv, absolute so it works from any folder. */
export interface McpServerCommand {
  command: string;
  args: string[];
}

interface HostConfig {
  host: McpHost;
  path: string;
  format: 'json' | 'toml';
  /** The keys of the servers' object in a JSON file. */
  keys: string[];
}

export function mcpConfigOf(
  host: McpHost,
  options: { global: boolean; cwd: string; userHome: string; env?: NodeJS.ProcessEnv },
): HostConfig {
  const base = options.global ? options.userHome : options.cwd;
  switch (host) {
    case 'claude':
      return options.global
        ? { host, path: join(options.userHome, '.claude.json'), format: 'json', keys: ['mcpServers'] }
        : { host, path: join(options.cwd, '.mcp.json'), format: 'json', keys: ['mcpServers'] };
    case 'codex': {
      const codexHome = options.global ? options.env?.CODEX_HOME : undefined;
      const dir = codexHome ? codexHome : join(base, '.codex');
      return { host, path: join(dir, 'config.toml'), format: 'toml', keys: [] };
    }
    case 'gemini':
      return { host, path: join(base, '.gemini', 'settings.json'), format: 'json', keys: ['mcpServers'] };
    case 'openclaw':
      return {
        host,
        path: options.env?.OPENCLAW_CONFIG_PATH || join(options.userHome, '.openclaw', 'openclaw.json'),
        format: 'json',
        keys: ['mcp', 'servers'],
      };
  }
}

const TOML_TABLE = /^\s*\[\s*mcp_servers\s*\.\s*(?:baton|"baton")\s*\]\s*$/m;

/** The JSON of a host's config file ({} when it does not exist); one that does not parse is refused. */
function readJsonConfig(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, 'utf8');
  if (text.trim() === '') return {};
  try {
    const value = JSON.parse(text) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // Refused below: comments (JSON5) or a damaged file are not Baton's to rewrite.
  }
  throw new BatonError(
    'CONFIG_INVALID',
    `${path}: not a JSON object Baton can edit (comments or JSON5?); nothing was written: add the baton server by hand or with the host's own command`,
  );
}

function serversOf(
  config: Record<string, unknown>,
  keys: readonly string[],
): Record<string, unknown> | undefined {
  let node: unknown = config;
  for (const key of keys) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node !== null && typeof node === 'object' ? (node as Record<string, unknown>) : undefined;
}

/** Whether the host's config has a `baton` server (false when it cannot be read). */
export function hasBatonServer(config: HostConfig): boolean {
  try {
    if (!existsSync(config.path)) return false;
    if (config.format === 'toml') return TOML_TABLE.test(readFileSync(config.path, 'utf8'));
    return serversOf(readJsonConfig(config.path), config.keys)?.baton !== undefined;
  } catch {
    return false;
  }
}

/** What registering the server in one host's config writes, decided before anything is written. */
export interface McpRegistration {
  host: McpHost;
  path: string;
  /** added: a new entry; replaced: Baton's own, with --force; kept: Baton's own was there already. */
  action: 'added' | 'replaced' | 'kept';
  /** The whole new content of the file (null: nothing to write). */
  content: string | null;
}

export function planMcpRegistration(
  config: HostConfig,
  server: McpServerCommand,
  force: boolean,
): McpRegistration {
  const { host, path } = config;
  if (config.format === 'toml') {
    const before = existsSync(path) ? readFileSync(path, 'utf8') : '';
    const table = `[mcp_servers.baton]\ncommand = ${JSON.stringify(server.command)}\nargs = [${server.args.map((a) => JSON.stringify(a)).join(', ')}]\n`;
    if (TOML_TABLE.test(before)) {
      if (!force) return { host, path, action: 'kept', content: null };
      // Baton's own table, up to the next table header: replaced whole.
      const start = before.search(TOML_TABLE);
      const rest = before.slice(start).replace(TOML_TABLE, '');
      const next = rest.search(/^\s*\[/m);
      const after = next === -1 ? '' : rest.slice(next).replace(/^\n+/, '');
      return {
        host,
        path,
        action: 'replaced',
        content: `${before.slice(0, start)}${table}${after ? `\n${after}` : ''}`,
      };
    }
    const separator =
      before === '' ? '' : before.endsWith('\n\n') ? '' : before.endsWith('\n') ? '\n' : '\n\n';
    return { host, path, action: 'added', content: `${before}${separator}${table}` };
  }
  const config_ = readJsonConfig(path);
  let node: Record<string, unknown> = config_;
  for (const key of config.keys) {
    const child = node[key];
    if (child !== undefined && (child === null || typeof child !== 'object' || Array.isArray(child)))
      throw new BatonError(
        'CONFIG_INVALID',
        `${path}: ${config.keys.join('.')} is not an object; nothing was written`,
      );
    node[key] = child ?? {};
    node = node[key] as Record<string, unknown>;
  }
  const existed = node.baton !== undefined;
  if (existed && !force) return { host, path, action: 'kept', content: null };
  node.baton = { command: server.command, args: server.args };
  return {
    host,
    path,
    action: existed ? 'replaced' : 'added',
    content: `${JSON.stringify(config_, null, 2)}\n`,
  };
}
