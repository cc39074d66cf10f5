/**
 * Secrets by value and the child environment as a policy, end to end with the real `baton` binary:
 * secrets of every kind planted in the environment (webhook URLs with tokens named by urlEnv, a
 * model step's apiKeyEnv, store-style URLs and passwords, a BATON_SECRET_ENV-listed value), agents
 * and a hook command that echo them, two webhook servers on 127.0.0.1 (one records, one fails); then
 * every row of every table, every read command, every payload and the legacy state file are searched.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { startRun } from '../src/engine/start-run.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import {
  agentCommand,
  type BatonResult,
  expectExit,
  fixture,
  removeTempDirs,
  runBaton,
  stopProcesses,
  tempDir,
  writePlan,
} from './helpers/cli.js';
import { legacyAgent, legacyState, readState, runLegacy, writeState } from './helpers/legacy.js';
import { planDir } from './helpers/plans.js';

const TEST_TIMEOUT = 60_000;

const servers: Server[] = [];
afterEach(async () => {
  await stopProcesses();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});
afterAll(() => removeTempDirs());

/** A webhook endpoint that records every body it gets; `status` is what it answers. */
async function webhook(status: number): Promise<{ url: string; bodies: string[]; paths: string[] }> {
  const bodies: string[] = [];
  const paths: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      bodies.push(body);
      paths.push(request.url ?? '');
      response.statusCode = status;
      response.end(status === 200 ? 'ok' : 'down');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, paths };
}

/** Secrets of every kind, none of them with a name the old name-based masking knew. */
function plantedSecrets(okUrl: string, failUrl: string) {
  const okToken = 'okPathT0ken9876';
  const okQuery = 'okQueryT0ken5432';
  const failToken = 'failPathT0ken24680';
  const failSig = 'failSigT0ken13579';
  const dbPassword = 'appDbPass1357qq';
  const env = {
    HOOK_OK_URL: `${okUrl}/hook/${okToken}?token=${okQuery}`,
    HOOK_FAIL_URL: `${failUrl}/services/T0FAIL77/${failToken}?sig=${failSig}`,
    LLM_ACCESS: 'llm-access-planted-4321zz',
    PGPASSWORD: 'pgPlantedPass2468',
    APP_DB: `postgres://app:${dbPassword}@127.0.0.1:5432/app`,
    DEPLOY_PHRASE: 'deployPhrasePlanted8642',
    BATON_SECRET_ENV: 'OTHER_NAME, DEPLOY_PHRASE:THIRD_NAME',
  };
  // What must never show up: each value whole, and the token parts on their own.
  const values = [
    env.HOOK_OK_URL,
    env.HOOK_FAIL_URL,
    okToken,
    okQuery,
    failToken,
    failSig,
    env.LLM_ACCESS,
    env.PGPASSWORD,
    env.APP_DB,
    dbPassword,
    env.DEPLOY_PHRASE,
  ];
  // What the agents and the hook command print: every secret whole, and the tokens alone.
  const echo =
    `ok-url ${env.HOOK_OK_URL} fail-url ${env.HOOK_FAIL_URL} token-only ${failToken} sig-only ${failSig} ` +
    `query-only ${okQuery} key ${env.LLM_ACCESS} pg ${env.PGPASSWORD} db ${env.APP_DB} dbpass-only ${dbPassword} ` +
    `phrase ${env.DEPLOY_PHRASE}`;
  return { env, values, echo };
}

function expectNoSecret(text: string, values: readonly string[], where: string): void {
  for (const value of values) expect(text.includes(value), `${where} holds ${value}`).toBe(false);
}

