/**
 * Secrets of every kind, planted IN CLEAR in a store (as a process that lacked them, or data given
 * before masking, would have left them): run inputs, plan texts, a step's summary and result, a
 * blocked step's message, a waiting step's prompt, an event's note, an attempt's log, a schedule's
 * inputs and plan, a file a step wrote (in its workspace checkpoint). Every door that reads them
 * with the secrets in its environment must mask them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validatePlanObject } from '../../src/core/plan/parse.js';
import { prepareRun } from '../../src/engine/start-run.js';
import { snapshotWorkspace } from '../../src/executors/workspace-checkpoints.js';
import type { Completion, Store } from '../../src/store/store.js';
import { agentCommand, fixture } from './cli.js';
import { gitAvailable } from './git.js';

/** A value of each kind the masking boundary must know. */
export const PLANTED = {
  /** A `*_TOKEN` variable, also given as a run's input (a secret input). */
  DEPLOY_TOKEN: 'tokS1-plantedaaaa1111',
  /** Listed by BATON_SECRET_ENV only: its name says nothing. */
  MY_PHRASE: 'phraseS2-plantedbbbb2222',
  /** A `*_KEY` variable. */
  SERVICE_API_KEY: 'keyS3-plantedcccc3333',
  /** A `*_WEBHOOK_URL` variable. */
  ALERT_WEBHOOK_URL: 'https://hooks.example.com/whS3b-planteddddd4444',
  /** A hook's `urlEnv`: a secret only because the plan names it. */
  REPORT_HOOK: 'http://127.0.0.1:9/hookS4-plantedeeee5555',
} as const;

/** The password of the store URL the doors are given (`--store`): a secret of the process. */
export const STORE_PASSWORD = 'pwS5-plantedffff6666';

/** Every value that must never leave Baton. */
export const SECRET_VALUES: readonly string[] = [...Object.values(PLANTED), STORE_PASSWORD];

/** The environment a door runs with: the planted variables and BATON_SECRET_ENV. */
export function secretEnv(): Record<string, string> {
  return { ...PLANTED, BATON_SECRET_ENV: 'MY_PHRASE' };
}

/** All the secrets in one text, as an agent that echoes its environment would print them. */
export const ALL_SECRETS_TEXT = SECRET_VALUES.join(' | ');

/** The ids the doors are asked about. */
export const IDS = {
  run: 'mask-r1',
  done: 'mask-r2',
  proposed: 'mask-r3',
  schedule: 'mask-sched',
  stepDone: 'a',
  stepBlocked: 'c',
  stepApproval: 'gate',
  stepEvent: 'ev',
  event: 'deploy-planted',
} as const;

function plan(name: string, steps: object[]) {
  return validatePlanObject(
    {
      name,
      description: `plan that mentions ${ALL_SECRETS_TEXT}`,
      inputs: { token: {}, note: { default: 'plain' } },
      hooks: [{ on: ['blocked'], urlEnv: 'REPORT_HOOK' }],
      defaults: {
        agent: { command: agentCommand('agent-echo-message') },
        retry: { maxAttempts: 1 },
      },
      steps,
    },
    name,
  );
}

/** The plan every run and the schedule hold: every kind of step, each text mentioning the secrets. */
export function plantedPlan() {
  return plan('masked', [
    { id: 'a', title: `echo ${ALL_SECRETS_TEXT}`, instruction: `Echo ${ALL_SECRETS_TEXT}` },
    {
      id: 'gate',
      dependsOn: ['a'],
      wait: { for: 'approval', prompt: `Approve ${ALL_SECRETS_TEXT}?` },
    },
    { id: 'ev', dependsOn: ['a'], wait: { for: 'event', event: IDS.event } },
    { id: 'c', instruction: `Fail with ${ALL_SECRETS_TEXT}` },
    { id: 'd', dependsOn: ['gate'], instruction: 'after the gate' },
  ]);
}

/**
 * Plants the runs and the schedule in `store` (its answers unmasked: the test's own handle), with
 * attempt logs under `home` and workspaces under `dir`.
 */
