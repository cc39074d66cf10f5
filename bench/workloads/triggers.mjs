// Issue 43 item 1: webhook triggers through the console server (`POST /hooks/<name>`), in this
// process over a SQLite store (synchronous=FULL, as every bench): (a) the median time of one signed
// delivery to a stored run (sequential HTTP requests: verify, read the trigger, look up the run,
// store it, record the delivery), beside the floor, `createRun` alone of the same plan on the same
// store; (b) 1,000 deliveries a second offered for 10 s (open loop: 10 every 10 ms, whatever the
// answers), then every answer and every run counted: nothing may be lost.
import { createHmac } from 'node:crypto';
import { Agent, request } from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { startConsole } from '../../dist/console/console-server.js';
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { startRun } from '../../dist/engine/start-run.js';
import { commandContext } from '../../dist/runtime/commands/context.js';
import { prepareRun } from '../../dist/runtime/commands/start-commands.js';
import { addTrigger } from '../../dist/runtime/commands/trigger-commands.js';
import { assert, emit, median, now, openStore, sleep, tempHome } from '../lib.mjs';

if (!isMainThread) {
  await sendLoad(workerData);
  process.exit(0);
}

/** The open-loop sender: RATE a second (10 every 10 ms) for SECONDS, then every answer's status. */
async function sendLoad({ port, secret, rate, seconds }) {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const perTick = rate / 100;
  const answers = [];
  const started = now();
  for (let tick = 0; tick < seconds * 100; tick += 1) {
    for (let k = 0; k < perTick; k += 1) {
      const sent = now();
      answers.push(
        signedPost(agent, port, secret, `load-${tick * perTick + k}`).then((status) => ({
          status,
          ms: now() - sent,
        })),
      );
    }
    const wait = started + (tick + 1) * 10 - now();
    if (wait > 0) await sleep(wait);
  }
  const offeredSeconds = (now() - started) / 1000;
  const lastSent = now();
  const answered = await Promise.all(answers);
  const tailMs = now() - lastSent;
  const latencies = answered.map((a) => a.ms).sort((a, b) => a - b);
  parentPort.postMessage({
    statuses: answered.map((a) => a.status),
    offeredSeconds,
    tailMs,
    p50Ms: latencies[Math.floor(latencies.length * 0.5)],
    p99Ms: latencies[Math.floor(latencies.length * 0.99)],
  });
  agent.destroy();
}

/** One signed delivery; resolves with the status. */
function signedPost(agent, port, secret, id) {
  const body = JSON.stringify({ n: id });
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/hooks/bench',
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'X-Baton-Delivery': id,
          'X-Baton-Signature-256': `sha256=${signature}`,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const SEQUENTIAL = Number(process.env.BENCH_TRIGGER_SEQUENTIAL ?? 300);
const RATE = Number(process.env.BENCH_TRIGGER_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_TRIGGER_SECONDS ?? 10);
const SECRET = 'bench-hook-secret';

const plan = validatePlanObject(
  { name: 'bench-hooked', inputs: { n: {} }, steps: [{ id: 'work', fn: 'noop' }] },
  'bench',
);

const home = tempHome('triggers');
const store = openStore(home.dbPath);
const env = { ...process.env, BENCH_HOOK_SECRET: SECRET };
const ctx = commandContext({ store, home: home.dir, env });
await addTrigger(ctx, {
  name: 'bench',
  prepared: prepareRun(
    { home: home.dir, env, functions: ['noop'] },
    { plan, inputs: { n: '{{body.n}}' }, workspace: home.dir },
  ),
  source: 'hmac',
  secretEnv: 'BENCH_HOOK_SECRET',
});
const running = await startConsole({
  store,
  home: home.dir,
  host: '127.0.0.1',
  port: 0,
  token: 'x'.repeat(32),
  env,
});
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const { port } = new URL(running.origin);

const deliver = (id) => signedPost(agent, port, SECRET, id);

try {
  // (a) Sequential deliveries, and the floor: createRun alone, interleaved in rounds.
  const deliveryMs = [];
  const createMs = [];
  for (let i = 0; i < SEQUENTIAL; i += 1) {
    let start = now();
    const status = await deliver(`seq-${i}`);
    deliveryMs.push(now() - start);
    assert(status === 202, `delivery seq-${i} answered ${status}`);
    start = now();
    await startRun(store, { plan, runId: `floor-${i}`, inputs: { n: String(i) }, workspace: home.dir });
    createMs.push(now() - start);
  }

  // (b) RATE a second for SECONDS seconds, open loop, from a worker thread: a sender is another
  // machine, so it must not take the server's core.
  const total = RATE * SECONDS;
  const { statuses, offeredSeconds, tailMs, p50Ms, p99Ms } = await new Promise((resolve, reject) => {
    const sender = new Worker(new URL(import.meta.url), {
      workerData: { port, secret: SECRET, rate: RATE, seconds: SECONDS },
    });
    sender.once('message', resolve);
    sender.once('error', reject);
  });
  const accepted = statuses.filter((status) => status === 202).length;
  const runs = (await store.listRuns({ planName: 'bench-hooked', limit: total * 2 + SEQUENTIAL * 2 })).filter(
    (run) => run.id.startsWith('bench-load-'),
  );
  emit({
    deliveryMedianMs: median(deliveryMs),
    createRunMedianMs: median(createMs),
    offered: total,
    offeredPerSec: total / offeredSeconds,
    // From the first send to the last answer (the worker's own start left out).
    answeredPerSec: total / (offeredSeconds + tailMs / 1000),
    loadP50Ms: p50Ms,
    loadP99Ms: p99Ms,
    tailMs,
    accepted,
    stored: runs.length,
    lost: total - runs.length,
  });
} finally {
  agent.destroy();
  await running.close();
  await store.close();
  home.dispose();
}
