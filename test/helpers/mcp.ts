/**
 * The MCP server (`baton mcp`) as a host meets it: the built CLI started by the official SDK's own
 * Client over stdio (StdioClientTransport spawns it) or reached over streamable HTTP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { cliPath, repoRoot } from './cli.js';
import { TRUSTED_FIXTURES } from './trusted-fixtures.js';

/** The environment of a server under test: this one without BATON_*, the fixtures trusted, plus `extra`. */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !name.startsWith('BATON_')) env[name] = value;
  return { ...env, BATON_TRUSTED_AGENTS: TRUSTED_FIXTURES, ...extra };
}

const clients: Client[] = [];

/** A client connected to `baton --home <home> mcp <args>` over stdio. */
export async function mcpClient(
  home: string,
  options: { args?: string[]; env?: Record<string, string>; cwd?: string } = {},
): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, '--home', home, 'mcp', ...(options.args ?? [])],
    env: serverEnv(options.env),
    cwd: options.cwd ?? repoRoot,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'baton-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

export async function closeClients(): Promise<void> {
  for (const client of clients.splice(0)) await client.close();
}

/** Calls a tool expecting success; returns its structured content (and checks the text says the same). */
export async function callOk<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  const text = (result.content[0] as { text: string }).text;
  expect(JSON.parse(text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

/** Calls a tool expecting an error result; returns its text. */
export async function callRefused(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, `${name} ${JSON.stringify(args)} should fail: ${JSON.stringify(result)}`).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  return (result.content[0] as { text: string }).text;
}
