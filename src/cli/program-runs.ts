import type { Command } from 'commander';
import { type Act, concurrency, json, lease, withPlanOptions } from './program-options.js';

/** The commands that start work and drive it: init, run, propose, approve, reject, send, check, step, worker. */
export function registerRunCommands(program: Command, act: Act): void {
  program
    .command('init [dir]')
    .description('write a starter plan (baton.plan.yaml) and print the heartbeat line that drives it')
    .option('--force', 'overwrite an existing baton.plan.yaml')
    .action(act(async () => (await import('./commands/init.js')).initCommand));
  withPlanOptions(
    program
      .command('run <plan>')
      .description('store a run of a plan (YAML or JSON) and drive it to the end in the foreground'),
  )
    .option('--detach', 'store the run and return; baton check or baton worker drives it')
    .option(
      '--stop-agents',
      'on Ctrl-C (SIGINT) or SIGTERM, stop the running agents (recorded interrupted) instead of leaving them to their lease',
    )
    .addOption(concurrency())
    .addOption(lease())
    .addOption(json())
    .addHelpText(
      'after',
      `
Again with --id <run-id> of an existing run: the same plan, inputs and workspace resume that run
(a run that already ended only reports, with the exit code it ended with); a different one is
refused (exit 2) naming what differs.

Ctrl-C (SIGINT) or SIGTERM: no new step starts; the running step is left to its lease (or its
agents are stopped, with --stop-agents); the command says how to continue and exits 130 (SIGINT)
or 143 (SIGTERM).

Confinement: a step with sandbox: workspace (or defaults.sandbox: workspace) runs its agent under
bubblewrap: only the workspace, the CLI's own config folders and a private /tmp are writable, the
Baton home is hidden, the network stays. Where bwrap cannot run, the plan is refused (exit 2);
baton agents says whether it works here.`,
    )
    .action(act(async () => (await import('./commands/run.js')).runCommand));
  withPlanOptions(
    program
      .command('propose <plan>')
      .description(
        'validate a plan and store it as a run awaiting approval; prints a summary to show the user',
      ),
  )
    .addOption(json())
    .action(act(async () => (await import('./commands/propose.js')).proposeCommand));
  // A proposed run, or with a step, a step waiting for approval: one registration for both verbs.
  for (const [verb, description] of [
    ['approve', 'start a proposed run; with a step: approve that step, which waits for approval'],
    [
      'reject',
      'drop a proposed run; nothing of it runs. With a step: reject that step, which waits for approval; the steps after it are skipped',
    ],
  ] as const) {
    const command = program.command(`${verb} <run> [step]`).description(description);
    if (verb === 'approve')
      command.option(
        '--delay <duration>',
        'wait this long before each step that follows another (e.g. 2m for rate-limited APIs; none or 0: no wait, the default)',
      );
    command
      .option(
        '--tool <call-id>',
        `with a step: ${verb} the tool call the running agent waits on (agent.approve; baton status lists them); the agent goes on in its session`,
      )
      .option('--comment <text>', "with a step: why (kept in the step's result)")
      .option('--by <name>', 'with a step: who decides (default: the OS user)')
      .addOption(json())
      .action(
        act(async () => {
          const { decideCommand } = await import('./commands/propose.js');
          const { decideStepCommand, refuseStepOptions } = await import('./commands/waits.js');
          return async (runId: string, stepId: string | undefined, options: object) => {
            if (stepId !== undefined) return decideStepCommand(verb, runId, stepId, options);
            refuseStepOptions(runId, options);
            return decideCommand(verb, runId, options);
          };
        }),
      );
  }
  program
    .command('send <event>')
    .description(
      'send an event: it ends the steps waiting for it (wait: { for: event }), in every run, or only --run',
    )
    .option(
      '--run <run>',
      'only this run; its step that does not wait yet keeps the event until it does (the first one wins)',
    )
    .option(
      '--data <json|@file>',
      "the payload, the step's result: JSON, or @file holding JSON (a regular UTF-8 file; default null); at most 1 MiB, the payload limit",
    )
    .addOption(json())
    .action(act(async () => (await import('./commands/waits.js')).sendCommand));
  program
    .command('check [state-json]')
    .description(
      'run every step that is due now, then exit; safe to run from cron or a heartbeat, several at once.\n' +
        "With a state.json path: behave as the agent-step-sequencer skill's check script on that file: drive " +
        'every step it can, print one "BLOCKED <step>: <reason>" line per blocked step on every check, exit 0 ' +
        'also while blocked (exit 2 only for a bad file or setting); a missing file is one line on stderr, exit 0',
    )
    .option('--max-time <duration>', 'stop after this long (e.g. 4m); unfinished attempts are retried later')
    .option('--quiet', 'print only blocked runs (with a state.json: only its BLOCKED lines)')
    .option(
      '--store-wait <duration>',
      'how long to wait for a PostgreSQL store that cannot be reached yet, retrying with a line each time: a duration, forever, or 0 (default 30s)',
    )
    .addOption(concurrency())
    .addOption(lease())
    .addOption(json())
    .action(
      act(async () => {
        const { checkCommand } = await import('./commands/check.js');
        const { legacyCommand } = await import('./commands/legacy.js');
        return (statePath: string | undefined, options: object) =>
          statePath === undefined ? checkCommand(options) : legacyCommand('check', statePath, options);
      }),
    );
  program
    .command('step <state-json>')
    .description(
      "run the current step of a skill state.json, then drive the rest of the plan as check does (the skill's " +
        'runner chained into its check) until it is done, blocked or a stepDelayMinutes wait is due; exit 1 when ' +
        'the step it was called for is FAILED at the end, 0 (one line on stderr) when the file is missing, 2 when ' +
        'it is bad; a step blocked at STEP_MAX_RETRIES (or STEP_MAX_INTERRUPTIONS) is run once more, as the ' +
        "skill's runner does. " +
        'BATON_SANDBOX=workspace confines its agent as sandbox: workspace does (also for check <state-json>)',
    )
    .option('--one', 'run only the current step, once (the cursor moves on the next check)')
    .option('--max-time <duration>', 'stop after this long (e.g. 4m); an unfinished try is run again later')
    .option('--quiet', 'print only the BLOCKED lines')
    .addOption(json())
    .action(
      act(async () => {
        const { legacyCommand } = await import('./commands/legacy.js');
        return (statePath: string, options: object) => legacyCommand('step', statePath, options);
      }),
    );
  program
    .command('worker')
    .description('stay up and run steps as they become due (SIGTERM: finish in-flight steps, then exit)')
    .option('--grace <duration>', 'on SIGTERM, how long in-flight steps may take to finish (default 30s)')
    .option('--quiet', 'no progress lines')
    .option(
      '--store-wait <duration>',
      'how long to wait for a PostgreSQL store that cannot be reached yet, retrying with a line each time: a duration, forever, or 0 (default forever)',
    )
    .option(
      '--metrics <port>',
      "also serve Prometheus metrics at /metrics on this port (0: a free one): the store's figures and this worker's claim-cycle latency",
    )
    .option(
      '--metrics-host <host>',
      'the address /metrics listens on (default 127.0.0.1; any other needs --metrics-token-file)',
    )
    .option(
      '--metrics-token-file <file>',
      'a token (in this file) a scrape must send as Authorization: Bearer <token>; without it, /metrics is open to this machine',
    )
    .addOption(concurrency())
    .addOption(lease())
    .addHelpText(
      'after',
      `
With --metrics, each worker is a scrape target of its own: the store's figures (the same from
every worker and from baton serve --metrics) and its own store cycles' latency
(docs/operating.md: which process exports what, a scrape config).

Examples:
  baton worker
  baton worker --metrics 9465
  baton worker --metrics 9465 --metrics-host 0.0.0.0 --metrics-token-file ~/.baton-metrics-token`,
    )
    .action(act(async () => (await import('./commands/worker.js')).workerCommand));
}
