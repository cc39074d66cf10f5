import type { Command } from 'commander';
import { type Act, json } from './program-options.js';

/** Flow limits and Baton's agent skill: flow set/list/rm, skill install. */
export function registerAdminCommands(program: Command, act: Act): void {
  const flow = program
    .command('flow')
    .description(
      'flow control: limit how many steps of one executor run at once and start per window, across all runs and workers',
    )
    .addHelpText(
      'after',
      `
A step's flow key is its plan's flowKey, else its executor: the agent command's base name
(claude, codex), the model provider (openai, anthropic) or fn:<name>. Limits live in the store,
so every worker on it (baton worker, run, check) obeys them; steps over a limit wait, due.

Examples:
  baton flow set claude --concurrency 2 --rate 10/1m   at most 2 at once, 10 started per minute
  baton flow set openai --rate 1/2m                    one call started every 2 minutes at most
  baton flow list                                      limits, with what runs now
  baton flow rm claude
`,
    );

  flow
    .command('set <key>')
    .description('set (or replace) the limit of a flow key')
    .option('--concurrency <n>', 'steps under the key running at once, across all workers')
    .option('--rate <starts/window>', 'steps started in any window, e.g. 10/1m, 10/min, 100/h, 1/2m')
    .addOption(json())
    .action(act(async () => (await import('./commands/flow.js')).flowSetCommand));

  flow
    .command('list')
    .description('every flow limit, with the steps running under it and its starts in the current window')
    .addOption(json())
    .action(act(async () => (await import('./commands/flow.js')).flowListCommand));

  flow
    .command('rm <key>')
    .description('remove the limit of a flow key')
    .addOption(json())
    .action(act(async () => (await import('./commands/flow.js')).flowRemoveCommand));

  const skill = program
    .command('skill')
    .description("Baton's agent skill (skill/SKILL.md): install it where an agent host looks for skills");

  skill
    .command('install')
    .description(
      'write the skill folder where the host looks for skills, and wire its heartbeat with the absolute Baton home',
    )
    .option(
      '--target <host|dir>',
      'claude (.claude/skills), agents (.agents/skills), openclaw (~/.openclaw/skills), gemini (~/.gemini/skills), or a skills folder path with a / (default claude)',
    )
    .option(
      '--global',
      "claude and agents: the user's folder (~/.claude/skills, ~/.agents/skills) instead of the current project's",
    )
    .option(
      '--heartbeat <kind>',
      'openclaw (a line in HEARTBEAT.md; default for --target openclaw), cron (print the crontab line; default otherwise), systemd (write user units), none',
    )
    .option(
      '--workspace <dir>',
      "OpenClaw's workspace, where HEARTBEAT.md is (default ~/.openclaw/workspace)",
    )
    .option('--force', 'replace a skill folder (or systemd units) that already exist')
    .addOption(json())
    .addHelpText(
      'after',
      `
Examples:
  baton skill install                          .claude/skills/baton in this project, and the cron line
  baton skill install --target openclaw        ~/.openclaw/skills/baton and a HEARTBEAT.md line
  baton skill install --target agents --global --heartbeat systemd`,
    )
    .action(act(async () => (await import('./commands/skill.js')).skillInstallCommand));
}
