/**
 * The masking boundary as the command line's contract: secrets of every kind (a secret input, a
 * BATON_SECRET_ENV value, `*_TOKEN`, `*_KEY` and `*_WEBHOOK_URL` variables, a hook's urlEnv, the
 * password of the `--store` URL) are stored in clear by a process that did not know them, then
 * read back by one that does through EVERY `baton` command that takes `--json` (enumerated from the
 * command tree, so a new command fails here until it is listed) and through `export`: none of them
 * may print one, whatever the command answers (a read, a write's summary, a schedule's view).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { program } from '../src/cli/program.js';
import { agentCommand, removeTempDirs, runBaton, tempDir, writePlan } from './helpers/cli.js';
import { legacyAgent, legacyState, writeState } from './helpers/legacy.js';
import { freshSchemaName, usePostgres } from './helpers/postgres.js';

afterAll(removeTempDirs);

const pg = usePostgres();

const SECRET = {
  phrase: 'phrase-Quartz7731xq',
  token: 'tok-Velvet4410yq',
  key: 'key-Marble9052zq',
  webhook: 'https://hooks.example.test/services/T0ZQ/Bq83Lm29Xvq',
  notify: 'http://127.0.0.1:9/notify/Nf55Kq71Wdq',
  pgpass: 'PgPass6612wwq',
} as const;

/** What must never be printed: each value whole, and the token parts of the URLs on their own. */
const NEVER = [...Object.values(SECRET), 'Bq83Lm29Xvq', 'Nf55Kq71Wdq'];

/** The reader's environment: each secret named as such, one way each. */
const READER_ENV = {
  DEPLOY_PHRASE: SECRET.phrase,
  BATON_SECRET_ENV: 'DEPLOY_PHRASE',
  API_TOKEN: SECRET.token,
  SERVICE_KEY: SECRET.key,
  ALERT_WEBHOOK_URL: SECRET.webhook,
  // Secret only because the plan's hook names it (urlEnv): its name looks like nothing.
  NOTIFY_URL: SECRET.notify,
};

/** The writer knew none of them: what it stored holds them in clear. */
const WRITER_ENV = {
  NOTIFY_URL: 'http://127.0.0.1:9/other-notify',
  FAIL_MESSAGE: `boom: ${Object.values(SECRET).join(' ')}`,
};

const INPUTS = Object.entries(SECRET).flatMap(([name, value]) => ['-i', `${name}=${value}`]);
const INPUT_DEFAULTS = Object.fromEntries(Object.keys(SECRET).map((name) => [name, { default: 'none' }]));
const SAYS = `report ${Object.keys(SECRET)
  .map((name) => `{{inputs.${name}}}`)
  .join(' ')}`;

/** The commands of the tree that take --json, as `baton <words>`. */
function jsonCommands(command: Command, words: string[] = []): string[] {
  if (command.commands.length > 0)
    return command.commands.flatMap((sub) => jsonCommands(sub, [...words, sub.name()]));
  return command.options.some((option) => option.long === '--json') ? [words.join(' ')] : [];
}

/**
 * One call of a command: `command` names it as the tree does, `args` follow the store option,
 * `code` is its exit code in the state the calls before it leave.
 */
interface Call {
  command: string;
  args: string[];
  code?: number;
}

