import { Command, CommanderError, Option } from 'commander';
import { EXIT } from './exit-codes.js';

// Command modules are imported when their command runs, so a command loads only what it uses.
const program = new Command()
  .name('baton')
  .description(
    'A durable step sequencer for AI agents: a plan of steps run by agent CLIs, model calls or functions, stored in SQLite (or PostgreSQL), ' +
      'surviving crashes, retrying what is worth retrying and handing the rest to a human.',
  )
  .version('0.1.0')
  .option('--home <dir>', 'Baton folder holding baton.db and attempt logs (env BATON_HOME)', undefined)
  .option(
    '--store <url>',
    'keep runs in PostgreSQL instead of baton.db: postgres://user:password@host:5432/db[?schema=name] ' +
      '(env BATON_DATABASE_URL; schema also BATON_PG_SCHEMA, default baton)',
  )
  .showHelpAfterError('(run baton <command> --help for usage)')
  .exitOverride()
  .addHelpText(
    'after',
    `
Exit codes: 0 ok, 1 work failed or is blocked, 2 bad input or configuration.

Secrets: BATON_SECRET_ENV=NAME,NAME (or NAME:NAME) names more variables whose values are masked in
everything Baton records and prints and never reach an agent or a hook command, like the store URL,
hooks' urlEnv and (unless the agent CLI reads it) models' apiKeyEnv.

Quick start:
  baton init                      write a starter plan (baton.plan.yaml)
  baton run baton.plan.yaml       run it in the foreground
  baton status                    list runs; baton status <run> for its steps
  baton check                     run what is due, then exit (for cron / heartbeats)`,
  );

type Action = (...args: never[]) => Promise<number>;
let exitCode: number = EXIT.ok;
const act =
  <A extends unknown[]>(load: () => Promise<(...args: A) => Promise<number>>) =>
  async (...args: A) => {
    const command = args[args.length - 1] as Command;
    const options = { ...program.opts(), ...command.opts() };
    const fn = await load();
    const positional = args.slice(0, -2);
    exitCode = await (fn as unknown as Action)(...(positional as never[]), options as never);
  };

const json = () => new Option('--json', 'print JSON instead of text');
const agent = () =>
  new Option(
    '--agent <argv-json>',
    'agent for steps whose plan sets none, as a JSON array (env BATON_AGENT_CMD)',
  );
const concurrency = () =>
  new Option('--concurrency <n>', 'steps running at once in this process (env BATON_CONCURRENCY, default 8)');
const lease = () =>
  new Option(
    '--lease <duration>',
    'lease length; an attempt whose worker stops renewing is retried after it (default 30s)',
  );

const allowWorkspace = () =>
  new Option(
    '--allow-workspace <dir>',
    'let this folder be the workspace although it is the root, your home folder or above the Baton home',
  );

/** The options of every command that stores a run of a plan file (run, propose). */
function withPlanOptions(command: Command): Command {
  return command
    .option('-i, --input <name=value...>', 'a plan input, repeatable')
    .option(
      '--workspace <dir>',
      "folder the agents work in (default: the plan's workspace, else the plan file's folder)",
    )
    .addOption(allowWorkspace())
    .option('--id <run-id>', 'use this run id instead of a generated one')
    .option(
      '--shadow',
      'shadow run: steps with a sideEffect are not executed, nor is any ctx.effect; what they would do is recorded (step.would_execute)',
    )
    .addOption(agent());
}

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
      'the step it was called for is FAILED at the end, 2 when the file is missing or bad. ' +
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
  .addOption(concurrency())
  .addOption(lease())
  .action(act(async () => (await import('./commands/worker.js')).workerCommand));

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
  .action(act(async () => (await import('./commands/copy-home.js')).copyHomeCommand));

withPlanOptions(
  program
    .command('propose <plan>')
    .description(
      'validate a plan and store it as a run awaiting approval; prints a summary to show the user',
    ),
)
  .addOption(json())
  .action(act(async () => (await import('./commands/propose.js')).proposeCommand));

program
  .command('approve <run>')
  .description('start a proposed run')
  .option(
    '--delay <duration>',
    'wait this long before each step that follows another (e.g. 2m for rate-limited APIs)',
  )
  .addOption(json())
  .action(
    act(async () => {
      const { decideCommand } = await import('./commands/propose.js');
      return (runId: string, options: object) => decideCommand('approve', runId, options);
    }),
  );

program
  .command('reject <run>')
  .description('drop a proposed run; nothing of it runs')
  .addOption(json())
  .action(
    act(async () => {
      const { decideCommand } = await import('./commands/propose.js');
      return (runId: string, options: object) => decideCommand('reject', runId, options);
    }),
  );

