/**
 * Exactly-once side effects through ctx.effect under SIGKILL at named fault points: a counting
 * HTTP server on 127.0.0.1 receives every "e-mail". Each effect arrives exactly once, or the step
 * is blocked as an unknown outcome when nothing can tell whether it happened.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  expectExit,
  fixture,
  removeTempDirs,
  runBaton,
  runStatus,
  tempDir,
  timeline,
} from './helpers/cli.js';

interface Mailbox {
  url: string;
  /** Every POST, with its idempotency key. */
  received: string[];
  /** Distinct keys: the e-mails a real idempotent service would have sent. */
  delivered(): number;
}

let server: Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = null;
});
afterAll(() => removeTempDirs());

async function mailbox(): Promise<Mailbox> {
  const received: string[] = [];
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    if (request.method === 'POST' && url.pathname === '/send') {
      request.resume();
      request.on('end', () => {
        received.push(String(request.headers['idempotency-key']));
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ id: received.length }));
      });
      return;
    }
    const key = url.searchParams.get('key') ?? '';
    const index = received.indexOf(key);
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(index >= 0 ? { sent: true, result: { id: index + 1 } } : { sent: false }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, delivered: () => new Set(received).size };
}

function worker(home: string, url: string, faultPoint: string, sideEffect: string, reconcile: 'yes' | 'no') {
  const child = spawn(
    process.execPath,
    [fixture('workflow-effect-worker'), home, url, faultPoint, sideEffect, reconcile, 'mail-1'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise<{
    signal: NodeJS.Signals | null;
    result: { status: string; results?: unknown; reason?: string } | null;
    stderr: string;
  }>((resolve) =>
    child.on('exit', (_code, signal) =>
      resolve({ signal, result: stdout.trim() ? JSON.parse(stdout.trim()) : null, stderr }),
    ),
  );
}

/** Kills the first process at the fault point, runs a second one to the end. */
async function crashAndResume(faultPoint: string, sideEffect: string, reconcile: 'yes' | 'no') {
  const box = await mailbox();
  const home = tempDir('baton-effects-');
  const first = await worker(home, box.url, faultPoint, sideEffect, reconcile);
  expect(first.signal, first.stderr).toBe('SIGKILL');
  const second = await worker(home, box.url, faultPoint, sideEffect, reconcile);
  expect(second.result, second.stderr).not.toBeNull();
  return { box, home, result: second.result! };
}

describe('ctx.effect across a SIGKILL', () => {
  it('after the record, before the step committed: the recorded result is replayed, sent once', async () => {
    const { box, result } = await crashAndResume('after-record', 'none', 'no');
    expect(result).toEqual({
      status: 'succeeded',
      results: { compose: expect.any(Object), send: { id: 1 } },
    });
    expect(box.received).toHaveLength(1);
  });

  it('after the effect, before its record, with reconcile: the service is asked, sent once', async () => {
    const { box, result } = await crashAndResume('after-effect', 'none', 'yes');
    expect(result).toMatchObject({ status: 'succeeded', results: { send: { id: 1 } } });
    expect(box.received).toHaveLength(1);
  });

  it('before the effect was sent, with reconcile: it was not sent, so it is sent now, once', async () => {
    const { box, result } = await crashAndResume('before-effect', 'none', 'yes');
    expect(result).toMatchObject({ status: 'succeeded', results: { send: { id: 1 } } });
    expect(box.received).toHaveLength(1);
  });

  it('after the effect, no way to know: blocked as unknown_outcome, not sent again; resolve continues', async () => {
    const { box, home, result } = await crashAndResume('after-effect', 'none', 'no');
    expect(result).toMatchObject({ status: 'blocked' });
    expect(box.received).toHaveLength(1);
    const run = await runStatus(home, 'mail-1');
    expect(run.steps.find((s) => s.stepId === 'send')).toMatchObject({
      status: 'blocked',
      lastFailureClass: 'unknown_outcome',
    });
    expect(run.steps.find((s) => s.stepId === 'send')?.lastError).toContain('baton resolve mail-1 send');
    expectExit(await runBaton(['resolve', 'mail-1', 'send', '--result', '{"id":1}'], { home }), 0);
    const after = await runStatus(home, 'mail-1');
    expect(after.status).toBe('succeeded');
    expect((await timeline(home, 'mail-1')).some((e) => e.type === 'step.resolved')).toBe(true);
  });

  it('an idempotent step runs the effect again with the same key: the service sees one e-mail', async () => {
    const { box, result } = await crashAndResume('after-effect', 'idempotent', 'no');
    expect(result).toMatchObject({ status: 'succeeded' });
    expect(box.received).toHaveLength(2);
    expect(box.delivered()).toBe(1);
  });

  it('an unsafe step interrupted mid-flight is blocked at once, its effect never repeated', async () => {
    const { box, home, result } = await crashAndResume('after-record', 'unsafe', 'no');
    expect(result).toMatchObject({ status: 'blocked' });
    expect(box.received).toHaveLength(1);
    const run = await runStatus(home, 'mail-1');
    expect(run.steps.find((s) => s.stepId === 'send')?.lastFailureClass).toBe('unknown_outcome');
  });
});
