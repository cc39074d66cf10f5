/**
 * Plans made of plans, with real workers and agents: a `plan:` step runs another plan as a child run
 * (one per item under forEach) and succeeds with the child's results; a worker SIGKILLed at any
 * instant leaves each child existing exactly once; the children's spend counts in the parent's
 * budget; cancelling the parent cancels its children; nesting and cycles are refused at validation.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  batonJson,
  expectExit,
  expectRefused,
  readCounts,
  removeTempDirs,
  runBaton,
  sleep,
  spawnBaton,
  stopAgentsAfterEach,
  stopProcesses,
  tempDir,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

const countFiles = stopAgentsAfterEach();

afterAll(async () => {
  await stopProcesses();
  removeTempDirs();
});

interface RunEntry {
  id: string;
  planName: string;
  status: string;
}

interface ParentRun {
  status: string;
  attemptsTotal: number;
  blockedReason: string | null;
  usage: { costUsd: number };
  steps: { stepId: string; status: string; resultJson: string | null }[];
}

/** The child plan: one agent step that reports the repo it was given. */
function writeChild(dir: string, agent = 'agent-count'): void {
  writePlan(
    dir,
    {
      name: 'fix-repo',
      inputs: { repo: {} },
      defaults: { agent: { command: agentCommand(agent) } },
      steps: [{ id: 'fix', instruction: 'fix {{inputs.repo}}' }],
    },
    { name: 'fix-repo.yaml' },
  );
}

function parentPlan(extra: Record<string, unknown> = {}, forEach: Record<string, unknown> = {}) {
  return {
    name: 'fix-all',
    steps: [
      {
        id: 'fix',
        forEach: { items: "['alpha', 'beta', 'gamma']", as: 'repo', maxItems: 10, ...forEach },
        plan: { path: './fix-repo.yaml', inputs: { repo: '{{repo}}' } },
      },
    ],
    ...extra,
  };
}

