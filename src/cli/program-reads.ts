import type { Command } from 'commander';
import { type Act, colours, json } from './program-options.js';

/** The commands that show runs: status, timeline, logs, export, diff, serve (the console). */
export function registerReadCommands(program: Command, act: Act): void {
  program
    .command('status [run]')
    .description(
      "list recent runs, or show one run's steps (exit 1 if that run is blocked, failed or cancelled)",
    )
    .option('--limit <n>', 'how many runs to list (default 20)')
    .option('-l, --label <key=value...>', 'list only runs with this label, repeatable (all must match)')
    .option('--plan <name>', 'list only runs of this plan')
    .option('--status <status>', 'list only runs in this status (running, blocked, succeeded, ...)')
    .option('--since <duration>', 'list only runs created within this long (e.g. 2h)')
    .option(
      '--all',
      'with a run of more than 100 steps: list every step (without it: counts per status and the steps that are ready, running, waiting to retry, blocked or degraded)',
    )
    .option(
      '-w, --watch',
      'with a run: redraw its steps as they change until the run settles (succeeded, failed, blocked, cancelled), then exit as status <run> would; piped: a new snapshot at each change; --json: one JSON line per change',
    )
    .addOption(json())
    .addHelpText(
      'after',
      `
Ctrl-C (SIGINT) ends a watch with exit 130 (SIGTERM: 143).${colours}`,
    )
    .action(act(async () => (await import('./commands/read.js')).statusCommand));
  program
    .command('timeline <run>')
    .description('every transition of a run: time, elapsed, step, attempt, duration, outcome')
    .option(
      '-w, --watch',
      'then add each transition as it happens until the run settles; exit as status <run> would (--json: one event per line, as export writes them)',
    )
    .addOption(json())
    .addHelpText('after', `\nCtrl-C (SIGINT) ends a watch with exit 130.${colours}`)
    .action(act(async () => (await import('./commands/read.js')).timelineCommand));
  program
    .command('logs <run> <step>')
    .description("full output of a step's attempt (the last one unless --attempt)")
    .option('--attempt <n>', 'which attempt')
    .option(
      '-f, --follow',
      'keep printing what the attempt appends, then each new attempt (named on stderr), until the step settles: exit 0 if it succeeded (or was skipped or degraded), 1 if it is blocked or cancelled; with --attempt, that attempt until it ends',
    )
    .addOption(json())
    .addHelpText('after', '\nCtrl-C (SIGINT) ends --follow with exit 130.')
    .action(act(async () => (await import('./commands/read.js')).logsCommand));
  program
    .command('export <run>')
    .description("the run's event log as JSON lines, one event per line (to stdout, or --output <file>)")
    .option('--output <file>', 'write to this file (created 0600) instead of stdout')
    .action(act(async () => (await import('./commands/export.js')).exportCommand));
  program
    .command('diff <runA> [runB]')
    .description(
      "how two runs' results differ, step by step (a shadow run against a real one, two models; a shadow run's stand-ins are marked); exit 1 if any differs. One run a schedule started: against the run of the same slot on the other side (the live run of a shadow run's slot, started by a live schedule of the same plan beside it, or the reverse). With --files: what each step of one run changed in its workspace",
    )
    .option(
      '--files',
      'baton diff <run> --files [<step>]: the files each checkpointed step (checkpoint: workspace) added, changed and removed, with a unified diff of text files',
    )
    .addOption(json())
    .action(act(async () => (await import('./commands/diff.js')).diffCommand));
  program
    .command('serve')
    .description(
      'the operator console in a browser: runs, a live timeline, step logs, a blockers inbox with actions, flow limits and workers',
    )
    .option('--host <host>', 'address to listen on (default 127.0.0.1; anything else needs --token-file)')
    .option('--port <n>', 'port (default: a free one)')
    .option(
      '--token-file <file>',
      'read the session token from this file instead of making one (needed beyond loopback)',
    )
    .option(
      '--public-url <url>',
      'the address outsiders reach this console at: the base of the capability URLs of waiting and blocked steps (default: BATON_PUBLIC_URL, else the address it listens on)',
    )
    .option(
      '--metrics',
      'also serve Prometheus metrics at /metrics (runs, steps, due work, attempts, leases, hook calls), for a bearer token',
    )
    .option(
      '--metrics-token-file <file>',
      'a token (in this file) that reads /metrics and nothing else, for a scraper; implies --metrics',
    )
    .addHelpText(
      'after',
      `
It reads and acts on the same store as every command (--home, --store). The session token is
printed once, in the address to open; the browser keeps it in an HttpOnly, SameSite=Strict
cookie. Every page, stream and action needs it; actions also need the page's CSRF token.
The one exception: capability URLs answer once without a session: a waiting step's
(POST /wait/<run>/<step>/<token>/approve|reject|event, shown in the inbox and sent by hooks with
on: waiting), a tool call a running agent waits on (POST /tool/<run>/<step>/<token>/approve|reject,
the same) and a blocked step's (POST /blocked/<run>/<step>/<token>/retry|skip, sent by hooks
with on: blocked or budget). A GET on one only shows a page that asks (chat buttons open a browser).
Hooks carry them when the process that sends them has BATON_PUBLIC_URL set to this address.
With --metrics, GET /metrics answers the session (cookie or Authorization: Bearer <token>) or,
with --metrics-token-file, Authorization: Bearer <that token>, which opens nothing else
(docs/operating.md: the metrics, a scrape config and alert rules).

Examples:
  baton serve                                            http://127.0.0.1:<free port>/?token=...
  baton serve --port 8080
  baton serve --host 0.0.0.0 --port 8080 --token-file ~/.baton-console-token
  baton serve --port 8080 --public-url https://baton.example.com
  baton serve --port 9464 --token-file ~/.baton-console-token --metrics-token-file ~/.baton-metrics-token`,
    )
    .action(act(async () => (await import('./commands/serve.js')).serveCommand));
}
