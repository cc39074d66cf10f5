// Issue 41's verification gate cost: 1 run x 20 sequential agent steps whose agent is `true`, with
// and without `verify: { command: [true] }`, rounds alternating, one Engine with the real agent
// executor. The figure is what a check adds to a step beyond the program's own time: (step time
// with it - step time without it) - the floor, `true` run through runProcess alone (goal <= 50 ms).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { Engine } from '../../dist/engine/engine.js';
import { AgentCliExecutor } from '../../dist/executors/agent-cli-executor.js';
import { runProcess } from '../../dist/executors/run-process.js';
import { assert, createRuns, emit, median, noopExecutors, now, openStore, tempHome } from '../lib.mjs';

const STEPS = Number(process.env.BENCH_VERIFY_STEPS ?? 20);
const ROUNDS = Number(process.env.BENCH_VERIFY_ROUNDS ?? 3);

function plan(verified) {
  const steps = Array.from({ length: STEPS }, (_, i) => ({
    id: `s${i + 1}`,
    instruction: 'nothing to do',
    ...(verified ? { verify: { command: ['true'] } } : {}),
    ...(i > 0 ? { dependsOn: [`s${i}`] } : {}),
  }));
  return validatePlanObject(
    {
      name: verified ? 'bench-verified' : 'bench-unverified',
      defaults: { agent: { command: ['true'] } },
      limits: { concurrency: 1, maxSteps: STEPS * 2 },
      steps,
    },
    'bench',
  );
}

async function msPerStep(verified) {
  const home = tempHome(verified ? 'verified' : 'unverified');
  const store = openStore(home.dbPath);
  try {
    const [runId] = await createRuns(store, plan(verified), 1, home.dir);
    const engine = new Engine({
      store,
      executors: { ...noopExecutors(), agent: new AgentCliExecutor() },
      home: home.dir,
      owner: `bench:${process.pid}`,
      concurrency: 1,
    });
    const start = now();
    await engine.run({ kind: 'until-settled', runId });
    const ms = now() - start;
    const run = await store.getRun(runId);
    assert(run?.status === 'succeeded', `run ended ${run?.status}: ${run?.blockedReason}`);
    return ms / STEPS;
  } finally {
    await store.close();
    home.dispose();
  }
}

async function programMs() {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-verify-'));
  try {
    const start = now();
    for (let i = 0; i < STEPS; i++) {
      const result = await runProcess({
        argv: ['true'],
        cwd: dir,
        env: { ...process.env },
        timeoutMs: 60_000,
        logPath: join(dir, `verify-${i}.log`),
      });
      assert(result.exitCode === 0, 'true exited 0');
    }
    return (now() - start) / STEPS;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const without = [];
const withVerify = [];
const program = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const verified of round % 2 === 0 ? [false, true] : [true, false]) {
    (verified ? withVerify : without).push(await msPerStep(verified));
  }
  program.push(await programMs());
}
const added = withVerify.map((ms, i) => ms - without[i] - program[i]);
emit({
  stepMs: median(without),
  verifiedStepMs: median(withVerify),
  programMs: median(program),
  verifyAddedMs: median(added),
});
