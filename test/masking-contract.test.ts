/**
 * The masking boundary as a contract: secrets of every kind (a secret input, a BATON_SECRET_ENV
 * value, `*_TOKEN` / `*_KEY` / `*_WEBHOOK_URL` variables, a hook's `urlEnv`, the store URL's
 * password) are planted IN CLEAR in a PostgreSQL store (test/helpers/masking-fixture.ts), then read
 * back through every door with the secrets in its environment: every CLI command (walked from the
 * command tree), every read of `Baton` (its store's every method, walked from the masking table,
 * and its own reads), every GET route of the console (walked from its route table) and `/metrics`,
 * and every MCP tool and resource (listed by the server itself). None may print a planted value.
 * A command, route, tool or method added later without an entry here fails this test, which names it.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandTree } from '../src/cli/program.js';
import { PAGE_ROUTES } from '../src/console/page-routes.js';
import { MASKING } from '../src/runtime/masked-reads.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import type { Store } from '../src/store/store.js';
import { Baton } from '../src/workflow/baton.js';
import {
  fixture,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  tempDir,
  waitFor,
} from './helpers/cli.js';
import { legacyState, writeState } from './helpers/legacy.js';
import {
  ALL_SECRETS_TEXT,
  IDS,
  PLANTED,
  plantedPlanFile,
  plantSecrets,
  SECRET_VALUES,
  STORE_PASSWORD,
  secretEnv,
} from './helpers/masking-fixture.js';
import { closeClients, mcpClient } from './helpers/mcp.js';
import { freshSchemaName, usePostgres } from './helpers/postgres.js';

const pg = usePostgres();
const TEST_TIMEOUT = 240_000;

let dir: string;
let home: string;
let storeUrl: string;

/** A fresh schema holding the planted data, for one door (the CLI's commands change what they read). */
async function plantedStore(): Promise<{ home: string; url: string }> {
  const doorHome = join(dir, `home-${freshSchemaName('h')}`);
  mkdirSync(doorHome, { recursive: true });
  const url = new URL(pg.server.url);
  url.password = STORE_PASSWORD;
  const schema = freshSchemaName('mask');
  const store = await PostgresStore.open(url.toString(), { schema });
  url.searchParams.set('schema', schema);
  try {
    await plantSecrets(store, doorHome, dir);
  } finally {
    await store.close();
  }
  return { home: doorHome, url: url.toString() };
}

/** The planted values `text` holds, as `<where>: <value>` lines (none: masked). */
function leaksOf(text: string, where: string): string[] {
  return SECRET_VALUES.filter((value) => text.includes(value)).map(
    (value) =>
      `${where} prints ${value} (at: ...${text.slice(Math.max(0, text.indexOf(value) - 120), text.indexOf(value))})`,
  );
}

beforeAll(async () => {
  dir = tempDir('baton-masking-');
  ({ home, url: storeUrl } = await plantedStore());
}, 120_000);

afterAll(async () => {
  await closeClients();
  await stopProcesses();
  removeTempDirs();
});

/** The environment of every door: the planted secrets, and the agent that echoes all of them. */
const doorEnv = () => ({ ...secretEnv(), ECHO_MESSAGE: ALL_SECRETS_TEXT, HOME: join(dir, 'user-home') });

/**
 * How each CLI command is called (by its path in the tree), in order: reads first, then the
 * commands that change the runs, `gc` last. Every command of the tree is named here: with the
 * arguments and options that make it read or write the planted data, or with why it has no output
 * to read (a server, a scaffold).
 */