program
  .command('agents')
  .description(
    'the agent CLIs found on PATH (claude, codex, gemini, openclaw, opencode, aider): version, profile, ' +
      'what is misconfigured and how to fix it; and whether confinement (sandbox: workspace) works here, by starting a bwrap sandbox',
  )
  .option('--plan <file>', "also check a plan's agent commands (the flags Baton needs to read their output)")
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
reset[:bytes], midstream_error, cut_stream, overflow[:flavour], truncate_text, stop_at_limit,
truncate_tool, finished_cut_json, unknown_tool, invalid_args, fatal[:400|401|403|404], quota.
--mix probabilities add up to 1 at most; the rest of the requests get ok.
Point a model step at it with  model: { provider: openai, baseUrl: <printed url>/v1, ... }
A script file entry: {"fault":"ok", "reply":{"text":"done"} | {"toolCalls":[{"name":"Write","arguments":{...}}]},
  "when":{"wire","model","stream","promptIncludes","hasToolResult","hasTools"}, "repeat":N|"forever"}.
Each request takes the first entry whose "when" matches; use "when":{"hasTools":true} for agent turns.`,
  )
  .action(act(async () => (await import('./commands/mock-llm.js')).mockLlmCommand));

program
  .command('classify <request...>')
  .description("does this request need a multi-step plan? (the skill's MULTI_STEP rule, English and Chinese)")
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

const colours = `
Colours: on a terminal only, never with --json or in a pipe; NO_COLOR=1 turns them off,
FORCE_COLOR=1 on (in a pipe too; NO_COLOR wins). Tables are aligned by display width (CJK
characters and emoji take two columns).`;

program
  .command('status [run]')
  .description(
    "list recent runs, or show one run's steps (exit 1 if that run is blocked, failed or cancelled)",
  )
  .option('--limit <n>', 'how many runs to list (default 20)')
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

for (const [name, description] of [
  ['retry', 'run a blocked (or waiting) step again now, with fresh tries'],
  ['skip', 'mark a step skipped so the steps after it can go on'],
] as const) {
  program
    .command(`${name} <run> <step>`)
    .description(description)
    .addOption(json())
    .action(
      act(async () => {
        const { manageCommand } = await import('./commands/run-actions.js');
        return (runId: string, stepId: string, options: object) =>
          manageCommand(name, runId, stepId, options);
      }),
    );
}

program
  .command('export <run>')
  .description("the run's event log as JSON lines, one event per line (to stdout, or --output <file>)")
  .option('--output <file>', 'write to this file (created 0600) instead of stdout')
  .action(act(async () => (await import('./commands/export.js')).exportCommand));

program
  .command('gc')
  .description(
    'remove runs that finished long ago (with their events, attempts and logs) and unreferenced artifacts',
  )
  .requiredOption('--older-than <duration>', 'remove runs finished more than this long ago, e.g. 30d')
  .option('--dry-run', 'only say what would be removed')
  .option(
    '--vacuum',
    'then give the freed space back at once (SQLite: VACUUM, which needs free disk as large as the database)',
  )
  .addOption(json())
  .action(act(async () => (await import('./commands/gc.js')).gcCommand));

program
  .command('diff <runA> <runB>')
  .description(
    "how two runs' results differ, step by step (a shadow run against a real one, two models; a shadow run's stand-ins are marked); exit 1 if any differs",
  )
  .addOption(json())
  .action(act(async () => (await import('./commands/diff.js')).diffCommand));

program
  .command('resolve <run> <step>')
  .description(
    'supply the outcome of a blocked step (e.g. an unsafe step interrupted mid-effect); it succeeds with it',
  )
  .requiredOption(
    '--result <file|json>',
    "the step's result: a JSON value, or a file holding JSON (or plain text)",
  )
  .addOption(json())
  .action(act(async () => (await import('./commands/resolve.js')).resolveCommand));

program
  .command('resume <run>')
  .description('give a run stopped by its maxSteps budget as many attempts again, and go on')
  .addOption(json())
  .action(
    act(async () => {
      const { manageCommand } = await import('./commands/run-actions.js');
      return (runId: string, options: object) => manageCommand('resume', runId, undefined, options);
    }),
  );

program
  .command('cancel <run>')
  .description('cancel a run: no step of it starts again; running agents are stopped')
  .addOption(json())
  .action(
    act(async () => {
      const { manageCommand } = await import('./commands/run-actions.js');
      return (runId: string, options: object) => manageCommand('cancel', runId, undefined, options);
    }),
  );

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
  .addHelpText(
    'after',
    `
It reads and acts on the same store as every command (--home, --store). The session token is
printed once, in the address to open; the browser keeps it in an HttpOnly, SameSite=Strict
cookie. Every page, stream and action needs it; actions also need the page's CSRF token.

Examples:
  baton serve                                            http://127.0.0.1:<free port>/?token=...
  baton serve --port 8080
  baton serve --host 0.0.0.0 --port 8080 --token-file ~/.baton-console-token`,
  )
  .action(act(async () => (await import('./commands/serve.js')).serveCommand));

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
  .option('--workspace <dir>', "OpenClaw's workspace, where HEARTBEAT.md is (default ~/.openclaw/workspace)")
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

/** Parses the command line with commander and runs the command; returns its exit code. */
export async function runProgram(argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.badInput;
    throw error;
  }
  return exitCode;
}
