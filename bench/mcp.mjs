// `baton mcp`: how long a host waits for `initialize` after starting the server, and what a
// `run_status` call costs over the CLI's own read of the same run (the read `baton status <run>`
// makes: the masked store's listed steps and flow waits, in-process).
// Usage: npm run bench:mcp   (BENCH_STARTS=10, BENCH_CALLS=50)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'dist', 'cli', 'baton.cjs');
const STARTS = Number(process.env.BENCH_STARTS ?? 10);
const CALLS = Number(process.env.BENCH_CALLS ?? 50);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x) => Math.round(x * 10) / 10;

/** A server speaking newline-delimited JSON-RPC over stdio, as a host starts it. */
function startServer(home) {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, '--home', home, 'mcp'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map();
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
      const message = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      waiting.get(message.id)?.(message);
    }
  });
  let nextId = 1;
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const notify = (method) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  const stop = () =>
    new Promise((resolve) => {
      child.once('close', resolve);
      child.stdin.end();
    });
  return { started, request, notify, stop };
}

const initialize = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'bench', version: '1' },
};

const dir = mkdtempSync(join(tmpdir(), 'baton-bench-mcp-'));
try {
  const home = join(dir, 'home');
  // A run of 20 steps, proposed (stored, nothing runs): what run_status reads.
  const plan = join(dir, 'plan.json');
  const steps = Array.from({ length: 20 }, (_, i) => ({
    id: `s${i + 1}`,
    instruction: `step ${i + 1}`,
    ...(i > 0 ? { dependsOn: [`s${i}`] } : {}),
  }));
  writeFileSync(
    plan,
    JSON.stringify({ name: 'bench-mcp', defaults: { agent: { command: ['true'] } }, steps }),
  );
  const proposed = spawnSync(process.execPath, [cli, '--home', home, 'propose', plan, '--json'], {
    encoding: 'utf8',
  });
  if (proposed.status !== 0) throw new Error(proposed.stderr);
  const runId = JSON.parse(proposed.stdout).id;

  // 1. Start to the answer of initialize, in fresh processes.
  const initMs = [];
  for (let i = 0; i < STARTS + 1; i++) {
    const server = startServer(home);
    await server.request('initialize', initialize);
    if (i > 0) initMs.push(performance.now() - server.started);
    await server.stop();
  }

  // The floor of any start on this machine now: a bare node process, start to exit.
  const nodeMs = [];
  for (let i = 0; i < STARTS; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    nodeMs.push(performance.now() - t);
  }

  // 2. run_status over stdio (round trip) against the CLI's own read, in-process.
  const server = startServer(home);
  await server.request('initialize', initialize);
  server.notify('notifications/initialized');
  const call = () => server.request('tools/call', { name: 'run_status', arguments: { runId } });
  for (let i = 0; i < 5; i++) await call();
  const callMs = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    const answer = await call();
    if (answer.result?.isError || answer.error) throw new Error(JSON.stringify(answer));
    callMs.push(performance.now() - t);
  }
  await server.stop();

  const { openStore } = await import('../dist/runtime/open-store.js');
  const { maskedReads } = await import('../dist/runtime/masked-reads.js');
  const { flowWaits, requireRunSteps } = await import('../dist/runtime/run-reads.js');
  const store = await openStore({ home }, 'read');
  const reads = maskedReads(store, process.env);
  const read = async () => flowWaits(reads, await requireRunSteps(reads, runId, false), Date.now());
  for (let i = 0; i < 5; i++) await read();
  const readMs = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await read();
    readMs.push(performance.now() - t);
  }
  await store.close();

  const result = {
    initializeMs: { median: round(median(initMs)), min: round(Math.min(...initMs)), goal: '<= 300' },
    bareNodeMs: { median: round(median(nodeMs)), min: round(Math.min(...nodeMs)) },
    runStatusMs: { median: round(median(callMs)), min: round(Math.min(...callMs)) },
    cliReadMs: { median: round(median(readMs)), min: round(Math.min(...readMs)) },
    runStatusOverCliReadMs: { median: round(median(callMs) - median(readMs)), goal: '<= 20' },
    loadAverage: loadavg().map(round),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