function cliCalls(): [string, string[] | { none: string }][] {
  const plan = plantedPlanFile(dir);
  const state = writeState(
    dir,
    legacyState(['one'], {
      plan: { steps: { one: { title: 'one', instruction: `Echo ${ALL_SECRETS_TEXT}` } } },
    }),
  );
  const program = join(dir, 'agent-copy.mjs');
  cpSync(fixture('agent-echo-message.mjs'), program);
  const token = `token=${PLANTED.DEPLOY_TOKEN}`;
  const data = JSON.stringify({ said: ALL_SECRETS_TEXT });
  return [
    ['status', ['status']],
    ['status', ['status', IDS.run, '--all']],
    ['timeline', ['timeline', IDS.run]],
    ['logs', ['logs', IDS.run, IDS.stepDone, '--attempt', '1']],
    ['export', ['export', IDS.run]],
    ['diff', ['diff', IDS.run, IDS.done]],
    ['diff', ['diff', IDS.done, '--files']],
    ['schedule list', ['schedule', 'list']],
    ['schedule show', ['schedule', 'show', IDS.schedule]],
    ['schedule preview', ['schedule', 'preview', '--cron', '0 8 * * *']],
    ['flow list', ['flow', 'list']],
    ['trust list', ['trust', 'list']],
    ['agents', ['agents', '--plan', plan]],
    ['classify', ['classify', 'research the market, then write the report']],
    ['propose', ['propose', plan, '--input', token, '--id', 'mask-p2']],
    ['run', ['run', plan, '--input', token, '--id', 'mask-run2', '--detach']],
    ['run', ['run', plan, '--input', token, '--id', 'mask-run3']],
    ['approve', ['approve', IDS.run, IDS.stepApproval, '--comment', ALL_SECRETS_TEXT]],
    ['reject', ['reject', IDS.proposed]],
    ['send', ['send', IDS.event, '--run', IDS.run, '--data', data]],
    ['resolve', ['resolve', IDS.run, IDS.stepBlocked, '--result', data]],
    ['retry', ['retry', IDS.run, IDS.stepBlocked]],
    ['skip', ['skip', IDS.run, IDS.stepBlocked]],
    ['rerun', ['rerun', IDS.run, '--from', IDS.stepDone]],
    ['fork', ['fork', IDS.done, '--from', 'a', '--id', 'mask-fork']],
    ['rollback', ['rollback', IDS.done, 'a']],
    ['schedule add', ['schedule', 'add', 'mask-sched-2', plan, '--every', '1h', '--input', token]],
    ['schedule update', ['schedule', 'update', IDS.schedule, '--overlap', 'queue']],
    ['schedule pause', ['schedule', 'pause', IDS.schedule]],
    ['schedule resume', ['schedule', 'resume', IDS.schedule]],
    ['schedule trigger', ['schedule', 'trigger', IDS.schedule]],
    ['schedule rm', ['schedule', 'rm', 'mask-sched-2']],
    [
      'trigger add',
      [
        'trigger',
        'add',
        'mask-trig',
        plan,
        '--source',
        'github',
        '--secret-env',
        'HOOK_SECRET',
        '--input',
        token,
      ],
    ],
    ['trigger list', ['trigger', 'list']],
    ['trigger show', ['trigger', 'show', 'mask-trig']],
    ['trigger pause', ['trigger', 'pause', 'mask-trig']],
    ['trigger resume', ['trigger', 'resume', 'mask-trig']],
    ['trigger rm', ['trigger', 'rm', 'mask-trig']],
    ['flow set', ['flow', 'set', 'planted-key', '--concurrency', '1']],
    ['flow rm', ['flow', 'rm', 'planted-key']],
    ['trust add', ['trust', 'add', program]],
    ['trust rm', ['trust', 'rm', program]],
    ['check', ['check', '--max-time', '60s']],
    ['step', ['step', state]],
    ['check', ['check', state]],
    ['import', ['import', state, '--id', 'mask-imported']],
    ['skill install', ['skill', 'install', '--target', 'claude']],
    ['migrate', ['migrate', '--from', join(dir, 'no-such-home'), '--to', storeUrl]],
    ['resume', ['resume', IDS.run]],
    ['cancel', ['cancel', IDS.run]],
    ['gc', ['gc', '--older-than', '1d']],
    ['init', { none: 'writes a starter plan and prints its path: it reads no store' }],
    ['worker', { none: 'a service: what it runs is read back by the commands above' }],
    ['serve', { none: 'the console: its routes are read below' }],
    ['mcp', { none: 'the MCP server: its tools and resources are read below' }],
    ['mock-llm', { none: 'a mock model server for tests: it reads no store' }],
  ];
}

/** Every command that does something (a leaf of the tree), by its path. */
function leafCommands(command: Command, path: string[] = []): Map<string, Command> {
  const leaves = new Map<string, Command>();
  for (const sub of command.commands) {
    const subPath = [...path, sub.name()];
    if (sub.commands.length > 0) for (const entry of leafCommands(sub, subPath)) leaves.set(...entry);
    else leaves.set(subPath.join(' '), sub);
  }
  return leaves;
}

