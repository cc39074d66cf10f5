import type { Command } from 'commander';
import { type Act, allowWorkspace, json } from './program-options.js';

/** Setting Baton up beside the agents: agents, trust, skill, mock-llm, classify, import, migrate. */
export function registerSetupCommands(program: Command, act: Act): void {
  program
    .command('agents')
    .description(
      'the agent CLIs found on PATH (claude, codex, gemini, openclaw, opencode, aider): version, profile, ' +
        'what is misconfigured and how to fix it; and whether confinement (sandbox: workspace) works here, by starting a bwrap sandbox',
    )
    .option(
      '--plan <file>',
      "also check a plan's agent commands (the flags Baton needs to read their output)",
    )
    .option(
      '--workspace <dir>',
      "the folder agents work in, for trust checks (default: the plan's, else this one)",
    )
    .addOption(json())
    .action(act(async () => (await import('./commands/agents.js')).agentsCommand));
  const trust = program
    .command('trust')
    .description(
      'programs allowed to receive prompt text besides the known agent CLIs: your own agent or script, recorded by real path and sha256',
    );
  trust
    .command('add <program>')
    .description(
      'trust a program or script file (a path, or a name on PATH); refused again if its content changes',
    )
    .addOption(json())
    .action(act(async () => (await import('./commands/trust.js')).trustAddCommand));
  trust
    .command('list')
    .description(
      'the trusted programs of this Baton home and of BATON_TRUSTED_AGENTS, and whether each changed',
    )
    .addOption(json())
    .action(act(async () => (await import('./commands/trust.js')).trustListCommand));
  trust
    .command('rm <program>')
    .description('stop trusting a program')
    .addOption(json())
    .action(act(async () => (await import('./commands/trust.js')).trustRmCommand));
  const skill = program
    .command('skill')
    .description("Baton's agent skill (skill/SKILL.md): install it where an agent host looks for skills");

  skill
    .command('install')
    .description(
      "write the skill folder where the host looks for skills, wire its heartbeat with the absolute Baton home, and register the MCP server (baton mcp) in the host's config",
    )
    .option(
      '--target <host|dir>',
      'claude (.claude/skills), codex or agents (.agents/skills), openclaw (~/.openclaw/skills), gemini (~/.gemini/skills), or a skills folder path with a / (default claude)',
    )
    .option(
      '--global',
      "claude, codex and agents: the user's folder (~/.claude/skills, ~/.agents/skills) instead of the current project's; the MCP server too (~/.claude.json, ~/.codex/config.toml, ~/.gemini/settings.json)",
    )
    .option(
      '--heartbeat <kind>',
      'openclaw (a line in HEARTBEAT.md; default for --target openclaw), cron (print the crontab line; default otherwise), systemd (write user units), none',
    )
    .option(
      '--workspace <dir>',
      "OpenClaw's workspace, where HEARTBEAT.md is (default ~/.openclaw/workspace)",
    )
    .option(
      '--force',
      'replace a skill folder or systemd units that exist and differ, and the baton MCP entry',
    )
    .option(
      '--no-mcp',
      "claude, codex, gemini, openclaw: do not register the MCP server (baton mcp) in the host's config",
    )
    .addOption(json())
    .addHelpText(
      'after',
      `
Examples:
  baton skill install                          .claude/skills/baton and .mcp.json in this project, and the cron line
  baton skill install --target codex --global  ~/.agents/skills/baton and [mcp_servers.baton] in ~/.codex/config.toml
  baton skill install --target openclaw        ~/.openclaw/skills/baton and a HEARTBEAT.md line
  baton skill install --target agents --global --heartbeat systemd`,
    )
    .action(act(async () => (await import('./commands/skill.js')).skillInstallCommand));
  program
    .command('mock-llm')
    .description(
      'start a local model server (OpenAI Chat/Responses, Anthropic, Gemini wire formats) that injects faults, to test model steps and agent CLIs offline',
    )
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <n>', 'port (default: a free one)')
    .option('--seed <n>', 'seed of the random fault mix (default 1)')
    .option(
      '--mix <fault=p,...>',
      'probability of each fault per request, e.g. rate_limit=0.1,truncate_text=0.05',
    )
    .option(
      '--script <fault,...>',
      'faults of the first requests in order, e.g. rate_limit:2,overflow:anthropic,ok',
    )
    .option(
      '--script-file <file>',
      'JSON array of script entries ({fault, reply, when, repeat}), e.g. to drive claude, codex or gemini',
    )
    .addHelpText(
      'after',
      `
Faults: ok, rate_limit[:seconds], rate_window_too_large, server_error[:500|502|503|529], stall[:ms],
reset[:bytes], midstream_error, cut_stream, silent_stream[:ms], overflow[:flavour], truncate_text, stop_at_limit,
truncate_tool, finished_cut_json, unknown_tool, invalid_args, fatal[:400|401|403|404], quota.
--mix probabilities add up to 1 at most; the rest of the requests get ok.
Point a model step at it with  model: { provider: openai, baseUrl: <printed url>/v1, ... }
A script file entry: {"fault":"ok", "reply":{"text":"done"} | {"toolCalls":[{"name":"Write","arguments":{...}}]},
  "when":{"wire","model","stream","promptIncludes","hasToolResult","hasTools"}, "repeat":N|"forever"}.
Each request takes the first entry whose "when" matches; use "when":{"hasTools":true} for agent turns.
A call of codex's MCP tools names their namespace: {"namespace":"mcp__<server>","name":"<tool>",...}.`,
    )
    .action(act(async () => (await import('./commands/mock-llm.js')).mockLlmCommand));
  program
    .command('classify <request...>')
    .description(
      "does this request need a multi-step plan? (the skill's MULTI_STEP rule, English and Chinese)",
    )
    .addOption(json())
    .action(act(async () => (await import('./commands/classify.js')).classifyCommand));
  program
    .command('import <state-json>')
    .description(
      'turn an agent-step-sequencer state.json into a native run (STEP_AGENT_CMD, STEP_MAX_RETRIES apply); ' +
        'importing the same file with the same content again finds that run instead of making another',
    )
    .option('--id <run-id>', 'use this run id instead of the one derived from the file')
    .option('--new', 'import it as another run although this file, unchanged, was imported before')
    .addOption(allowWorkspace())
    .addOption(json())
    .action(
      act(async () => {
        const { importCommand } = await import('./commands/legacy.js');
        return importCommand;
      }),
    );
  program
    .command('migrate')
    .description(
      'copy runs from a SQLite baton.db into PostgreSQL (runs, steps, attempts, events, artifact references), ' +
        'in one transaction, verifying the counts',
    )
    .option('--from <file>', 'the SQLite file to copy from, opened read-only (default: <home>/baton.db)')
    .option(
      '--to <url>',
      'postgres://user:password@host:5432/db[?schema=name] to copy into (default: --store or BATON_DATABASE_URL)',
    )
    .option('--runs <id,...>', 'copy only these runs (default: all of them)')
    .addOption(json())
    .addHelpText(
      'after',
      `
The PostgreSQL schema (default baton) is created or upgraded first. Everything is copied in ONE
transaction and the row counts of every table are compared before it commits: on any difference
nothing is written (exit 1). Runs the target already holds are refused before anything is written
(exit 2). The SQLite file is never changed, and the password of the URL is never printed.

Attempt logs and result artifacts are files under the home folder: they stay there, so keep
using the same --home with --store afterwards. Stop workers and cron lines that use the SQLite
file first, then point them at PostgreSQL (--store or BATON_DATABASE_URL).

Example:
  baton migrate --from .baton/baton.db --to postgres://baton:secret@db:5432/baton
  baton --store postgres://baton:secret@db:5432/baton status`,
    )
    .action(act(async () => (await import('./commands/migrate.js')).migrateCommand));
}