export async function plantSecrets(store: Store, home: string, dir: string): Promise<void> {
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const inputs = { token: PLANTED.DEPLOY_TOKEN, note: `note ${ALL_SECRETS_TEXT}` };
  const common = { batonHome: home, workspace, inputs };
  const main = prepareRun({ plan: plantedPlan(), runId: IDS.run, ...common, now: 1000 });
  await store.createRun(main);
  const logPath = `runs/${IDS.run}/a/attempt-1.log`;
  mkdirSync(join(home, `runs/${IDS.run}/a`), { recursive: true });
  writeFileSync(join(home, logPath), `the agent printed ${ALL_SECRETS_TEXT}\n`);
  const cycle = (now: number, completions: readonly Completion[]) =>
    store.cycle({
      owner: 'planter',
      now,
      leaseMs: 60_000,
      completions,
      claimLimit: 10,
      random: () => 0,
      runId: IDS.run,
    });
  const first = await cycle(1000, []);
  const claimed = (stepId: string) => first.claimed.find((c) => c.stepId === stepId)!;
  await cycle(1100, [
    {
      ...claimed('a'),
      owner: 'planter',
      outcome: {
        ok: true,
        summary: `done: ${ALL_SECRETS_TEXT}`,
        outputs: [],
        value: { said: ALL_SECRETS_TEXT },
      },
      startedAt: 1000,
      endedAt: 1100,
      logPath,
    },
    {
      ...claimed('c'),
      owner: 'planter',
      outcome: { ok: false, failureClass: 'fatal', message: `refused: ${ALL_SECRETS_TEXT}` },
      startedAt: 1000,
      endedAt: 1100,
      logPath: null,
    },
  ]);
  // The wait steps start waiting.
  await cycle(1200, []);
  await store.appendEvents(
    IDS.run,
    [{ type: 'step.heartbeat', stepId: 'a', attempt: 1, note: ALL_SECRETS_TEXT }],
    1300,
  );

  // Its own workspace, checkpointed before and after step a, which wrote the secrets to a file.
  const doneWorkspace = join(dir, 'workspace-done');
  mkdirSync(doneWorkspace, { recursive: true });
  const done = prepareRun({
    plan: plan('masked-done', [{ id: 'a', instruction: `Echo ${ALL_SECRETS_TEXT}` }]),
    runId: IDS.done,
    ...common,
    workspace: doneWorkspace,
    now: 2000,
  });
  await store.createRun(done);
  if (gitAvailable()) {
    const place = { home, runId: IDS.done, workspace: doneWorkspace, exclude: ['.git/'], hidden: [home] };
    const before = await snapshotWorkspace(place);
    writeFileSync(join(doneWorkspace, 'report.md'), `the agent wrote ${ALL_SECRETS_TEXT}\n`);
    const after = await snapshotWorkspace(place);
    const checkpoint = { type: 'step.checkpoint', stepId: 'a', attempt: 1 } as const;
    await store.appendEvents(
      IDS.done,
      [
        { ...checkpoint, phase: 'before', tree: before },
        { ...checkpoint, phase: 'after', tree: after },
      ],
      2050,
    );
  }
  const claim = await store.cycle({
    owner: 'planter',
    now: 2000,
    leaseMs: 60_000,
    completions: [],
    claimLimit: 1,
    random: () => 0,
    runId: IDS.done,
  });
  await store.cycle({
    owner: 'planter',
    now: 2100,
    leaseMs: 60_000,
    completions: [
      {
        ...claim.claimed[0]!,
        owner: 'planter',
        outcome: {
          ok: true,
          summary: `done: ${ALL_SECRETS_TEXT}`,
          outputs: [],
          value: { said: ALL_SECRETS_TEXT },
        },
        startedAt: 2000,
        endedAt: 2100,
        logPath: null,
      },
    ],
    claimLimit: 0,
    random: () => 0,
    runId: IDS.done,
  });

  const proposed = prepareRun({
    plan: plantedPlan(),
    runId: IDS.proposed,
    ...common,
    awaitingApproval: true,
    now: 3000,
  });
  await store.createRun(proposed);

  await store.addSchedule({
    name: IDS.schedule,
    plan: main.plan,
    planHash: main.planHash,
    inputs,
    workspace,
    rules: {
      timing: { everyMs: 3_600_000 },
      overlap: 'skip',
      catchUpMs: null,
      startAt: null,
      endAt: null,
    } as never,
    now: 3000,
  });
}

/** A plan file with the secrets in its texts (for the commands that take one), and a trusted agent. */
export function plantedPlanFile(dir: string): string {
  const file = join(dir, 'planted.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'planted-file',
      description: `mentions ${ALL_SECRETS_TEXT}`,
      inputs: { token: {} },
      // The hook's urlEnv makes REPORT_HOOK a secret of this plan's runs too.
      hooks: [{ on: ['blocked'], urlEnv: 'REPORT_HOOK' }],
      defaults: { agent: { command: agentCommand('agent-echo-message') } },
      steps: [{ id: 'a', instruction: `Echo ${ALL_SECRETS_TEXT}` }],
    }),
  );
  return file;
}

export { fixture };
