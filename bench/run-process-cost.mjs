// CPU per agent run of the process supervisor alone (`npm run build && node bench/run-process-cost.mjs`):
// N runs of a sh script sleeping 50 ms, 8 at once in this process, three ways: a bare
// `child_process.spawn` with piped output, `runProcess` without a marker, and `runProcess` with an
// attempt marker (the look in /proc for what each run left behind). CPU is this process's
// (user + system, children not included) per run. The difference between the last two is the
// marker's cost; `strace -f -e trace=openat,kill` of it shows the /proc reads.
// Env: N=240  V=bare,runProcess,marked  (argv[2]: another dist/ to measure, e.g. an older build's)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = resolve(process.argv[2] ?? fileURLToPath(new URL('../dist', import.meta.url)));
const { runProcess } = await import(join(dist, 'executors/run-process.js'));
const { attemptMarker } = await import(join(dist, 'executors/attempt-processes.js'));
const dir = mkdtempSync(join(tmpdir(), 'baton-bench-run-process-'));
const agent = join(dir, 'agent-sleep');
writeFileSync(agent, '#!/bin/sh\nsleep 0.05\necho "ok: done"\n');
chmodSync(agent, 0o755);
const N = Number(process.env.N ?? 240);
const WIDTH = 8;
const env = { ...process.env };

async function lanes(run) {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const lane = async () => {
    while (next < N) await run(next++);
  };
  await Promise.all(Array.from({ length: WIDTH }, lane));
  const cpu = process.cpuUsage(cpu0);
  return { cpuMs: (cpu.user + cpu.system) / N / 1000, perSec: N / ((performance.now() - start) / 1000) };
}

const logPath = (i) => join(dir, 'logs', `${i}.log`);
const ways = {
  bare: async () => {
    const child = spawn(agent, ['prompt'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
    child.stdout.resume();
    child.stderr.resume();
    await once(child, 'close');
  },
  runProcess: (i) =>
    runProcess({ argv: [agent, 'prompt'], cwd: dir, env, timeoutMs: 60_000, logPath: logPath(i) }),
  marked: (i) =>
    runProcess({
      argv: [agent, 'prompt'],
      cwd: dir,
      env: { ...env, BATON_RUN_ID: `r${i}`, BATON_STEP_ID: 's', BATON_ATTEMPT: '1' },
      timeoutMs: 60_000,
      logPath: logPath(i),
      marker: attemptMarker(`r${i}`, 's', 1),
    }),
};
try {
  for (const name of (process.env.V ?? 'bare,runProcess,marked').split(',')) {
    await ways[name](0); // warm-up
    const r = await lanes(ways[name]);
    console.log(`${name.padEnd(11)} ${r.cpuMs.toFixed(2)} ms CPU per run, ${r.perSec.toFixed(0)} runs/s`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
