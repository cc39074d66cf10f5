/**
 * Keyed flow control with real processes: a plan declares `flow: { key: "customer:{{inputs.customer}}",
 * concurrency: 1 }`; 10 runs for 2 customers, driven by 2 `baton worker` processes, never run two
 * steps of one customer at once (the agents log their spans to a file), and both customers' runs
 * finish. On SQLite and on PostgreSQL. No timing is asserted: the test waits for the log to hold
 * every span's end.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  expectExit,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { planDir } from './helpers/plans.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

const TEST_TIMEOUT = 240_000;
let server: TestPostgres | undefined;

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterEach(async () => {
  await stopProcesses();
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

/** The spans of the log, checked: at most one open per customer at any line; the starts per customer. */
function checkSpans(lines: readonly string[]): Map<string, number> {
  const open = new Map<string, number>();
  const started = new Map<string, number>();
  for (const line of lines) {
    const [what, customer] = line.split(' ');
    const now = open.get(customer!) ?? 0;
    if (what === 'start') {
      expect(now, `two steps of ${customer} at once, at: ${line}\n${lines.join('\n')}`).toBe(0);
      open.set(customer!, now + 1);
      started.set(customer!, (started.get(customer!) ?? 0) + 1);
    } else open.set(customer!, now - 1);
  }
  return started;
}

describe('keyed flow control: one agent at a time per customer', () => {
  for (const store of ['sqlite', 'postgres'] as const) {
    it(
      `${store}: 10 runs for 2 customers on 2 workers never overlap within a customer, and both finish`,
      async () => {
        const { dir, home } = planDir('baton-flow-keys-');
        const spans = join(dir, 'spans.log');
        writeFileSync(spans, '');
        const storeArgs =
          store === 'postgres' ? ['--store', `${server!.url}?schema=${freshSchemaName('flow')}`] : [];
        const plan = writePlan(dir, {
          name: 'per-customer',
          inputs: { customer: null },
          defaults: {
            agent: { command: agentCommand('agent-flow-span') },
            flow: { key: 'customer:{{inputs.customer}}', concurrency: 1 },
          },
          steps: [
            { id: 'a', instruction: '{{inputs.customer}} {{run.id}} a' },
            { id: 'b', instruction: '{{inputs.customer}} {{run.id}} b', dependsOn: ['a'] },
          ],
        });
        for (let i = 0; i < 10; i++) {
          const customer = i % 2 === 0 ? 'acme' : 'globex';
          const args = [...storeArgs, 'run', plan, '-i', `customer=${customer}`, '--id', `r${i}`, '--detach'];
          expectExit(await runBaton(args, { home, cwd: dir }), 0);
        }
        const env = { SPAN_FILE: spans, SPAN_MS: '150' };
        for (let w = 0; w < 2; w++)
          spawnBaton([...storeArgs, 'worker', '--quiet', '--concurrency', '4'], { home, cwd: dir, env });
        const lines = await waitFor(
          () => {
            const all = readFileSync(spans, 'utf8').trimEnd().split('\n').filter(Boolean);
            return all.filter((line) => line.startsWith('end ')).length >= 20 ? all : undefined;
          },
          180_000,
          'every step of the 10 runs to end',
          100,
        );
        const started = checkSpans(lines);
        expect(Object.fromEntries(started)).toEqual({ acme: 10, globex: 10 });
        const status = await runBaton([...storeArgs, 'status', 'r9', '--json'], { home, cwd: dir });
        const flowKeys = JSON.parse(status.stdout).steps.map((step: { status: string }) => step.status);
        expect(flowKeys).toEqual(['succeeded', 'succeeded']);
      },
      TEST_TIMEOUT,
    );
  }
});
