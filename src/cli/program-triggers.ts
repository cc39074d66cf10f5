import type { Command } from 'commander';
import { type Act, agent, allowWorkspace, json } from './program-options.js';

/** `baton trigger …`: runs that start from a signed webhook delivery to `baton serve`. */
export function registerTriggerCommands(program: Command, act: Act): void {
  const trigger = program
    .command('trigger')
    .description(
      'start a run from a signed webhook (GitHub, Slack, Stripe, HMAC, bearer) posted to baton serve',
    )
    .addHelpText(
      'after',
      `
A trigger stores its plan (a snapshot) and how deliveries prove where they come from. baton serve
answers POST /hooks/<name>: it verifies the signature with the secret in the variable --secret-env
names (in baton serve's environment; never stored), evaluates --when, and starts one run named
<name>-<delivery id>: a redelivery answers 200 with the same run and stores nothing new.

Examples:
  baton trigger add issues triage.yaml --source github --secret-env GITHUB_WEBHOOK_SECRET \\
    --when 'event.type == "issues" && body.action == "opened"' -i title='{{body.issue.title}}'
  baton trigger add refunds refund.yaml --source stripe --secret-env STRIPE_WEBHOOK_SECRET --propose
  GITHUB_WEBHOOK_SECRET=... baton serve --host 0.0.0.0 --token-file token   then point GitHub at
                                                 https://<host>/hooks/issues
  baton trigger list; baton trigger show issues   recent deliveries: started, duplicate, filtered, refused
  baton trigger pause issues; baton trigger resume issues; baton trigger rm issues
`,
    );

  trigger
    .command('add <name> <plan>')
    .description('add a trigger of a plan file: --source <kind> --secret-env <VAR>')
    .requiredOption('--source <kind>', 'how deliveries are signed: github, slack, stripe, hmac or bearer')
    .requiredOption(
      '--secret-env <VAR>',
      "the name of the variable holding the secret in baton serve's environment (never the secret itself)",
    )
    .option(
      '--when <cel>',
      'start a run only when this CEL condition over event (type, id, source) and body is true; else 204, recorded as filtered',
    )
    .option(
      '-i, --input <name=value...>',
      "a plan input, repeatable; may use {{body.<path>}}, {{event.type}}, {{event.id}}, e.g. -i title='{{body.issue.title}}'",
    )
    .option('--propose', 'store its runs awaiting approval (baton approve <run>)')
    .option(
      '--priority <0-9>',
      "claim priority of its runs' steps, higher first (default: the plan's priority, else 0)",
    )
    .option('-l, --label <key=value...>', 'a label of each of its runs, repeatable (e.g. -l source=github)')
    .option(
      '--workspace <dir>',
      "folder the agents work in (default: the plan's workspace, else the plan file's folder)",
    )
    .addOption(allowWorkspace())
    .addOption(agent())
    .addOption(json())
    .action(act(async () => (await import('./commands/triggers.js')).triggerAddCommand));

  trigger
    .command('list')
    .description('every trigger: its source, plan, condition, and whether it is paused')
    .addOption(json())
    .action(act(async () => (await import('./commands/triggers.js')).triggerListCommand));

  trigger
    .command('show <name>')
    .description(
      'one trigger and its recent deliveries: started (with the run), duplicate, filtered, refused (why)',
    )
    .option('--limit <n>', 'deliveries to show, newest first (default 20)')
    .addOption(json())
    .action(act(async () => (await import('./commands/triggers.js')).triggerShowCommand));

  trigger
    .command('pause <name>')
    .description('answer its deliveries 503 (recorded as refused) until resumed')
    .addOption(json())
    .action(act(async () => (await import('./commands/triggers.js')).triggerPauseCommand));

  trigger
    .command('resume <name>')
    .description('start runs from its deliveries again')
    .addOption(json())
    .action(act(async () => (await import('./commands/triggers.js')).triggerResumeCommand));

  trigger
    .command('rm <name>')
    .description('remove a trigger and its delivery history (its runs stay)')
    .addOption(json())
    .action(act(async () => (await import('./commands/triggers.js')).triggerRemoveCommand));
}
