/**
 * `baton.watch` on SQLite and on a real PostgreSQL cluster: every event of a run in order, ending
 * when the run ends (its `finally` step done); a watch left mid-run and resumed `{ after }` the last
 * event seen gives exactly the rest; resuming an ended run from a mid-point gives its tail; an
 * unknown run is RUN_NOT_FOUND; an aborted watch leaves no timer behind. Steps are gated by promises
 * the test resolves: no sleeps, no timing asserts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../src/core/events.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { Baton } from '../src/workflow/baton.js';
import { waitFor } from './helpers/cli.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

let server: TestPostgres | undefined;
const dirs: string[] = [];
const opened: Baton[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterEach(async () => {
  for (const baton of opened.splice(0)) await baton.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

afterAll(async () => {
  await server?.stop();
});

const plan = validatePlanObject(
  {
    name: 'watched',
    steps: [
      { id: 'a', fn: 'a' },
      { id: 'b', fn: 'b', dependsOn: ['a'] },
      { id: 'c', fn: 'c', dependsOn: ['b'] },
    ],
    finally: [{ id: 'tidy', fn: 'tidy' }],
  },
  'watched',
);

/** A Baton (SQLite in a temp home, or a fresh PostgreSQL schema) whose functions wait for their gate. */
async function gatedBaton(kind: 'sqlite' | 'postgres') {
  const dir = mkdtempSync(join(tmpdir(), 'baton-watch-api-'));
  dirs.push(dir);
  const baton = Baton.open({
    home: join(dir, '.baton'),
    pollMs: 20,
    ...(kind === 'postgres' ? { store: `${server!.url}?schema=${freshSchemaName('watch')}` } : {}),
  });
  opened.push(baton);
  await baton.ready();
  const open = new Map<string, () => void>();
  const gates = new Map<string, Promise<void>>();
  for (const id of ['a', 'b', 'c', 'tidy']) {
    gates.set(id, new Promise<void>((resolve) => open.set(id, resolve)));
    baton.functions.register(id, async () => {
      await gates.get(id);
      return `${id} done`;
    });
  }
  return { baton, release: (id: string) => open.get(id)!() };
}

async function collect(events: AsyncIterable<StoredEvent>): Promise<StoredEvent[]> {
  const seen: StoredEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

const seqs = (events: readonly StoredEvent[]) => events.map((event) => event.seq);

describe.each(['sqlite', 'postgres'] as const)('baton.watch on %s', (kind) => {
  it('gives every event in order, ends with the run; a resumed watch gives exactly the rest', async () => {
    const { baton, release } = await gatedBaton(kind);
    await baton.startPlan(plan, {}, { runId: 'w1' });
    const whole = collect(baton.watch('w1', { after: 0 }));
    const worker = baton.worker();
    release('a');
    // A watch left as soon as b started (b waits for its gate meanwhile).
    const firstPart: StoredEvent[] = [];
    for await (const event of baton.watch('w1', { after: 0 })) {
      firstPart.push(event);
      if (event.type === 'step.started' && event.stepId === 'b') break;
    }
    const before = firstPart.at(-1)!.seq;
    const fromNow = collect(baton.watch('w1'));
    const rest = collect(baton.watch('w1', { after: before }));
    for (const id of ['b', 'c', 'tidy']) release(id);
    const [all, tail, resumed] = await Promise.all([whole, fromNow, rest]);
    await worker.stop();

    const stored = await baton.store.getEvents('w1');
    expect(stored.at(-1)?.type).toBe('run.succeeded');
    expect(seqs(all)).toEqual(seqs(stored));
    expect(all).toEqual(stored);
    // The cleanup ran before the end: its step's events come before run.succeeded.
    const tidyDone = all.findIndex((e) => e.type === 'step.succeeded' && e.stepId === 'tidy');
    expect(tidyDone).toBeGreaterThan(-1);
    expect(tidyDone).toBeLessThan(all.length - 1);
    // Left and resumed: the union is every event exactly once.
    expect([...seqs(firstPart), ...seqs(resumed)]).toEqual(seqs(stored));
    // From now: a suffix of the run's events, nothing from before it began.
    expect(tail.length).toBeGreaterThan(0);
    expect(seqs(tail)).toEqual(seqs(stored).slice(stored.length - tail.length));
    expect(tail[0]!.seq).toBeGreaterThan(before);

    // An ended run resumed from a mid-point: exactly what follows it, then the end.
    const mid = Math.floor(stored.length / 2);
    const after = await collect(baton.watch('w1', { after: stored[mid]!.seq }));
    expect(seqs(after)).toEqual(seqs(stored.slice(mid + 1)));
    // From now on an ended run: nothing, and the iteration ends.
    expect(await collect(baton.watch('w1'))).toEqual([]);
  }, 60_000);

  it('an unknown run is RUN_NOT_FOUND; an aborted watch leaves no timer behind', async () => {
    const { baton } = await gatedBaton(kind);
    await expect(collect(baton.watch('nope'))).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect(() => baton.watch('w', { after: -1 })).toThrow(/after/);
    // A run no worker drives: the watch waits until aborted.
    await baton.startPlan(plan, {}, { runId: 'w2' });
    // PostgreSQL's pool keeps timers of its own for idle connections: counted on SQLite only.
    const timers = () =>
      kind === 'sqlite' ? process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length : 0;
    const idle = timers();
    const stop = new AbortController();
    const events = baton.watch('w2', { after: 0, signal: stop.signal });
    expect((await events.next()).value).toMatchObject({ type: 'run.created' });
    const rest = events.next();
    if (kind === 'sqlite') await waitFor(async () => timers() > idle || undefined, 30_000);
    stop.abort();
    expect(await rest).toEqual({ done: true, value: undefined });
    expect(timers()).toBe(idle);
  }, 60_000);
});