describe('sub-plans', () => {
  it('a forEach over 3 items makes exactly 3 children, each once across SIGKILLed workers; the parent gets their results in order', async () => {
    const dir = tempDir('baton-sub-plans-');
    const home = join(dir, 'home');
    const countFile = join(dir, 'counts');
    countFiles.push(countFile);
    writeChild(dir);
    const file = writePlan(dir, parentPlan({}, { concurrency: 2 }), { name: 'fix-all.yaml' });
    const env = { COUNT_FILE: countFile, SLEEP_MS: '300' };
    expectExit(await runBaton(['run', file, '--id', 'p1', '--detach'], { home, env }), 0);

    // Workers killed at three instants of the run: as the first agents start, mid-way, later.
    for (const waitLines of [1, 2, 3]) {
      const worker = spawnBaton(['worker', '--lease', '1s'], { home, env });
      await waitFor(
        () => readCounts(countFile).length >= waitLines,
        60_000,
        `${waitLines} agent(s) to start`,
      );
      await sleep(50 * waitLines);
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
    const last = spawnBaton(['worker', '--lease', '1s'], { home, env });
    const parent = await waitFor(
      async () => {
        const run = await batonJson<ParentRun>(['status', 'p1'], { home }, [0, 1]);
        return run.status === 'succeeded' ? run : undefined;
      },
      120_000,
      'the parent to succeed',
    );
    last.child.kill('SIGTERM');
    await last.exited;

    const runs = await batonJson<RunEntry[]>(['status'], { home });
    const children = runs.filter((run) => run.planName === 'fix-repo');
    expect(children).toHaveLength(3);
    expect(children.every((child) => child.status === 'succeeded')).toBe(true);
    const group = parent.steps.find((step) => step.stepId === 'fix')!;
    const values = JSON.parse(group.resultJson!).value as { fix: string }[];
    expect(values.map((value) => value.fix.trim())).toEqual(['counted fix', 'counted fix', 'counted fix']);
    // Each child ran its step for its own item, and a child's step runs again only when interrupted.
    const byRun = new Map<string, number>();
    for (const line of readCounts(countFile)) byRun.set(line.run, (byRun.get(line.run) ?? 0) + 1);
    expect([...byRun.keys()].sort()).toEqual(children.map((child) => child.id).sort());

    const child = await batonJson<{ parentRunId: string; parentStepId: string }>(
      ['status', children[0]!.id],
      {
        home,
      },
    );
    expect(child.parentRunId).toBe('p1');
    expect(child.parentStepId).toMatch(/^fix\[\d\]$/);
    const text = await runBaton(['status', children[0]!.id], { home });
    expect(text.stdout).toMatch(/child of run p1 \(its step fix\[\d\]\)/);

    // A rerun of the step starts fresh children; the first ones stay as they were.
    expectExit(await runBaton(['rerun', 'p1', '--from', 'fix'], { home, env }), 0);
    expectExit(await runBaton(['check'], { home, env: { ...env, SLEEP_MS: '0' } }), 0);
    expect((await batonJson<ParentRun>(['status', 'p1'], { home })).status).toBe('succeeded');
    const after = (await batonJson<RunEntry[]>(['status'], { home })).filter(
      (run) => run.planName === 'fix-repo',
    );
    expect(after).toHaveLength(6);
    expect(after.filter((run) => children.some((first) => first.id === run.id))).toHaveLength(3);
  }, 300_000);

  it("the children's spend counts in the parent's budget: maxCostUsd 1 at $0.40 a child stops after the third", async () => {
    const dir = tempDir('baton-sub-plans-cost-');
    const home = join(dir, 'home');
    writeChild(dir, 'agent-costly');
    const file = writePlan(
      dir,
      parentPlan({ limits: { maxCostUsd: 1 } }, { items: "['a', 'b', 'c', 'd', 'e']", concurrency: 1 }),
      { name: 'fix-all.yaml' },
    );
    const result = await runBaton(['run', file, '--id', 'c1'], { home });
    expect(result.code).toBe(1);
    const parent = await batonJson<ParentRun>(['status', 'c1'], { home }, 1);
    expect(parent.status).toBe('blocked');
    expect(parent.blockedReason).toMatch(/^budget: maxCostUsd/);
    expect(parent.usage.costUsd).toBeCloseTo(1.2);
    const runs = await batonJson<RunEntry[]>(['status'], { home });
    expect(runs.filter((run) => run.planName === 'fix-repo')).toHaveLength(3);
  }, 180_000);

  it('cancelling the parent cancels its running children and leaves no agent running', async () => {
    const dir = tempDir('baton-sub-plans-cancel-');
    const home = join(dir, 'home');
    const countFile = join(dir, 'counts');
    countFiles.push(countFile);
    writeChild(dir);
    const file = writePlan(dir, parentPlan({}, { concurrency: 3 }), { name: 'fix-all.yaml' });
    const env = { COUNT_FILE: countFile, SLEEP_MS: '60000' };
    expectExit(await runBaton(['run', file, '--id', 'x1', '--detach'], { home, env }), 0);
    const worker = spawnBaton(['worker', '--lease', '2s'], { home, env });
    const agents = await waitFor(
      () => {
        const lines = readCounts(countFile);
        return lines.length >= 3 ? lines : undefined;
      },
      60_000,
      'three children to start their agents',
    );
    const waiting = await runBaton(['status', 'x1'], { home });
    expect(waiting.stdout).toMatch(/step fix\[0\]: waiting on child x1-fix_0_-\w+: running/);
    expectExit(await runBaton(['cancel', 'x1'], { home, env }), 0);
    const runs = await batonJson<RunEntry[]>(['status'], { home });
    expect(runs.map((run) => run.status)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
    const { isAlive } = await import('./helpers/cli.js');
    await waitFor(() => agents.every((agent) => !isAlive(agent.pid)), 60_000, 'the agents to be stopped');
    worker.child.kill('SIGTERM');
    await worker.exited;
  }, 180_000);

  it("a child plan's output: is what its parent step gets, and the next step reads it", async () => {
    const dir = tempDir('baton-sub-plans-output-');
    const home = join(dir, 'home');
    writePlan(
      dir,
      {
        name: 'fix-repo',
        inputs: { repo: {} },
        defaults: { agent: { command: agentCommand('agent-count') } },
        output: '{{steps.fix.summary}} in {{inputs.repo}}',
        steps: [{ id: 'fix', instruction: 'fix {{inputs.repo}}' }],
      },
      { name: 'fix-repo.yaml' },
    );
    const file = writePlan(
      dir,
      {
        name: 'one',
        defaults: { agent: { command: agentCommand('agent-echo-argv') } },
        steps: [
          { id: 'fix', plan: { path: './fix-repo.yaml', inputs: { repo: 'alpha' } } },
          { id: 'tell', dependsOn: ['fix'], instruction: 'fixed: {{steps.fix.result}}' },
        ],
      },
      { name: 'one.yaml' },
    );
    expectExit(await runBaton(['run', file, '--id', 'o1'], { home }), 0);
    const run = await batonJson<ParentRun>(['status', 'o1'], { home });
    expect(JSON.parse(run.steps[0]!.resultJson!).value).toBe('counted fix in alpha');
    expect(JSON.parse(run.steps[1]!.resultJson!).summary).toContain('fixed: counted fix in alpha');
    // Its own two attempts and its child's one count in its maxSteps.
    expect(run.attemptsTotal).toBe(3);

    writePlan(
      dir,
      { name: 'bad', output: '{{steps.nope.summary}}', steps: [{ id: 'a', fn: 'a' }] },
      { name: 'bad.yaml' },
    );
    expectRefused(
      await runBaton(['run', join(dir, 'bad.yaml')], { home }),
      /output: \{\{steps\.nope\.summary\}\}: unknown step "nope"/,
    );
  }, 60_000);

  it('refuses a plan that runs itself and nesting deeper than 5, naming where', async () => {
    const dir = tempDir('baton-sub-plans-bad-');
    const home = join(dir, 'home');
    const step = (path: string) => ({ id: 'inner', plan: { path } });
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ name: 'a', steps: [step('./b.json')] }));
    writeFileSync(join(dir, 'b.json'), JSON.stringify({ name: 'b', steps: [step('./a.json')] }));
    expectRefused(
      await runBaton(['run', join(dir, 'a.json')], { home }),
      /steps\.inner\.plan\.path: a\.json -> b\.json -> a\.json: a plan may not run itself/,
    );
    for (let level = 1; level <= 6; level += 1) {
      const next = level === 6 ? { id: 'leaf', fn: 'noop' } : step(`./n${level + 1}.json`);
      writeFileSync(join(dir, `n${level}.json`), JSON.stringify({ name: `n${level}`, steps: [next] }));
    }
    expectRefused(
      await runBaton(['run', join(dir, 'n1.json')], { home }),
      /plans nest deeper than 5 \(n1\.json -> n2\.json -> n3\.json -> n4\.json -> n5\.json -> n6\.json\)/,
    );
    writeFileSync(
      join(dir, 'c.json'),
      JSON.stringify({
        name: 'c',
        steps: [{ id: 'x', plan: { path: './fix-repo.yaml', inputs: { nope: '1' } } }],
      }),
    );
    writeChild(dir);
    expectRefused(
      await runBaton(['run', join(dir, 'c.json')], { home }),
      /steps\.x\.plan\.inputs\.nope: plan fix-repo declares no input "nope" \(its inputs: repo\)/,
    );
  }, 60_000);

  it('plan: { name } runs a plan this home already knows; an unknown name, a self-call and path with name are refused', async () => {
    const dir = tempDir('baton-sub-plans-named-');
    const home = join(dir, 'home');
    const countFile = join(dir, 'counts');
    countFiles.push(countFile);
    const env = { COUNT_FILE: countFile };
    const parent = writePlan(
      dir,
      {
        name: 'fix-one',
        steps: [{ id: 'fix', plan: { name: 'fix-repo', inputs: { repo: 'alpha' } } }],
      },
      { name: 'fix-one.yaml' },
    );
    // No plan of that name is known yet: refused, and nothing is stored.
    expectRefused(
      await runBaton(['run', parent], { home, env }),
      /fix-one\.yaml: steps\.fix\.plan\.name: no plan named "fix-repo" is known here/,
    );
    writeChild(dir);
    expectExit(
      await runBaton(['run', join(dir, 'fix-repo.yaml'), '-i', 'repo=first', '--id', 'once'], { home, env }),
      0,
    );
    // The home knows fix-repo now (its run): the parent runs it as its child, from that snapshot.
    writeFileSync(join(dir, 'fix-repo.yaml'), 'not: a plan\n');
    expectExit(await runBaton(['run', parent, '--id', 'p1'], { home, env }), 0);
    const runs = await batonJson<RunEntry[]>(['status'], { home });
    const children = runs.filter((run) => run.planName === 'fix-repo' && run.id !== 'once');
    expect(children).toHaveLength(1);
    const child = await batonJson<{ parentRunId: string; parentStepId: string; status: string }>(
      ['status', children[0]!.id],
      { home },
    );
    expect(child).toMatchObject({ parentRunId: 'p1', parentStepId: 'fix', status: 'succeeded' });

    const loop = writePlan(
      dir,
      { name: 'loop', steps: [{ id: 'again', plan: { name: 'loop' } }] },
      { name: 'loop.yaml' },
    );
    expectRefused(
      await runBaton(['run', loop], { home }),
      /steps\.again\.plan\.name: loop -> loop: a plan may not run itself/,
    );
    const both = writePlan(
      dir,
      { name: 'both', steps: [{ id: 'x', plan: { name: 'fix-repo', path: './fix-repo.yaml' } }] },
      { name: 'both.yaml' },
    );
    expectRefused(
      await runBaton(['run', both], { home }),
      /both\.yaml: steps\.x\.plan: give path or name, not both/,
    );
  }, 120_000);
});

