/**
 * A folder laid out as a machine with agent CLIs installed from npm (each file inside a package
 * whose package.json names it, linked from bin/ as npm links it) and a few scripts of the
 * operator's own, trusted through BATON_TRUSTED_AGENTS. The CLIs are small sh scripts that exit 0:
 * what makes them "claude" or "codex" is where they live, which is what the command policy checks.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type TrustedPrograms, trustedPrograms } from '../../src/executors/trusted-programs.js';

export interface AgentWorld {
  dir: string;
  /** npm's bin folder: claude, codex, gemini, openclaw, opencode, and the trusted amp and aider. */
  bin: string;
  /** bin, then the system's folders. */
  pathEnv: string;
  /** Folder of trusted scripts (agent.py, agent.mjs, agent.pl), also a workspace for the policy. */
  agents: string;
  /** BATON_TRUSTED_AGENTS naming every trusted file. */
  trustedEnv: string;
  trust: TrustedPrograms;
}

const CLIS = {
  // Older claude-code releases ran cli.js; a stand-in written in JavaScript needs an extension node knows.
  claude: ['@anthropic-ai/claude-code', 'cli.js'],
  codex: ['@openai/codex', 'bin/codex.js'],
  gemini: ['@google/gemini-cli', 'bundle/gemini.js'],
  openclaw: ['openclaw', 'openclaw.mjs'],
  opencode: ['opencode-ai', 'bin/opencode'],
} as const;

const SCRIPT = '#!/bin/sh\nexit 0\n';

/**
 * Installs `source` as npm would install the CLI `name` under `root`: the file inside its package
 * (`node_modules/@anthropic-ai/claude-code/bin/claude.exe`, with the package's package.json) and a
 * link to it in `node_modules/.bin`. Returns the link: a stand-in the policy takes for the real CLI.
 */
export function installNpmCli(root: string, name: keyof typeof CLIS, source: string): string {
  const [pkg, file] = CLIS[name];
  const folder = path.join(root, 'node_modules', pkg);
  fs.mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
  fs.mkdirSync(path.join(root, 'node_modules', '.bin'), { recursive: true });
  fs.writeFileSync(
    path.join(folder, 'package.json'),
    JSON.stringify({ name: pkg, type: 'module', bin: { [name]: file } }),
  );
  fs.writeFileSync(path.join(folder, file), source, { mode: 0o755 });
  const link = path.join(root, 'node_modules', '.bin', name);
  fs.symlinkSync(path.join(folder, file), link);
  return link;
}

export function makeAgentWorld(): AgentWorld {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-world-')));
  const bin = path.join(dir, 'node_modules', '.bin');
  const agents = path.join(dir, 'agents');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(agents);
  for (const name of Object.keys(CLIS) as (keyof typeof CLIS)[]) installNpmCli(dir, name, SCRIPT);
  const trusted: string[] = [];
  for (const name of ['amp', 'aider']) {
    fs.writeFileSync(path.join(bin, name), SCRIPT, { mode: 0o755 });
    trusted.push(path.join(bin, name));
  }
  for (const name of ['agent.py', 'agent.mjs', 'agent.pl', 'agent.rb']) {
    fs.writeFileSync(path.join(agents, name), '# an agent\n');
    trusted.push(path.join(agents, name));
  }
  const trustedEnv = trusted.join(path.delimiter);
  return {
    dir,
    bin,
    pathEnv: `${bin}:/usr/local/bin:/usr/bin:/bin`,
    agents,
    trustedEnv,
    trust: trustedPrograms(null, { BATON_TRUSTED_AGENTS: trustedEnv }),
  };
}
