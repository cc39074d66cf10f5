// Issue 40's stall watchdog figures, through runProcess (dist/executors/run-process.js) as an agent
// attempt runs it:
// - detection: a child that prints one line and then nothing, with stallTimeoutMs 2000 and a
//   workspace of 1,000 files to look at; the figure is the time from the spawn to the result minus
//   the 2 s (goal: at most 1 s late), beside the floor of the same child stopped by a 2 s deadline;
// - cost: a child streaming 200 lines of 100 bytes every 10 ms for 3 s, watched (stallTimeoutMs 10 s)
//   and not watched, alternately; the figure is the parent's extra CPU time as a share of one core
//   over the run (goal <= 2%).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../../dist/executors/run-process.js';
import { assert, emit, median, now } from '../lib.mjs';

const ROUNDS = Number(process.env.BENCH_STALL_ROUNDS ?? 3);
const dir = mkdtempSync(join(tmpdir(), 'baton-bench-stall-'));
const workspace = join(dir, 'work');
mkdirSync(workspace);
for (let i = 0; i < 1000; i++) {
  const folder = join(workspace, `d${i % 20}`);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, `f${i}.txt`), 'x');
}
const QUIET = "process.stdout.write('start\\n'); setInterval(() => {}, 1 << 30)";
const STREAM =
  "const line = 'x'.repeat(99) + '\\n'; let n = 0; const t = setInterval(() => { process.stdout.write(line.repeat(200)); if (++n >= 300) { clearInterval(t); } }, 10);";

let counter = 0;
function options(script, extra) {
  counter += 1;
  return {
    argv: [process.execPath, '-e', script],
    cwd: workspace,
    env: { ...process.env },
    timeoutMs: 60_000,
    killGraceMs: 1000,
    logPath: join(dir, 'logs', `attempt-${counter}.log`),
    ...extra,
  };
}

try {
  const late = [];
  const floor = [];
  const cost = [];
  for (let round = 0; round < ROUNDS; round++) {
    let start = now();
    const stalled = await runProcess(options(QUIET, { stallTimeoutMs: 2000, watchFolder: workspace }));
    late.push(now() - start - 2000);
    assert(stalled.stalled, 'the quiet child was stopped as stalled');
    start = now();
    const timed = await runProcess(options(QUIET, { timeoutMs: 2000 }));
    floor.push(now() - start - 2000);
    assert(timed.timedOut, 'the quiet child was stopped at its deadline');
    const cpu = {};
    for (const watched of round % 2 === 0 ? [true, false] : [false, true]) {
      const before = process.cpuUsage();
      start = now();
      const streamed = await runProcess(
        options(STREAM, watched ? { stallTimeoutMs: 10_000, watchFolder: workspace } : {}),
      );
      const used = process.cpuUsage(before);
      assert(streamed.exitCode === 0 && !streamed.stalled, 'the streaming child finished');
      cpu[watched] = { cpuMs: (used.user + used.system) / 1000, wallMs: now() - start };
    }
    cost.push((100 * (cpu.true.cpuMs - cpu.false.cpuMs)) / cpu.true.wallMs);
  }
  emit({ stallLateMs: median(late), deadlineLateMs: median(floor), watchCostPct: median(cost) });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
