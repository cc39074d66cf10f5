/**
 * Priority in claims, on both stores: a run of priority 9 started behind 500 due runs of priority
 * 0 has its step claimed before theirs by a worker that takes one step at a time. Asserted by the
 * order in which the steps ran, never by time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

const TEST_TIMEOUT = 180_000;
const homes: string[] = [];
let server: TestPostgres | undefined;

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterAll(async () => {
  await server?.stop();
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

async function until(condition: () => boolean, what: string, deadlineMs = 120_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function claimOrder(store: 'sqlite' | 'postgres'): Promise<string[]> {
  const home = mkdtempSync(join(tmpdir(), 'baton-priority-'));
  homes.push(home);
  const ran: string[] = [];
  const work = defineWorkflow<{ n: string }>({ name: 'work', inputs: { n: null } }).step('do', (ctx) => {
    ran.push(ctx.runId);
    return ctx.inputs.n;
  });
  const baton = Baton.open({
    home,
    concurrency: 1,
    pollMs: 20,
    ...(store === 'postgres' ? { store: `${server!.url}?schema=${freshSchemaName('prio')}` } : {}),
  });
  try {
    await baton.ready();
    baton.register(work);
    const inputs = Array.from({ length: 500 }, (_, i) => ({ n: String(i) }));
    const runIds = inputs.map((_, i) => `low-${String(i).padStart(3, '0')}`);
    await baton.startMany(work, inputs, { runIds });
    await baton.start(work, { n: 'now' }, { runId: 'urgent', priority: 9 });
    const worker = baton.worker();
    await until(() => ran.length >= 5, 'five steps to run');
    await worker.stop(5_000);
    return ran;
  } finally {
    await baton.close();
  }
}

describe('priority: claims take higher priority first', () => {
  for (const store of ['sqlite', 'postgres'] as const) {
    it(
      `${store}: a priority-9 run started behind 500 due priority-0 runs runs first`,
      async () => {
        const ran = await claimOrder(store);
        expect(ran[0]).toBe('urgent');
        // Then the others, oldest first (their due time, then run id).
        expect(ran.slice(1, 5)).toEqual(['low-000', 'low-001', 'low-002', 'low-003']);
      },
      TEST_TIMEOUT,
    );
  }
});
