// Starts one `bench/pg-worker.mjs` process for the PostgreSQL benchmarks (pg-bench.mjs,
// pg-agent-bench.mjs): `ready` resolves once it printed READY (its store open, waiting for "go" on
// stdin), `report()` waits for it to exit and returns its REPORT line. BENCH_PG_NODE_FLAGS: Node
// options for the workers alone (e.g. `--max-semi-space-size=4`, `--trace-deopt`).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const nodeFlags = (process.env.BENCH_PG_NODE_FLAGS ?? '').split(' ').filter(Boolean);

export function startPgWorker(args, env = process.env) {
  const child = spawn(process.execPath, [...nodeFlags, join(here, 'pg-worker.mjs'), ...args.map(String)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env,
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    stdout += chunk;
  });
  const exited = once(child, 'exit');
  const ready = new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (stdout.includes('READY')) resolve(clearInterval(timer));
      if (child.exitCode !== null)
        reject(new Error(`pg-worker exited ${child.exitCode}`, clearInterval(timer)));
    }, 5);
  });
  const report = async () => {
    await exited;
    const line = stdout.split('\n').find((l) => l.startsWith('REPORT '));
    if (!line) throw new Error(`pg-worker printed no report: ${stdout}`);
    return JSON.parse(line.slice('REPORT '.length));
  };
  return { child, ready, report };
}
