// PostgreSQL scaling with agent steps (`npm run build && node bench/pg-agent-bench.mjs`): RUNS runs
// of a chain of STEPS agent steps, each step the real AgentCliExecutor running a trusted fake agent
// (a sh script that sleeps 50 ms, trusted through BATON_TRUSTED_AGENTS as the tests trust theirs),
// drained by 1 and by 4 worker processes (bench/pg-worker.mjs ... agent) of CONCURRENCY steps each,
// on a throwaway PostgreSQL 15 cluster (scripts/pg-cluster.mjs). Steps/s from "go" to the last
// run's finish; the figure is 4 workers / 1 worker (goal >= 3). Beside it the ceiling the sleep
// alone allows (workers x CONCURRENCY / 50 ms) and the same workload in one process that spawns
// the agent with nothing around it (the floor of spawning it on this machine). CPU per step: the
// workers' own from "go" on, the server's, and the whole machine's (busy time of /proc/stat over the
// steps: everything, the agents' sh and sleep and any other load included), beside the machine's
// per step of the bare spawn: on a machine that is CPU-bound, steps/s <= cores x 1000 / that. Last,
// the best 4 / 1 any worker could give here: that of a worker costing nothing beyond the bare spawn.
// Env: BENCH_PG_ROUNDS=3  BENCH_PG_AGENT_RUNS=100  BENCH_PG_AGENT_STEPS=4  BENCH_PG_CONCURRENCY=8
//      BENCH_PG_WORKERS=1,4  BENCH_PG_POOL (the workers' pool size, default 4)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { validatePlanObject } from '../dist/core/plan/parse.js';
import { startRun } from '../dist/engine/start-run.js';
import { trustedPrograms } from '../dist/executors/trusted-programs.js';
import { PostgresStore } from '../dist/store/postgres/postgres-store.js';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { median } from './lib.mjs';
import { startPgWorker } from './pg-worker-process.mjs';

const ROUNDS = Number(process.env.BENCH_PG_ROUNDS ?? 3);
const RUNS = Number(process.env.BENCH_PG_AGENT_RUNS ?? 100);
const STEPS = Number(process.env.BENCH_PG_AGENT_STEPS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_PG_CONCURRENCY ?? 8);
const WORKER_COUNTS = (process.env.BENCH_PG_WORKERS ?? '1,4').split(',').map(Number);
const SLEEP_MS = 50;

const dir = mkdtempSync(join(tmpdir(), 'baton-bench-pg-agent-'));
const agent = join(dir, 'agent-sleep');
writeFileSync(agent, `#!/bin/sh\nsleep ${SLEEP_MS / 1000}\necho "ok: done"\n`);
chmodSync(agent, 0o755);
const env = { ...process.env, BATON_TRUSTED_AGENTS: agent };

function agentPlan() {
  const steps = Array.from({ length: STEPS }, (_, i) => ({
    id: `a${i + 1}`,
    instruction: `step ${i + 1}`,
    agent: { command: [agent] },
    retry: { maxAttempts: 1 },
    ...(i > 0 ? { dependsOn: [`a${i}`] } : {}),
  }));
  return validatePlanObject({ name: 'bench-pg-agent', limits: { concurrency: 1 }, steps }, 'bench');
}

/** CPU ms used so far by the PostgreSQL server: the postmaster, its exited and its live backends. */
function serverCpuMs(dataDir) {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const stat = (pid) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    } catch {
      return null;
    }
  };
  // Fields after "(comm) ": [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime, in ticks.
  const own = stat(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = stat(entry);
    if (f && Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}

/** Busy and total CPU ms of the whole machine so far (/proc/stat). */
function machineCpuMs() {
  const [, ...f] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: (total - f[3] - f[4]) * 10, total: total * 10 };
}

function startWorker(url, schema, home) {
  return startPgWorker([url, schema, CONCURRENCY, home, 'agent'], env);
}

