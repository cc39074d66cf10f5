/**
 * `GET /api/runs/<id>/events` of the console (started in this process over a real SQLite store or
 * a PostgreSQL cluster, a worker of `Baton` driving the run): every event in order as Server-Sent Events (`id:` its seq,
 * `event:` its type, `data:` the event); a connection dropped mid-run and opened again with
 * `Last-Event-ID` misses nothing and repeats nothing; the server ends the stream when the run ends;
 * 401 without the bearer token, 404 for an unknown run. Steps wait for gates the test opens.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import type { StoredEvent } from '../src/core/events.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { Baton } from '../src/workflow/baton.js';
import { startTestConsole, TEST_TOKEN } from './helpers/console.js';
import { freshSchemaName, usePostgres } from './helpers/postgres.js';

const pgc = usePostgres();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const plan = validatePlanObject(
  {
    name: 'streamed',
    steps: [
      { id: 'a', fn: 'a' },
      { id: 'b', fn: 'b', dependsOn: ['a'] },
    ],
    finally: [{ id: 'tidy', fn: 'tidy' }],
  },
  'streamed',
);

interface Frame {
  id: number;
  event: string;
  data: StoredEvent;
}

/**
 * Opens the stream and hands each frame to `onFrame` until the server ends it (resolves true) or
 * `onFrame` answers 'drop' (the connection is cut: resolves false).
 */
async function readStream(
  url: string,
  headers: Record<string, string>,
  onFrame: (frame: Frame) => 'drop' | undefined,
): Promise<boolean> {
  const stop = new AbortController();
  const res = await fetch(url, { headers, signal: stop.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return true;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        const at = line.indexOf(': ');
        if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
      }
      if (!fields.has('data')) continue;
      const frame = {
        id: Number(fields.get('id')),
        event: fields.get('event')!,
        data: JSON.parse(fields.get('data')!) as StoredEvent,
      };
      if (onFrame(frame) === 'drop') {
        stop.abort();
        await reader.cancel().catch(() => undefined);
        return false;
      }
    }
  }
}

async function world(kind: 'sqlite' | 'postgres') {
  const dir = mkdtempSync(join(tmpdir(), 'baton-run-events-'));
  const home = join(dir, '.baton');
  const store: Store =
    kind === 'sqlite'
      ? SqliteStore.open(join(dir, 'baton.db'))
      : await PostgresStore.open(pgc.server.url, { schema: freshSchemaName('sse') });
  const baton = Baton.open({ home, store, pollMs: 20 });
  const open = new Map<string, () => void>();
  for (const id of ['a', 'b', 'tidy']) {
    const gate = new Promise<void>((resolve) => open.set(id, resolve));
    baton.functions.register(id, async () => {
      await gate;
      return `${id} done`;
    });
  }
  const console: RunningConsole = await startTestConsole(store, home);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  cleanups.push(() => console.close());
  return { baton, store, console, release: (id: string) => open.get(id)!() };
}

const bearer = { authorization: `Bearer ${TEST_TOKEN}` };

describe.each(['sqlite', 'postgres'] as const)('GET /api/runs/<id>/events on %s', (kind) => {
  it('streams every event in order, resumes after a dropped connection exactly once, ends with the run', async () => {
    const { baton, console, release } = await world(kind);
    await baton.startPlan(plan, {}, { runId: 'r1' });
    const url = `${console.origin}/api/runs/r1/events`;
    const whole: Frame[] = [];
    const wholeEnded = readStream(`${url}?after=0`, bearer, (frame) => {
      whole.push(frame);
      return undefined;
    });
    const worker = baton.worker();
    cleanups.push(async () => {
      await worker.stop(0);
    });
    release('a');
    // Dropped once step b started (b waits for its gate meanwhile).
    const first: Frame[] = [];
    const firstEnded = await readStream(`${url}?after=0`, bearer, (frame) => {
      first.push(frame);
      return frame.event === 'step.started' && frame.data.stepId === 'b' ? 'drop' : undefined;
    });
    expect(firstEnded).toBe(false);
    const second: Frame[] = [];
    const secondEnded = readStream(url, { ...bearer, 'last-event-id': String(first.at(-1)!.id) }, (frame) => {
      second.push(frame);
      return undefined;
    });
    release('b');
    release('tidy');
    // The server ends both streams once the run has ended.
    expect(await secondEnded).toBe(true);
    expect(await wholeEnded).toBe(true);

    const stored = await baton.store.getEvents('r1');
    expect(stored.at(-1)?.type).toBe('run.succeeded');
    const seqs = stored.map((event) => event.seq);
    expect(whole.map((frame) => frame.id)).toEqual(seqs);
    expect(whole.map((frame) => frame.data)).toEqual(stored);
    expect(whole.every((frame) => frame.event === frame.data.type && frame.id === frame.data.seq)).toBe(true);
    expect([...first, ...second].map((frame) => frame.id)).toEqual(seqs);
  }, 60_000);

  it('401 without the bearer token, 404 for an unknown run', async () => {
    const { baton, console } = await world(kind);
    await baton.startPlan(plan, {}, { runId: 'r1' });
    const refused = await fetch(`${console.origin}/api/runs/r1/events`);
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.code).toBe('UNAUTHORIZED');
    const wrong = await fetch(`${console.origin}/api/runs/r1/events`, {
      headers: { authorization: 'Bearer not-the-token' },
    });
    expect(wrong.status).toBe(401);
    const unknown = await fetch(`${console.origin}/api/runs/nope/events`, { headers: bearer });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'RUN_NOT_FOUND' } });
  }, 60_000);
});