describe('sub-plans on PostgreSQL', () => {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('a forEach of plan: steps makes one child per item and the parent succeeds with their results, with two workers', async () => {
    const dir = tempDir('baton-sub-plans-pg-');
    const home = join(dir, 'home');
    const countFile = join(dir, 'counts');
    countFiles.push(countFile);
    writeChild(dir);
    const file = writePlan(dir, parentPlan({}, { concurrency: 3 }), { name: 'fix-all.yaml' });
    const store = ['--store', `${server!.url}?schema=${freshSchemaName('sub')}`];
    const env = { COUNT_FILE: countFile, SLEEP_MS: '100' };
    expectExit(await runBaton(['run', file, '--id', 'p1', '--detach', ...store], { home, env }), 0);
    const workers = [1, 2].map(() => spawnBaton(['worker', ...store], { home, env }));
    const parent = await waitFor(
      async () => {
        const run = await batonJson<ParentRun>(['status', 'p1', ...store], { home }, [0, 1]);
        return run.status === 'succeeded' ? run : undefined;
      },
      120_000,
      'the parent to succeed',
    );
    for (const worker of workers) worker.child.kill('SIGTERM');
    await Promise.all(workers.map((worker) => worker.exited));
    const runs = await batonJson<RunEntry[]>(['status', ...store], { home });
    expect(runs.filter((run) => run.planName === 'fix-repo' && run.status === 'succeeded')).toHaveLength(3);
    const values = JSON.parse(parent.steps.find((step) => step.stepId === 'fix')!.resultJson!).value;
    expect(values).toHaveLength(3);
    // Each child ran its one step exactly once.
    const perRun = new Map<string, number>();
    for (const line of readCounts(countFile)) perRun.set(line.run, (perRun.get(line.run) ?? 0) + 1);
    expect([...perRun.values()]).toEqual([1, 1, 1]);
  }, 180_000);
});
