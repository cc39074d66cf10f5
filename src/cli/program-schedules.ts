import { type Command, Option } from 'commander';
import { type Act, agent, allowWorkspace, json } from './program-options.js';

/** The timing and overlap options of `schedule add` and `schedule update`. */
function withRuleOptions(command: Command): Command {
  return command
    .option(
      '--cron <expr>',
      'cron expression: [second] minute hour day-of-month month day-of-week, e.g. "0 8 * * *"; at most once a minute',
    )
    .option('--tz <zone>', 'IANA time zone of --cron, e.g. Asia/Shanghai (default UTC)')
    .option('--every <duration>', 'a fixed interval instead of --cron, 1m or more, e.g. 5m, 15m, 1h')
    .addOption(
      new Option(
        '--overlap <policy>',
        'a slot while the previous run still goes: skip it (recorded), queue it, or allow it',
      ).choices(['skip', 'queue', 'allow']),
    )
    .option(
      '--catch-up <duration|none>',
      'after downtime, start the missed slots of this window (at most 10, oldest first; default 1h); none: only the latest',
    )
    .option('--start-at <time>', 'no slot before this time, e.g. 2026-12-03T08:00:00+08:00')
    .option('--end-at <time>', 'no slot after this time');
}

/** `baton schedule …`: plans that run by themselves, once per slot, stored in the store. */
export function registerScheduleCommands(program: Command, act: Act): void {
  const schedule = program
    .command('schedule')
    .description(
      'run a plan on a schedule (cron with a time zone, or every <duration>): each slot starts one run',
    )
    .addHelpText(
      'after',
      `
A schedule stores its plan (a snapshot: the file may change or vanish later), inputs and rules.
Whatever already drives work ticks it: baton check (a heartbeat), baton worker, Baton.worker().
Each slot starts exactly one run, named <schedule>-<slot in UTC> (daily-report-20261203T000000Z),
however many checkers and workers run at once.

Examples:
  baton schedule preview --cron "0 8 * * *" --tz Asia/Shanghai     when it fires
  baton schedule add daily-report report.yaml --cron "0 8 * * *" --tz Asia/Shanghai -i topic=rivals
  baton schedule add sync sync.yaml --every 15m --overlap queue --catch-up none
  baton schedule add daily-report report.yaml --cron "0 8 * * *" --shadow   two weeks in shadow…
  baton schedule update daily-report --live                               …then live
  baton schedule list                    next three slots, last run, missed slots
  baton schedule show daily-report       its slots: started (with the run), skipped, missed
  baton schedule trigger daily-report    start a run now
  baton schedule pause daily-report; baton schedule resume daily-report
  baton schedule update daily-report --plan report.yaml            take the new version of the plan
  baton schedule rm daily-report
`,
    );

  withRuleOptions(
    schedule
      .command('add <name> <plan>')
      .description('add a schedule of a plan file: --cron "<expr>" [--tz <zone>] or --every <duration>'),
  )
    .option('-i, --input <name=value...>', 'a plan input, repeatable')
    .option('-l, --label <key=value...>', 'a label of each of its runs, repeatable (e.g. -l team=growth)')
    .option(
      '--priority <0-9>',
      "claim priority of its runs, higher first (default: the plan's priority, else 0)",
    )
    .option(
      '--shadow',
      'its runs are shadow runs: steps with a side effect are recorded, not executed, and waits for approval are decided by the plan (default: approved by shadow); schedule update --live makes them live',
    )
    .option(
      '--workspace <dir>',
      "folder the agents work in (default: the plan's workspace, else the plan file's folder)",
    )
    .addOption(allowWorkspace())
    .addOption(agent())
    .addOption(json())
    .action(act(async () => (await import('./commands/schedules.js')).scheduleAddCommand));

  withRuleOptions(
    schedule
      .command('update <name>')
      .description(
        'change a schedule: --plan <file> takes a new version of the plan; the options given replace theirs',
      ),
  )
    .option('--plan <file>', "the plan file to store as the schedule's new snapshot")
    .option('--shadow', 'from the next slot on, its runs are shadow runs')
    .option('--live', 'from the next slot on, its runs are live runs (even of a plan that says shadow)')
    .option('-i, --input <name=value...>', 'a plan input (with --plan), repeatable')
    .option(
      '-l, --label <key=value...>',
      'the labels of its runs from the next slot on (replacing theirs), repeatable',
    )
    .option('--priority <0-9>', 'the claim priority of its runs from the next slot on')
    .option('--workspace <dir>', 'folder the agents work in (with --plan)')
    .addOption(allowWorkspace())
    .addOption(agent())
    .addOption(json())
    .action(act(async () => (await import('./commands/schedules.js')).scheduleUpdateCommand));

  schedule
    .command('list')
    .description('every schedule: its next three slots, last run and its outcome, missed slots')
    .addOption(json())
    .action(act(async () => (await import('./commands/schedules.js')).scheduleListCommand));

  schedule
    .command('show <name>')
    .description('one schedule and its slot history: started (with the run), skipped or queued (why), missed')
    .option('--limit <n>', 'slots to show, newest first (default 20)')
    .addOption(json())
    .action(act(async () => (await import('./commands/schedules.js')).scheduleShowCommand));

  schedule
    .command('preview')
    .description(
      'when a cron expression (or an interval) fires, for checking one before adding it; opens no store',
    )
    .option('--cron <expr>', 'the cron expression, e.g. "30 2 * * *"')
    .option('--tz <zone>', 'IANA time zone of --cron (default UTC)')
    .option('--every <duration>', 'an interval instead of --cron')
    .option('--from <time>', 'list the slots after this time (default now)')
    .option('--count <n>', 'how many slots (default 5)')
    .addOption(json())
    .action(act(async () => (await import('./commands/schedules.js')).schedulePreviewCommand));

  schedule
    .command('pause <name>')
    .description('stop deciding slots (none is recorded while paused)')
    .addOption(json())
    .action(act(async () => (await import('./commands/schedules.js')).schedulePauseCommand));

  schedule
    .command('resume <name>')
    .description('go on from the first slot after now (the slots of the pause are not made up)')
    .addOption(json())
    .action(act(async () => (await import('./commands/schedules.js')).scheduleResumeCommand));

  schedule
    .command('trigger <name>')
    .description('start a run of the schedule now (<name>-<time>-manual), whatever its timing and overlap')
    .addOption(json())
    .action(act(async () => (await import('./commands/schedules.js')).scheduleTriggerCommand));

  schedule
    .command('rm <name>')
    .description('remove a schedule and its slot history (its runs stay)')
    .addOption(json())
    .action(act(async () => (await import('./commands/schedules.js')).scheduleRemoveCommand));
}
