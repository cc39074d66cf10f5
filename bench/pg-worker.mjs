// One worker process of the PostgreSQL throughput benchmark: an Engine with a FunctionExecutor whose
// only function `noop` returns ~100 bytes, on a PostgresStore (the built dist/).
// Usage: node bench/pg-worker.mjs <url> <schema> <concurrency>
// Prints READY once the store is open, starts on the first line read from stdin, stops on SIGTERM and
// prints `REPORT <json>` (the engine's report).
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { Engine } from '../dist/engine/engine.js';
import { PostgresStore } from '../dist/store/postgres/postgres-store.js';
import { noopExecutors } from './lib.mjs';

const [url, schema, concurrency = '64'] = process.argv.slice(2);
const store = await PostgresStore.open(url, { schema, poolSize: 4 });
const engine = new Engine({
  store,
  executors: noopExecutors(),
  home: tmpdir(),
  owner: `bench:${process.pid}`,
  concurrency: Number(concurrency),
  onError: (error) => process.stderr.write(`pg-worker: ${error.message}\n`),
});
process.stdout.write('READY\n');
await once(process.stdin, 'data');
process.stdin.destroy();
process.once('SIGTERM', () => engine.stop(0));
const report = await engine.run({ kind: 'forever' });
await store.close();
process.stdout.write(`REPORT ${JSON.stringify(report)}\n`);
