import type { Command } from 'commander';
import type { Act } from './program-options.js';

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
      `
Tools: classify, validate_plan, propose, approve_run, reject_run, list_runs, run_status, timeline,
step_log, approve_step, reject_step, send_event, retry_step, skip_step, resolve_step, cancel_run,
check (and run, with --allow-run). Resources: baton://runs/<id>, subscribable.

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