/** Every row of every table of a SQLite file, as text. */
function everyRow(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .pluck()
      .all() as string[];
    const rows: string[] = [];
    for (const table of tables) {
      for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[]) {
        const values = Object.values(row).map((value) =>
          Buffer.isBuffer(value) ? value.toString('utf8') : String(value),
        );
        rows.push(`${table}: ${values.join(' | ')}`);
      }
    }
    return rows;
  } finally {
    db.close();
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

describe('secrets by value', () => {
  it(
    'planted secrets echoed by agents and a hook command stay out of every table, every read command and every payload',
    async () => {
      const ok = await webhook(200);
      const failing = await webhook(500);
      const secrets = plantedSecrets(ok.url, failing.url);
      const { dir, home } = planDir('baton-cli-secrets-');
      const hookFile = join(dir, 'hook-calls.jsonl');
      const file = writePlan(dir, {
        name: 'leaky',
        defaults: { retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 5 } },
        hooks: [
          { on: ['failed', 'blocked', 'succeeded'], urlEnv: 'HOOK_OK_URL', retries: 0 },
          { on: ['failed', 'blocked'], urlEnv: 'HOOK_FAIL_URL', retries: 0 },
          { on: ['blocked'], command: agentCommand('hook-fail-echo'), retries: 0 },
        ],
        steps: [
          { id: 'talk', instruction: 'say it', agent: { command: agentCommand('agent-echo-message') } },
          { id: 'fail', instruction: 'fail loudly', agent: { command: agentCommand('agent-fail') } },
          {
            id: 'summarise',
            dependsOn: ['fail'],
            model: { provider: 'openai', model: 'gpt-4o-mini', apiKeyEnv: 'LLM_ACCESS', prompt: 'x' },
          },
        ],
      });
      const env = {
        ...secrets.env,
        ECHO_MESSAGE: secrets.echo,
        FAIL_MESSAGE: secrets.echo,
        HOOK_FAIL_MESSAGE: secrets.echo,
        HOOK_FILE: hookFile,
        HOOK_LOOK_FOR: 'HOOK_OK_URL,HOOK_FAIL_URL,DEPLOY_PHRASE,PGPASSWORD,LLM_ACCESS,ECHO_MESSAGE',
      };
      const run = expectExit(await runBaton(['run', file, '--id', 'leak'], { home, env }), 1);
      // The webhook that fails was called (its error path ran), and so was the one that records.
      expect(failing.bodies.length).toBeGreaterThan(0);
      expect(ok.bodies.length).toBeGreaterThan(0);
      expect(run.stderr).toContain('answered HTTP 500');
      expect(run.stderr).toContain('hook command');
      const outputs: [string, BatonResult][] = [['run', run]];
      for (const args of [
        ['status'],
        ['status', 'leak'],
        ['status', 'leak', '--json'],
        ['timeline', 'leak'],
        ['timeline', 'leak', '--json'],
        ['logs', 'leak', 'fail', '--json'],
        ['logs', 'leak', 'talk', '--json'],
        ['export', 'leak'],
        ['check'],
        ['check', '--json'],
      ]) {
        outputs.push([args.join(' '), await runBaton(args, { home, env })]);
      }
      for (const [what, result] of outputs)
        expectNoSecret(result.stdout + result.stderr, secrets.values, what);
      // The masks are there: what the agents said reached the record, minus the secrets.
      const status = outputs.find(([what]) => what === 'status leak --json')![1].stdout;
      expect(status).toContain('key [redacted]');
      expect(status).toContain('token-only [redacted]');
      // Every row of every table, then every byte of every file the home keeps but the attempt logs
      // (which keep the agents' output as it was, see docs/safety.md).
      const rows = everyRow(join(home, 'baton.db'));
      expect(rows.some((row) => row.startsWith('hook_deliveries:') && row.includes('HTTP 500'))).toBe(true);
      expect(rows.some((row) => row.includes('phrase [redacted]'))).toBe(true);
      for (const row of rows) expectNoSecret(row, secrets.values, row.slice(0, 60));
      for (const path of filesUnder(home).filter((p) => !p.endsWith('.log'))) {
        expectNoSecret(readFileSync(path, 'utf8'), secrets.values, path);
      }
      // Every payload, to the webhooks and to the hook command, which saw none of Baton's secrets.
      for (const body of [...ok.bodies, ...failing.bodies]) expectNoSecret(body, secrets.values, 'a payload');
      expect(ok.bodies.some((body) => body.includes('key [redacted]'))).toBe(true);
      const hookCalls = readFileSync(hookFile, 'utf8').trim().split('\n');
      expect(hookCalls.length).toBeGreaterThan(0);
      for (const line of hookCalls) {
        expectNoSecret(line, secrets.values, 'a hook command payload');
        expect(JSON.parse(line).seen).toEqual(['ECHO_MESSAGE']);
      }
    },
    TEST_TIMEOUT,
  );

  it(
    'the legacy state file: the error and the check output mask the values of BATON_SECRET_ENV, store and URL secrets',
    async () => {
      const dir = tempDir('baton-legacy-secrets-');
      const state = writeState(dir, legacyState(['step-1']));
      const secrets = plantedSecrets('https://hooks.example.com', 'https://alerts.example.com');
      const env = {
        ...secrets.env,
        // A state file names no hooks nor models: the operator lists those variables.
        BATON_SECRET_ENV: 'DEPLOY_PHRASE,HOOK_OK_URL:HOOK_FAIL_URL, LLM_ACCESS',
        STEP_AGENT_CMD: legacyAgent('agent-fail'),
        STEP_MAX_RETRIES: '1',
        FAIL_MESSAGE: secrets.echo,
      };
      // Blocked, and exit 0 as the skill's check (its BLOCKED line is masked too).
      const check = expectExit(await runLegacy('check', state, env), 0);
      const again = expectExit(await runLegacy('check', state, env), 0);
      const json = expectExit(await runLegacy('check', state, env, { json: true }), 0);
      for (const result of [check, again, json])
        expectNoSecret(result.stdout + result.stderr, secrets.values, 'check');
      const error = readState(state).stepRuns['step-1']?.error ?? '';
      expect(error).toContain('phrase [redacted]');
      expect(error).toContain('dbpass-only [redacted]');
      expectNoSecret(readFileSync(state, 'utf8'), secrets.values, 'state.json');
      expect(check.stdout).toContain('pg [redacted]');
    },
    TEST_TIMEOUT,
  );
});