/** The calls, in order; `paths` are the files and names the setup made. */
function calls(paths: Record<string, string>): Call[] {
  const json = (command: string, args: string[], code = 0): Call => ({
    command,
    args: [...args, '--json'],
    code,
  });
  return [
    // Reads.
    json('status', ['status']),
    json('status', ['status', 'a']),
    json('status', ['status', 'b'], 1),
    json('timeline', ['timeline', 'a']),
    json('logs', ['logs', 'a', 'echo']),
    json('logs', ['logs', 'b', 'boom']),
    json('diff', ['diff', 'a', 'c'], 1),
    { command: 'export', args: ['export', 'a'] },
    json('check', ['check'], 1),
    json('schedule list', ['schedule', 'list']),
    json('schedule show', ['schedule', 'show', 's']),
    json('schedule preview', ['schedule', 'preview', '--every', '1h']),
    json('flow set', ['flow', 'set', 'k', '--concurrency', '1']),
    json('flow list', ['flow', 'list']),
    json('flow rm', ['flow', 'rm', 'k']),
    json('gc', ['gc', '--older-than', '30d', '--dry-run']),
    json('trust add', ['trust', 'add', paths.script!]),
    json('trust list', ['trust', 'list']),
    json('trust rm', ['trust', 'rm', paths.script!]),
    json('agents', ['agents']),
    json('classify', ['classify', 'research', 'then', 'write', 'a', 'report']),
    json('skill install', ['skill', 'install', '--target', paths.skills!, '--heartbeat', 'none', '--no-mcp']),
    // A person's commands on the runs.
    json('approve', ['approve', 'a', 'gate', '--comment', 'fine']),
    json('reject', ['reject', 'a', 'gate2']),
    json('send', ['send', 'go', '--run', 'a']),
    json('rerun', ['rerun', 'a', '--from', 'echo']),
    json('fork', ['fork', 'c', '--from', 'echo2', '--id', 'c2']),
    json('resolve', ['resolve', 'b', 'boom', '--result', '{"done":true}']),
    json('skip', ['skip', 'b', 'after']),
    json('retry', ['retry', 'b2', 'boom']),
    json('cancel', ['cancel', 'b2']),
    json('resume', ['resume', 'c']),
    json('approve', ['approve', 'p1', '--delay', 'none']),
    json('reject', ['reject', 'p2']),
    // Schedules.
    json('schedule pause', ['schedule', 'pause', 's']),
    json('schedule resume', ['schedule', 'resume', 's']),
    json('schedule update', ['schedule', 'update', 's', '--every', '2h']),
    json('schedule trigger', ['schedule', 'trigger', 's']),
    json('schedule add', ['schedule', 'add', 's2', paths.contract!, '--every', '1h', ...INPUTS]),
    json('schedule rm', ['schedule', 'rm', 's']),
    // Runs started by this process: their inputs are stored as given, the answers masked.
    json('run', ['run', paths.simple!, ...INPUTS]),
    json('run', ['run', paths.contract!, '--id', 'a', '--detach', ...INPUTS]),
    json('propose', ['propose', paths.contract!, ...INPUTS]),
    json('import', ['import', paths.state!]),
    json('check', ['check', paths.state!]),
    json('step', ['step', paths.state!, '--one']),
    json('migrate', ['migrate', '--from', paths.sqlite!, '--to', paths.migrateTo!]),
  ];
}