describe('the masking boundary: every door, every read', () => {
  it(
    'every CLI command, with --json where it has it, prints none of the planted secrets',
    async () => {
      const calls = cliCalls();
      const named = new Set(calls.map(([path]) => path));
      const leaves = leafCommands(commandTree());
      for (const path of leaves.keys())
        expect(named.has(path), `baton ${path} is not called by the masking contract test: add it`).toBe(
          true,
        );
      const leaks: string[] = [];
      for (const [path, call] of calls) {
        if (!Array.isArray(call)) continue;
        const hasJson = leaves.get(path)?.options.some((option) => option.long === '--json');
        const json = hasJson ? ['--json'] : [];
        const result = await runBaton(['--store', storeUrl, ...call, ...json], {
          home,
          cwd: dir,
          env: doorEnv(),
          timeoutMs: 120_000,
        });
        leaks.push(...leaksOf(`${result.stdout}\n${result.stderr}`, `baton ${path} (exit ${result.code})`));
      }
      expect(leaks).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "every read of Baton, its store's every method included, answers none of the planted secrets",
    async () => {
      const door = await plantedStore();
      const saved = { ...process.env };
      Object.assign(process.env, doorEnv());
      const baton = Baton.open({ home: door.home, store: door.url });
      const leaks: string[] = [];
      const read = async (where: string, value: unknown) =>
        leaks.push(...leaksOf(JSON.stringify(await value) ?? '', where));
      try {
        await baton.ready();
        const store = baton.store;
        // The masking table names every member of Store: each is read here, or says why not.
        const calls: { [K in keyof Store]?: unknown[] | string } = {
          kind: 'a property',
          id: 'a property',
          getRun: [IDS.run],
          getRunSteps: [IDS.run, { statuses: [], everyStepUpTo: 1000 }],
          listRuns: [{}],
          listRunPage: [{}],
          listBlockedSteps: [],
          selectRuns: [{ statuses: ['running', 'blocked', 'awaiting_approval', 'succeeded'], limit: 100 }],
          getRunPlans: [[IDS.run, IDS.done, IDS.proposed]],
          getRunLabels: [[IDS.run, IDS.done]],
          retryRunSteps: [[{ runId: IDS.run, stepIds: [IDS.stepBlocked] }], Date.now()],
          cancelRuns: [[IDS.done], Date.now()],
          listWaitingSteps: [],
          listLeases: [],
          listEventsAfter: [0],
          getEvents: [IDS.run],
          getAttempts: [IDS.run],
          getStepResults: [IDS.run, ['a', 'c']],
          lastEventSeq: [],
          nextWakeAt: [],
          getSchedule: [IDS.schedule],
          listSchedules: [],
          listScheduleSlots: [IDS.schedule],
          scheduleSlotOfRun: [IDS.run],
          listFlowLimits: [Date.now()],
          referencedResultArtifacts: [],
          metricsSnapshot: 'counts, read by baton.metrics() below',
          retryStep: [IDS.run, IDS.stepBlocked, Date.now()],
          skipStep: [IDS.run, IDS.stepBlocked, Date.now()],
          approveRun: [IDS.proposed, Date.now()],
          rerunFrom: [IDS.run, { from: 'a', only: false, redoEffects: false, by: 'tester' }, Date.now()],
          approveStep: 'Baton.approve, below',
          rejectStep: 'Baton.reject: the same answer as approve',
          sendEvent: 'Baton.send, below',
          resolveStep: [IDS.run, 'c', { summary: 'resolved', outputs: [] }, Date.now()],
          cancelRun: [IDS.done, Date.now()],
          resumeRun: [IDS.run, Date.now()],
          rejectRun: [IDS.proposed, Date.now()],
          pauseSchedule: [IDS.schedule, Date.now()],
          resumeSchedule: [IDS.schedule, Date.now()],
          triggerSchedule: [IDS.schedule, Date.now()],
          addSchedule: "Baton.schedule: the schedule's view, read by listSchedules",
          replaceSchedule: 'the same answer as addSchedule',
          removeSchedule: 'answers true or false',
          getTrigger: ['nothing'],
          listTriggers: [],
          listTriggerDeliveries: ['nothing'],
          addTrigger: 'a trigger names the variable of its secret, never a value: read by listTriggers',
          setTriggerPaused: 'the same answer as listTriggers',
          removeTrigger: 'answers true or false',
          recordTriggerDelivery: 'answers nothing',
          createRun: 'Baton.start: the run of a workflow',
          setFlowLimit: 'answers nothing',
          removeFlowLimit: 'answers true or false',
          cycle: "the engine's, never a door's",
          renewLeases: "the engine's",
          recordAttemptProcess: "the engine's",
          appendEvents: "the engine's",
          beginEffect: "the engine's: a step's own effects",
          completeEffect: "the engine's",
          clearEffect: "the engine's",
          claimHookDeliveries: "the hook dispatcher's",
          finishHookDelivery: "the hook dispatcher's",
          deleteFinishedRuns: 'run ids, read by baton gc',
          vacuum: 'answers nothing',
          waitForWork: 'answers nothing',
          close: 'answers nothing',
        };
        for (const name of Object.keys(MASKING) as (keyof Store)[]) {
          const call = calls[name];
          expect(call, `Store.${name} is not read by the masking contract test: add it`).toBeDefined();
          if (!Array.isArray(call)) continue;
          const method = store[name] as (...args: unknown[]) => Promise<unknown>;
          await read(
            `baton.store.${name}`,
            method.apply(store, call).catch((e: Error) => e.message),
          );
        }
        await read(
          'baton.result',
          baton.result(IDS.done).catch((e: Error) => e.message),
        );
        await read('baton.schedules.list', baton.schedules.list());
        await read('baton.metrics', baton.metrics());
        await read(
          'baton.approve',
          baton.approve(IDS.run, IDS.stepApproval, { comment: 'yes' }).catch((e: Error) => e.message),
        );
        await read(
          'baton.send',
          baton.send(IDS.event, { said: 'x' }, { runId: IDS.run }).catch((e: Error) => e.message),
        );
        await read(
          'baton.rerun',
          baton.rerun(IDS.run, { from: 'a' }).catch((e: Error) => e.message),
        );
        await read(
          'baton.fork',
          baton.fork(IDS.run, { from: 'a' }).catch((e: Error) => e.message),
        );
      } finally {
        await baton.close();
        for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
        Object.assign(process.env, saved);
      }
      expect(leaks).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'every GET route of the console, and /metrics, answers none of the planted secrets',
    async () => {
      const door = await plantedStore();
      const consoleToken = 'c'.repeat(40);
      const metricsToken = 'm'.repeat(40);
      const tokenFile = join(dir, 'console-token');
      const metricsFile = join(dir, 'metrics-token');
      writeFileSync(tokenFile, consoleToken, { mode: 0o600 });
      writeFileSync(metricsFile, metricsToken, { mode: 0o600 });
      const serving = spawnBaton(
        ['--store', door.url, 'serve', '--token-file', tokenFile, '--metrics-token-file', metricsFile],
        { home: door.home, cwd: dir, env: doorEnv() },
      );
      const origin = await waitFor(
        () => /(http:\/\/127\.0\.0\.1:\d+)\//.exec(serving.stdout())?.[1],
        30_000,
        'the address',
      );
      // Each route of the table, with the planted ids in its segments; a stream is named with why.
      const paths: Record<string, string[] | string> = {
        '': [''],
        inbox: ['inbox'],
        schedules: ['schedules'],
        workers: ['workers'],
        live: 'a stream of notices: run ids and event seqs, no text',
        'api/runs/*/events':
          "a stream of the run's stored events, read through the masked store as timeline.json; test/console-masking.test.ts reads it",
        'runs/*': [`runs/${IDS.run}`, `runs/${IDS.done}`, `runs/${IDS.proposed}`],
        'runs/*/timeline.json': [`runs/${IDS.run}/timeline.json`],
        'runs/*/steps/*': ['a', 'c', 'gate', 'ev'].map((step) => `runs/${IDS.run}/steps/${step}`),
        'runs/*/steps/*/artifact': [`runs/${IDS.run}/steps/a/artifact`],
        'runs/*/steps/*/attempts/*/log': [`runs/${IDS.run}/steps/a/attempts/1/log`],
        'runs/*/steps/*/attempts/*/log/live':
          'a stream of the same log as attempts/*/log, masked the same way',
      };
      const leaks: string[] = [];
      for (const [pattern] of PAGE_ROUTES) {
        const listed = paths[pattern];
        expect(
          listed,
          `console route ${pattern} is not read by the masking contract test: add it`,
        ).toBeDefined();
        if (!Array.isArray(listed)) continue;
        for (const path of listed) {
          const answer = await fetch(`${origin}/${path}`, {
            headers: { authorization: `Bearer ${consoleToken}` },
          });
          leaks.push(...leaksOf(await answer.text(), `GET /${path} (${answer.status})`));
        }
      }
      const metrics = await fetch(`${origin}/metrics`, {
        headers: { authorization: `Bearer ${metricsToken}` },
      });
      expect(metrics.status).toBe(200);
      leaks.push(...leaksOf(await metrics.text(), 'GET /metrics'));
      serving.child.kill('SIGTERM');
      await serving.exited;
      expect(leaks).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'every MCP tool and resource answers none of the planted secrets',
    async () => {
      const door = await plantedStore();
      const planFile = plantedPlanFile(dir);
      const client = await mcpClient(door.home, {
        args: ['--allow-run'],
        env: { ...doorEnv(), BATON_DATABASE_URL: door.url },
        cwd: dir,
      });
      const data = { said: ALL_SECRETS_TEXT };
      // The value each argument takes, by its name: a new tool's arguments are filled from here.
      const values: Record<string, unknown> = {
        runId: IDS.run,
        stepId: IDS.stepDone,
        name: IDS.schedule,
        event: IDS.event,
        data,
        result: JSON.stringify(data),
        path: planFile,
        limit: 5,
        attempt: 1,
        bytes: 4096,
        comment: ALL_SECRETS_TEXT,
        inputs: { token: PLANTED.DEPLOY_TOKEN },
        request: 'research the market, then write the report',
        cron: '0 8 * * *',
        count: 3,
      };
      // Per tool, where its own step or name differs from the default.
      const perTool: Record<string, Record<string, unknown>> = {
        approve_step: { stepId: IDS.stepApproval },
        reject_step: { stepId: IDS.stepApproval },
        retry_step: { stepId: IDS.stepBlocked },
        skip_step: { stepId: IDS.stepBlocked },
        resolve_step: { stepId: IDS.stepBlocked },
        approve_run: { runId: IDS.proposed },
        reject_run: { runId: IDS.proposed },
        schedule_add: { name: 'mask-sched-mcp', every: '1h' },
        schedule_rm: { name: 'mask-sched-mcp' },
        trigger_add: {
          name: 'mask-trig-mcp',
          path: planFile,
          source: 'github',
          secretEnv: 'HOOK_SECRET',
          inputs: { token: PLANTED.DEPLOY_TOKEN },
        },
        trigger_show: { name: 'mask-trig-mcp' },
        trigger_pause: { name: 'mask-trig-mcp' },
        trigger_resume: { name: 'mask-trig-mcp' },
        rerun_run: { from: IDS.stepDone },
      };
      const { tools } = await client.listTools();
      const order = [...tools].sort(
        (a, b) => Number(/cancel|rm|reject/.test(a.name)) - Number(/cancel|rm|reject/.test(b.name)),
      );
      const leaks: string[] = [];
      for (const tool of order) {
        const schema = tool.inputSchema as { properties?: Record<string, unknown>; required?: string[] };
        const args: Record<string, unknown> = {};
        for (const property of Object.keys(schema.properties ?? {})) {
          const value = perTool[tool.name]?.[property] ?? values[property];
          if (
            value !== undefined &&
            (schema.required?.includes(property) ||
              property in (perTool[tool.name] ?? {}) ||
              ['runId', 'stepId', 'name', 'event', 'data', 'result'].includes(property))
          )
            args[property] = value;
        }
        // A plan is given by path, not text, unless the tool takes only one of them.
        if ('plan' in (schema.properties ?? {}) && 'path' in args) delete args.plan;
        for (const required of schema.required ?? [])
          expect(
            required in args,
            `MCP tool ${tool.name}: no value for its argument ${required}: add it`,
          ).toBe(true);
        const answer = await client.callTool({ name: tool.name, arguments: args });
        leaks.push(...leaksOf(JSON.stringify(answer), `MCP ${tool.name}`));
      }
      const { resources } = await client.listResources();
      leaks.push(...leaksOf(JSON.stringify(resources), 'MCP resources/list'));
      for (const resource of resources) {
        leaks.push(
          ...leaksOf(JSON.stringify(await client.readResource({ uri: resource.uri })), `MCP ${resource.uri}`),
        );
      }
      expect(leaks).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