async function measure(cluster, admin, workers, round) {
  const url = cluster.url;
  const schema = `agent_${workers}_${round}`;
  const home = mkdtempSync(join(dir, `home-${workers}-${round}-`));
  const store = await PostgresStore.open(url, { schema });
  const plan = agentPlan();
  try {
    const trust = trustedPrograms(null, env);
    for (let i = 0; i < RUNS; i++) await startRun(store, { plan, runId: `r${i}`, workspace: dir, trust });
  } finally {
    await store.close();
  }
  const procs = Array.from({ length: workers }, () => startWorker(url, schema, home));
  await Promise.all(procs.map((p) => p.ready));
  const q = (sql) => admin.query(sql.replaceAll('S.', `"${schema}".`)).then((r) => r.rows);
  const server0 = serverCpuMs(cluster.dataDir);
  const machine0 = machineCpuMs();
  const start = Date.now();
  for (const p of procs) p.child.stdin.write('go\n');
  for (;;) {
    const [{ n, bad }] = await q(
      `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS n,
              count(*) FILTER (WHERE status NOT IN ('running', 'succeeded'))::int AS bad FROM S.runs`,
    );
    if (bad > 0) {
      const [why] = await q(`SELECT blocked_reason FROM S.runs WHERE status NOT IN ('running', 'succeeded')`);
      throw new Error(`${bad} runs ended badly: ${JSON.stringify(why)}`);
    }
    if (n === RUNS) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const [{ end }] = await q('SELECT max(finished_at) AS "end" FROM S.runs');
  const seconds = (Number(end) - start) / 1000;
  const serverMs = serverCpuMs(cluster.dataDir) - server0;
  const machine1 = machineCpuMs();
  for (const p of procs) p.child.kill('SIGTERM');
  const reports = await Promise.all(procs.map((p) => p.report()));
  const [{ attempts }] = await q(
    `SELECT count(*)::int AS attempts FROM S.attempts WHERE outcome = 'succeeded'`,
  );
  const total = RUNS * STEPS;
  if (attempts !== total) throw new Error(`expected ${total} succeeded attempts, found ${attempts}`);
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  return {
    stepsPerSec: total / seconds,
    perWorker: reports.map((r) => r.attemptsCommitted),
    workerCpuMsPerStep: reports.reduce((sum, r) => sum + r.cpuMs, 0) / total,
    serverCpuMsPerStep: serverMs / total,
    machineBusy: (machine1.busy - machine0.busy) / (machine1.total - machine0.total),
    machineCpuMsPerStep: (machine1.busy - machine0.busy) / total,
  };
}

/** The agent spawned `total` times, CONCURRENCY x workers at once, by a bare Node process. */
async function spawnFloor(workers) {
  const total = RUNS * STEPS;
  const width = CONCURRENCY * workers;
  let next = 0;
  const machine0 = machineCpuMs();
  const start = performance.now();
  const lane = async () => {
    while (next < total) {
      next++;
      const child = spawn(agent, ['prompt'], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.resume();
      child.stderr.resume();
      const [code] = await once(child, 'exit');
      if (code !== 0) throw new Error(`agent exited ${code}`);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  const perSec = total / ((performance.now() - start) / 1000);
  return { perSec, machineCpuMsPerStep: (machineCpuMs().busy - machine0.busy) / total };
}

const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const load0 = loadavg()[0];
const cluster = await startCluster();
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => cluster.stop().finally(() => process.exit(130)));
const admin = new pg.Pool({ connectionString: cluster.url, max: 2 });
admin.on('error', () => undefined);
try {
  console.log(
    `PostgreSQL 15; ${cpus().length} cores; ${ROUNDS} rounds; ${RUNS} runs x ${STEPS} chained agent steps ` +
      `(sh script sleeping ${SLEEP_MS} ms); ${CONCURRENCY} steps at once per worker; pool ${process.env.BENCH_PG_POOL ?? 4}`,
  );
  const results = new Map(WORKER_COUNTS.map((n) => [n, []]));
  const floors = new Map(WORKER_COUNTS.map((n) => [n, []]));
  // Per workers: the machine's CPU ms per step of the bare spawn, and PostgreSQL's per step.
  const spawnCpu = new Map(WORKER_COUNTS.map((n) => [n, []]));
  const serverCpu = new Map(WORKER_COUNTS.map((n) => [n, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const workers of WORKER_COUNTS) {
      const r = await measure(cluster, admin, workers, round);
      results.get(workers).push(r.stepsPerSec);
      const floor = await spawnFloor(workers);
      floors.get(workers).push(floor.perSec);
      spawnCpu.get(workers).push(floor.machineCpuMsPerStep);
      serverCpu.get(workers).push(r.serverCpuMsPerStep);
      console.log(
        `  round ${round}: ${workers} worker(s) ${fmt(r.stepsPerSec, 1)} steps/s (per worker: ${r.perWorker.join(', ')}); ` +
          `bare spawn at the same width ${fmt(floor.perSec, 1)}/s; CPU ms per step: ` +
          `workers ${fmt(r.workerCpuMsPerStep, 1)}, PostgreSQL ${fmt(r.serverCpuMsPerStep, 1)}, ` +
          `whole machine ${fmt(r.machineCpuMsPerStep, 1)} (bare spawn ${fmt(floor.machineCpuMsPerStep, 1)}); ` +
          `machine busy ${fmt(r.machineBusy * 100)} %`,
      );
    }
  }
  const med = (n) => median(results.get(n));
  for (const workers of WORKER_COUNTS) {
    const ceiling = (workers * CONCURRENCY * 1000) / SLEEP_MS;
    console.log(
      `${workers} worker(s): ${fmt(med(workers), 1)} steps/s (${results
        .get(workers)
        .map((v) => fmt(v, 1))
        .join(' / ')}); ` +
        `ceiling of the sleep ${fmt(ceiling)}/s; bare spawn floor ${fmt(median(floors.get(workers)), 1)}/s ` +
        `(${fmt(med(workers) / median(floors.get(workers)), 2)}x of it)`,
    );
  }
  if (results.has(1) && results.has(4)) {
    const ratio = med(4) / med(1);
    console.log(`4 workers / 1 worker: ${fmt(ratio, 2)}x (goal >= 3: ${ratio >= 3 ? 'met' : 'NOT met'})`);
    // The best ratio any worker could give on this machine. A worker that cost nothing beyond
    // spawning the agent is the bare spawn itself: alone, it runs at the bare spawn floor of width
    // CONCURRENCY; four of them at most at that floor of width 4 x CONCURRENCY, and at most
    // cores x 1000 / (the bare spawn's machine CPU + PostgreSQL's, per step).
    const perStep = median(spawnCpu.get(4)) + median(serverCpu.get(4));
    const cpuBound = (cpus().length * 1000) / perStep;
    const best4 = Math.min(cpuBound, median(floors.get(4)));
    const best1 = median(floors.get(1));
    console.log(
      `  a worker that cost nothing beyond the bare spawn: 1 worker ${fmt(best1, 1)} steps/s (the bare spawn floor); ` +
        `4 workers at most ${fmt(best4)} steps/s (${cpus().length} cores x 1000 / (bare spawn ${fmt(median(spawnCpu.get(4)), 1)} + ` +
        `PostgreSQL ${fmt(median(serverCpu.get(4)), 1)} CPU ms per step) = ${fmt(cpuBound)}; bare spawn floor ` +
        `${fmt(median(floors.get(4)))}): 4 / 1 <= ${fmt(best4 / best1, 2)}x`,
    );
  }
  console.log(`load average ${load0.toFixed(2)} -> ${loadavg()[0].toFixed(2)}`);
} finally {
  await admin.end();
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
