// A `baton worker` that can run fn steps: the same Engine the CLI builds (engine-setup.ts), but
// with a registry holding `noop` (and `list`, a fan-out's list), which append "runId stepId
// attempt\n" to a counting file before they return, so a crash test can count how often each step
// really ran.
// Usage: node bench/crash-worker.mjs --home <dir> --count <file> [--lease 1000] [--concurrency 64]
import { appendFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Engine } from '../dist/engine/engine.js';
import { AgentCliExecutor } from '../dist/executors/agent-cli-executor.js';
import { FunctionExecutor, FunctionRegistry } from '../dist/executors/function-executor.js';
import { databasePath } from '../dist/runtime/home.js';
import { ownerId } from '../dist/runtime/owner-id.js';
import { SqliteStore } from '../dist/store/sqlite/sqlite-store.js';
import { PAYLOAD } from './lib.mjs';

const { values } = parseArgs({
  options: {
    home: { type: 'string' },
    count: { type: 'string' },
    lease: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '64' },
  },
});
if (!values.home || !values.count) {
  process.stderr.write(
    'usage: crash-worker.mjs --home <dir> --count <file> [--lease ms] [--concurrency n]\n',
  );
  process.exit(2);
}
const countFile = values.count;
const registry = new FunctionRegistry()
  .register('noop', (ctx) => {
    appendFileSync(countFile, `${ctx.runId} ${ctx.stepId} ${ctx.attempt}\n`);
    // `args.sleepMs`: the step takes that long, so a kill can land while it runs.
    const sleepMs = ctx.args?.sleepMs;
    return sleepMs ? delay(sleepMs, PAYLOAD) : PAYLOAD;
  })
  // The list a fan-out expands over: 0..args.n-1.
  .register('list', (ctx) => {
    appendFileSync(countFile, `${ctx.runId} ${ctx.stepId} ${ctx.attempt}\n`);
    return Array.from({ length: ctx.args?.n ?? 0 }, (_, i) => i);
  });

const store = SqliteStore.open(databasePath(values.home));
const engine = new Engine({
  store,
  home: values.home,
  owner: ownerId(),
  executors: { agent: new AgentCliExecutor(), fn: new FunctionExecutor(registry) },
  concurrency: Number(values.concurrency),
  leaseMs: Number(values.lease),
});
const stop = () => engine.stop(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdout.write('crash-worker: started\n');
try {
  await engine.run({ kind: 'forever' });
} finally {
  await store.close();
}