describe('secrets in records written without masking', () => {
  it(
    'status, timeline, logs --json and export mask what an older or secret-less process stored',
    async () => {
      const { dir, home } = planDir('baton-cli-secrets-old-');
      const token = 'hookTok3nWrittenBefore99';
      const hookUrl = `https://hooks.example.com/services/${token}`;
      const plan = validatePlanObject(
        {
          name: 'old-record',
          defaults: { agent: { command: agentCommand('agent-fail') }, retry: { maxAttempts: 1 } },
          hooks: [{ on: ['blocked'], urlEnv: 'OLD_HOOK_URL' }],
          steps: [{ id: 'a', instruction: 'x' }],
        },
        'plan.yaml',
      );
      // Written straight through the store, as a process without the variable (or before masking) did.
      const store = SqliteStore.open(join(home, 'baton.db'));
      try {
        await startRun(store, { plan, runId: 'old', workspace: dir });
        const [claim] = (
          await store.cycle({
            owner: 'w',
            now: Date.now(),
            leaseMs: 60_000,
            completions: [],
            claimLimit: 1,
            random: () => 0,
          })
        ).claimed;
        const { runId, stepId, attempt } = claim!;
        const message = `could not post to ${hookUrl} (token ${token})`;
        const completion = {
          runId,
          stepId,
          attempt,
          owner: 'w',
          startedAt: Date.now(),
          endedAt: Date.now(),
          logPath: null,
        };
        await store.cycle({
          owner: 'w',
          now: Date.now(),
          leaseMs: 60_000,
          completions: [{ ...completion, outcome: { ok: false, failureClass: 'fatal', message } }],
          claimLimit: 0,
          random: () => 0,
        });
      } finally {
        await store.close();
      }
      const env = { OLD_HOOK_URL: hookUrl };
      for (const args of [
        ['status'],
        ['status', '--json'],
        ['status', 'old'],
        ['status', 'old', '--json'],
        ['timeline', 'old'],
        ['timeline', 'old', '--json'],
        ['logs', 'old', 'a', '--json'],
        ['export', 'old'],
        ['check'],
        ['check', '--json'],
      ]) {
        const result = await runBaton(args, { home, env });
        expectNoSecret(result.stdout + result.stderr, [hookUrl, token], args.join(' '));
        if (args.length > 1) expect(result.stdout + result.stderr, args.join(' ')).toContain('[redacted]');
      }
    },
    TEST_TIMEOUT,
  );
});

