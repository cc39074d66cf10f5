// One worker process of the PostgreSQL throughput benchmark: an Engine with a FunctionExecutor whose
// only function `noop` returns ~100 bytes, on a PostgresStore (the built dist/).
// Usage: node bench/pg-worker.mjs <url> <schema> <concurrency> [<home> agent]
// With `<home> agent`, agent steps run through the real AgentCliExecutor (attempt logs under <home>;
// the agent program trusted by the caller's BATON_TRUSTED_AGENTS): bench/pg-agent-bench.mjs.
// Prints READY once the store is open, starts on the first line read from stdin, stops on SIGTERM and
// prints `REPORT <json>` (the engine's report, and its CPU ms since "go" and before it).
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { Engine } from '../dist/engine/engine.js';
import { AgentCliExecutor } from '../dist/executors/agent-cli-executor.js';
import { PostgresStore } from '../dist/store/postgres/postgres-store.js';
import { noopExecutors, profiled } from './lib.mjs';

const [url, schema, concurrency = '64', home = tmpdir(), kind = 'fn'] = process.argv.slice(2);
const store = await PostgresStore.open(url, { schema, poolSize: Number(process.env.BENCH_PG_POOL ?? 4) });
const executors = noopExecutors();
if (kind === 'agent') executors.agent = new AgentCliExecutor({ killGraceMs: 1000 });
const engine = new Engine({
  store,
  executors,
  home,
  owner: `bench:${process.pid}`,
  concurrency: Number(concurrency),
  onError: (error) => process.stderr.write(`pg-worker: ${error.message}\n`),
});
process.stdout.write('READY\n');
await once(process.stdin, 'data');
process.stdin.destroy();
// CPU from "go" on: the start (imports, the store's pool and migration check) is not a step's cost.
const cpuAtGo = process.cpuUsage();
process.once('SIGTERM', () => engine.stop(0));
// BENCH_PROFILE=<dir>: a CPU profile of the worker's run (bench/profile-top.mjs).
const report = await profiled(`pg-worker-${kind}`, () => engine.run({ kind: 'forever' }));
await store.close();
const { user, system } = process.cpuUsage(cpuAtGo);
const startup = cpuAtGo.user + cpuAtGo.system;
process.stdout.write(
  `REPORT ${JSON.stringify({ ...report, cpuMs: (user + system) / 1000, startupCpuMs: startup / 1000 })}\n`,
);
