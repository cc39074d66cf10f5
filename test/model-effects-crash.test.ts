/**
 * A write tool of a model step runs once across a SIGKILL of the step and its resumption: the
 * effect is recorded in the store, a resumed step gets the recorded result, and a write whose
 * outcome was never recorded is not repeated but blocked for a human.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startMockLlmServer } from '../src/testing/mock-llm/server.js';
import type { MockLlmServer, MockRequest } from '../src/testing/mock-llm/types.js';
import { fixture, removeTempDirs, runStatus, tempDir, timeline } from './helpers/cli.js';

let llm: MockLlmServer | null = null;
let counter: Server | null = null;
afterEach(async () => {
  await llm?.close();
  await new Promise((resolve) => (counter ? counter.close(resolve) : resolve(undefined)));
  llm = null;
  counter = null;
});
afterAll(() => removeTempDirs());

async function countingServer(): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  counter = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      bodies.push(body);
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => counter!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(counter.address() as AddressInfo).port}/send`, bodies };
}

function worker(home: string, counterUrl: string, killPoint = 'none') {
  const child = spawn(
    process.execPath,
    [fixture('model-tool-worker'), home, llm!.openaiBaseUrl, counterUrl, killPoint],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { pid: child.pid!, exited };
}

const hasToolResult = (request: MockRequest) =>
  request.messages.some((m) => (m as { role?: string }).role === 'tool');

describe('write tools across a SIGKILL', () => {
  it('killed after the write was recorded: the resumed step replays the result, the e-mail is sent once', async () => {
    const { url, bodies } = await countingServer();
    let victim = 0;
    llm = await startMockLlmServer({
      reply: (request) => {
        if (!hasToolResult(request))
          return { toolCalls: [{ name: 'send_email', arguments: { to: 'team' } }] };
        if (victim !== 0) {
          process.kill(victim, 'SIGKILL');
          victim = 0;
        }
        return { text: 'e-mailed the team' };
      },
    });
    const home = tempDir('baton-effects-');
    const first = worker(home, url);
    victim = first.pid;
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(bodies).toHaveLength(1);
    const second = await worker(home, url).exited;
    expect(second.code, second.stderr).toBe(0);
    expect(bodies).toHaveLength(1);
    const run = await runStatus(home, 'mail-1');
    expect(run.status).toBe('succeeded');
    const events = await timeline(home, 'mail-1');
    expect(events.filter((e) => e.type === 'tool.replayed')).toHaveLength(1);
    expect(events.find((e) => e.type === 'step.failed')).toMatchObject({ failureClass: 'interrupted' });
  });

  it('killed between the write and its record: the outcome is unknown, nothing is repeated, the step is blocked', async () => {
    const { url, bodies } = await countingServer();
    llm = await startMockLlmServer();
    const home = tempDir('baton-effects-');
    expect((await worker(home, url, 'after-effect').exited).signal).toBe('SIGKILL');
    expect(bodies).toHaveLength(1);
    const second = await worker(home, url).exited;
    expect(second.code, second.stderr).toBe(0);
    expect(bodies).toHaveLength(1);
    const run = await runStatus(home, 'mail-1');
    expect(run.status).toBe('blocked');
    expect(run.steps[0]).toMatchObject({ status: 'blocked', lastFailureClass: 'unknown_outcome' });
  });
});