describe('the child environment', () => {
  const printEnv = (pass?: string[], set?: Record<string, string>) => ({
    command: agentCommand('agent-print-env'),
    ...(pass || set ? { env: { ...(pass ? { pass } : {}), ...(set ? { set } : {}) } } : {}),
  });

  it(
    "an agent gets neither Baton's secrets nor a model key it does not read; agent.env.pass narrows, set sets",
    async () => {
      const { dir, home } = planDir('baton-cli-child-env-');
      const narrow = ['SOME_SETTING', 'HOOK_URL_X', 'LLM_ACCESS'];
      const steps = [
        // The default policy: everything but Baton's own secrets and model keys the agent does not read.
        ['d-hook', 'HOOK_URL_X'],
        ['d-phrase', 'DEPLOY_PHRASE'],
        ['d-key', 'LLM_ACCESS'],
        ['d-pg', 'PGPASSWORD'],
        ['d-other', 'SOME_SETTING'],
        ['d-more', 'OTHER_SETTING'],
        ['d-run', 'BATON_RUN_ID'],
      ].map(([id, name]) => ({ id, instruction: name, agent: printEnv() }));
      steps.push(
        // pass: the named variables and the baseline only; Baton's own secrets never; a model key when named.
        ...[
          ['p-some', 'SOME_SETTING'],
          ['p-more', 'OTHER_SETTING'],
          ['p-hook', 'HOOK_URL_X'],
          ['p-key', 'LLM_ACCESS'],
          ['p-home', 'HOME'],
          ['p-lang', 'LC_ALL'],
          ['p-run', 'BATON_RUN_ID'],
          ['p-step', 'BATON_STEP_ID'],
          ['p-attempt', 'BATON_ATTEMPT'],
        ].map(([id, name]) => ({ id, instruction: name, agent: printEnv(narrow) })),
        { id: 's-set', instruction: 'GREETING', agent: printEnv(['PATH'], { GREETING: 'hello there' }) },
        { id: 's-default', instruction: 'SOME_SETTING', agent: printEnv(undefined, { GREETING: 'hi' }) },
      );
      const file = writePlan(dir, {
        name: 'child-env',
        hooks: [{ on: ['blocked'], urlEnv: 'HOOK_URL_X', retries: 0 }],
        steps: [
          ...steps,
          // A model fallback that never runs still names its key, which the agents above then lack.
          {
            id: 'model-named',
            instruction: 'SOME_SETTING',
            agent: printEnv(),
            fallback: { model: { provider: 'anthropic', model: 'm', apiKeyEnv: 'LLM_ACCESS', prompt: 'x' } },
          },
        ],
      });
      const env = {
        HOOK_URL_X: 'https://hooks.example.com/T0123/B0456/abcdefghijkl1234',
        DEPLOY_PHRASE: 'deployPhrasePlanted8642',
        BATON_SECRET_ENV: 'DEPLOY_PHRASE',
        LLM_ACCESS: 'llm-access-planted-4321zz',
        PGPASSWORD: 'pgPlantedPass2468',
        SOME_SETTING: 'kept',
        OTHER_SETTING: 'also-kept',
        LC_ALL: 'C.UTF-8',
      };
      expectExit(await runBaton(['run', file, '--id', 'env1'], { home, env }), 0);
      const store = SqliteStore.open(join(home, 'baton.db'));
      let summaries: Record<string, string | undefined>;
      try {
        const results = await store.getStepResults(
          'env1',
          [...steps.map((step) => step.id), 'model-named'].filter((id) => id !== undefined),
        );
        summaries = Object.fromEntries(Object.entries(results).map(([id, result]) => [id, result.summary]));
      } finally {
        await store.close();
      }
      expect(summaries).toMatchObject({
        'd-hook': 'HOOK_URL_X=(unset)',
        'd-phrase': 'DEPLOY_PHRASE=(unset)',
        'd-key': 'LLM_ACCESS=(unset)',
        'd-pg': 'PGPASSWORD=(unset)',
        'd-other': 'SOME_SETTING=kept',
        'd-more': 'OTHER_SETTING=also-kept',
        'd-run': 'BATON_RUN_ID=env1',
        'p-some': 'SOME_SETTING=kept',
        'p-more': 'OTHER_SETTING=(unset)',
        'p-hook': 'HOOK_URL_X=(unset)',
        'p-key': 'LLM_ACCESS=[redacted]',
        'p-home': `HOME=${process.env.HOME}`,
        'p-lang': 'LC_ALL=C.UTF-8',
        'p-run': 'BATON_RUN_ID=env1',
        'p-step': 'BATON_STEP_ID=p-step',
        'p-attempt': 'BATON_ATTEMPT=1',
        's-set': 'GREETING=hello there',
        's-default': 'SOME_SETTING=kept',
        'model-named': 'SOME_SETTING=kept',
      });
    },
    TEST_TIMEOUT,
  );

  it('agent.env.set of a variable that loads code is refused with exit 2, naming the file and the field; nothing is stored', async () => {
    const { dir, home } = planDir('baton-cli-child-env-bad-');
    const file = writePlan(dir, {
      name: 'bad-env',
      steps: [
        {
          id: 'report',
          instruction: 'x',
          agent: {
            command: [process.execPath, fixture('agent-succeed')],
            env: { set: { NODE_OPTIONS: '--require ./x.js' } },
          },
        },
      ],
    });
    const result = expectExit(await runBaton(['run', file], { home }), 2);
    expect(result.stderr).toContain(
      'plan.yaml: steps.report.agent.env.set.NODE_OPTIONS: setting NODE_OPTIONS can make',
    );
    expect(existsSync(join(home, 'baton.db'))).toBe(false);
    // The plan-level default too.
    const defaults = writePlan(
      dir,
      {
        name: 'bad-default-env',
        defaults: {
          agent: { command: agentCommand('agent-succeed'), env: { set: { LD_PRELOAD: '/tmp/x.so' } } },
        },
        steps: [{ id: 'a', instruction: 'x' }],
      },
      { name: 'defaults.yaml' },
    );
    const refused = expectExit(await runBaton(['run', defaults], { home }), 2);
    expect(refused.stderr).toContain('defaults.yaml: defaults.agent.env.set.LD_PRELOAD: setting LD_PRELOAD');
    expect(existsSync(join(home, 'baton.db'))).toBe(false);
  });
});