describe('every baton command that takes --json answers masked', () => {
  it('lists a call for every command with --json (a new command is listed here)', () => {
    const placeholders = new Proxy({}, { get: () => 'x' }) as Record<string, string>;
    const called = new Set(calls(placeholders).map((call) => call.command));
    const missing = jsonCommands(program).filter((command) => !called.has(command));
    expect(missing).toEqual([]);
  });

  it('prints no secret a process that did not know it stored in clear', async () => {
    const dir = tempDir('baton-masking-');
    const schema = freshSchemaName('masking');
    const url = new URL(pg.server.url);
    const writerStore = `${pg.server.url}?schema=${schema}`;
    // The same database; the reader names it with a password (trust authentication ignores it).
    url.password = SECRET.pgpass;
    const readerStore = `${url.href}?schema=${schema}`;
    const writer = (args: string[]) =>
      runBaton(['--store', writerStore, ...args], { cwd: dir, env: WRITER_ENV, timeoutMs: 120_000 });
    const reader = (args: string[]) =>
      runBaton(['--store', readerStore, ...args], {
        cwd: dir,
        env: { ...WRITER_ENV, ...READER_ENV },
        timeoutMs: 120_000,
      });
    const ok = async (result: Promise<{ code: number | null; stdout: string; stderr: string }>, code = 0) => {
      const done = await result;
      expect(done.code, `${done.stdout}\n${done.stderr}`).toBe(code);
    };
    // Each plan takes the secrets as inputs, and its hook names NOTIFY_URL (a plan's secret).
    const plan = (
      name: string,
      steps: object[],
      extra: Record<string, unknown> = {},
      agent = 'agent-echo-argv',
    ) =>
      writePlan(
        dir,
        {
          name,
          inputs: INPUT_DEFAULTS,
          hooks: [{ on: ['failed'], urlEnv: 'NOTIFY_URL' }],
          defaults: { agent: { command: agentCommand(agent) }, retry: { maxAttempts: 1 } },
          ...extra,
          steps,
        },
        { name: `${name}.yaml` },
      );
    const contract = plan('contract', [
      { id: 'echo', instruction: SAYS },
      { id: 'gate', dependsOn: ['echo'], wait: { for: 'approval', prompt: 'Send {{inputs.phrase}}?' } },
      { id: 'gate2', dependsOn: ['echo'], wait: { for: 'approval' } },
      { id: 'ev', dependsOn: ['echo'], wait: { for: 'event', event: 'go' } },
    ]);
    const simple = plan('simple', [{ id: 'echo', instruction: SAYS }]);
    const failing = plan(
      'failing',
      [
        { id: 'boom', instruction: SAYS },
        { id: 'after', dependsOn: ['boom'], instruction: 'then' },
      ],
      {},
      'agent-fail-echo',
    );
    const budget = plan(
      'budget',
      [
        { id: 'echo1', instruction: SAYS },
        { id: 'echo2', dependsOn: ['echo1'], instruction: `again ${SAYS}` },
      ],
      { limits: { maxSteps: 1 } },
    );
    // The writer's runs: a waiting one, two blocked by a failure, one stopped by its budget, two
    // proposed, a schedule; and a SQLite home to migrate.
    for (const [plan, id] of [
      [contract, 'a'],
      [failing, 'b'],
      [failing, 'b2'],
      [budget, 'c'],
    ] as const)
      await ok(writer(['run', plan, '--id', id, '--detach', ...INPUTS]));
    await ok(writer(['check']), 1);
    for (const id of ['p1', 'p2']) await ok(writer(['propose', contract, '--id', id, ...INPUTS]));
    await ok(writer(['schedule', 'add', 's', contract, '--every', '1h', ...INPUTS]));
    const home = join(dir, 'sqlite-home');
    await ok(
      runBaton(['--home', home, 'run', contract, '--id', 'm', '--detach', ...INPUTS], {
        cwd: dir,
        env: WRITER_ENV,
      }),
    );
    const script = join(dir, 'my-agent.mjs');
    writeFileSync(script, 'console.log("hello")\n');
    const state = writeState(
      dir,
      legacyState(['one', 'two'], {
        plan: {
          steps: { one: { instruction: `report ${NEVER.join(' ')}` }, two: { instruction: 'then' } },
        },
      }),
    );
    const paths = {
      contract,
      simple,
      script,
      state,
      skills: join(dir, 'skills'),
      sqlite: join(home, 'baton.db'),
      migrateTo: `${url.href}?schema=${freshSchemaName('migrated')}`,
    };

    const leaks: string[] = [];
    const wrongCodes: string[] = [];
    for (const call of calls(paths)) {
      const legacy = call.command === 'step' || (call.command === 'check' && call.args[1] === state);
      const result = legacy
        ? await runBaton(call.args, {
            cwd: dir,
            env: { ...WRITER_ENV, ...READER_ENV, STEP_AGENT_CMD: legacyAgent('agent-echo-argv') },
            timeoutMs: 120_000,
          })
        : call.command === 'migrate'
          ? await runBaton(['--home', home, ...call.args], {
              cwd: dir,
              env: { ...WRITER_ENV, ...READER_ENV },
              timeoutMs: 120_000,
            })
          : await reader(call.args);
      const printed = result.stdout + result.stderr;
      const shown = NEVER.filter((secret) => printed.includes(secret));
      if (shown.length > 0) leaks.push(`baton ${call.args.join(' ')}: prints ${shown.join(', ')}`);
      if (result.code !== (call.code ?? 0))
        wrongCodes.push(`baton ${call.args.join(' ')}: exit ${result.code}\n${result.stderr}`);
    }
    expect({ leaks, wrongCodes }).toEqual({ leaks: [], wrongCodes: [] });
  }, 600_000);
});
