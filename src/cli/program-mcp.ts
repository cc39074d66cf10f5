import type { Command } from 'commander';
import type { Act } from './program-options.js';

/** The tools `baton mcp` serves, by name, read from the registry (src/mcp/tool-registry.ts). */
let toolNames: { served: string[]; allowRun: string[] } | null = null;

/**
 * Reads the names of the MCP tools when the command line names `mcp` (`baton mcp --help`, `baton
 * help mcp`, the server itself, which loads the tools anyway): help is printed synchronously, and
 * every other command is spared loading them.
 */
export async function loadMcpToolNames(argv: readonly string[]): Promise<void> {
  if (!argv.slice(2).includes('mcp')) return;
  const { ALLOW_RUN_TOOLS, MCP_TOOLS } = await import('../mcp/tool-registry.js');
  toolNames = {
    served: MCP_TOOLS.map((tool) => tool.name),
    allowRun: ALLOW_RUN_TOOLS.map((tool) => tool.name),
  };
}

/** `Tools: a, b, ...` wrapped at 100 columns, like the rest of the help. */
function toolsText(): string {
  if (toolNames === null) return 'Tools: see docs/mcp.md.';
  const words = [
    'Tools:',
    ...toolNames.served.map((name, i) => (i < toolNames!.served.length - 1 ? `${name},` : name)),
    `(and ${toolNames.allowRun.join(', ')}, with --allow-run).`,
  ];
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line !== '' && line.length + 1 + word.length > 100) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join('\n');
}

/** `baton mcp`: Baton as a Model Context Protocol server for agent hosts (src/mcp/). */
export function registerMcpCommands(program: Command, act: Act): void {
  program
    .command('mcp')
    .description(
      'serve Baton to an agent host (Claude, Codex, Gemini, OpenClaw, IDEs) as an MCP server over stdio: tools to classify, validate, propose and follow runs, and each run as a resource',
    )
    .option(
      '--allow-run',
      "add the run tool, which starts a plan at once without the person's approval (default: work starts only through propose and approve_run)",
    )
    .option('--http', 'serve streamable HTTP on 127.0.0.1 instead of stdio, with a bearer token')
    .option('--port <n>', 'with --http: the port (default: a free one)')
    .option(
      '--token-file <file>',
      'with --http: read the bearer token from this file instead of making one (at least 16 characters)',
    )
    .addHelpText(
      'after',
      () => `
${toolsText()}
Resources: baton://runs/<id>, subscribable.

It uses the store and home of every command (--home, --store). Every output is masked (the
secrets of the environment, BATON_SECRET_ENV and each run's plan) and bounded in size. A plan
proposed through it gets the same checks as baton propose: its agent commands are refused unless
they are known agent CLIs or programs the operator trusted (baton trust add); a plan trusts nothing.
A plan given by path is read only inside the folder it was started in (the project) or its home,
symbolic links followed, and a file that is not a plan is never quoted. A request is at most 8 MiB
(larger: an error answer, the session goes on); an event's payload or a result at most 1 MiB.

Register it with a host:  baton skill install --target claude|codex|gemini|openclaw

Examples:
  baton mcp                                       stdio (how hosts start it)
  baton --home ~/project/.baton mcp --allow-run   a host may start runs without approval
  baton mcp --http --port 8765                    http://127.0.0.1:8765/mcp, token printed once`,
    )
    .action(act(async () => (await import('./commands/mcp.js')).mcpCommand));
}
