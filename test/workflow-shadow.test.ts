/**
 * Shadow runs from the TypeScript API: nothing external happens. `ctx.effect` performs nothing
 * whatever the step declared (a real HTTP server on 127.0.0.1 and a file would show it), records a
 * `step.would_execute` event with its key and returns the step's `shadowResult`; `baton diff`
 * (the real CLI) tells the shadow run from the real one and names what stood in.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { batonJson, expectExit, runBaton } from './helpers/cli.js';

const homes: string[] = [];
let server: Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = null;
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A mail service that records every POST body. */
async function mailService(): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push(body);
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ id: received.length }));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/send`, received };
}

function newsletter(url: string, outbox: string, bills: string[]) {
  return (
    defineWorkflow({ name: 'newsletter' })
      .step('draft', () => 'hello readers')
      // No sideEffect declared: the step runs, its effects do not.
      .step('send', { dependsOn: ['draft'], shadowResult: { id: 0 } }, async (ctx) => {
        const sent = await ctx.effect('mail', async (key) => {
          const response = await fetch(url, { method: 'POST', body: `${key}: ${ctx.results.draft}` });
          return (await response.json()) as { id: number };
        });
        await ctx.effect('archive', () => writeFileSync(outbox, ctx.results.draft));
        return { messageId: sent.id, shadow: ctx.shadow };
      })
      // Declared unsafe: in a shadow run it is not called at all.
      .step('bill', { dependsOn: ['send'], sideEffect: 'unsafe', shadowResult: 'not billed' }, (ctx) => {
        bills.push(ctx.runId);
        return 'billed';
      })
  );
}

describe('shadow runs of workflows', () => {
  it('perform no effect: record would_execute with the key, return the shadowResult; diff names them', async () => {
    const home = mkdtempSync(join(tmpdir(), 'baton-wf-shadow-'));
    homes.push(home);
    const mail = await mailService();
    const outbox = join(home, 'outbox.txt');
    const bills: string[] = [];
    const wf = newsletter(mail.url, outbox, bills);
    const baton = Baton.open({ home, pollMs: 20 });
    try {
      const results = await baton.run(wf, {}, { runId: 'shadow', shadow: true });
      expect(results).toEqual({
        draft: 'hello readers',
        send: { messageId: 0, shadow: true },
        bill: 'not billed',
      });
      expect(mail.received).toEqual([]);
      expect(existsSync(outbox)).toBe(false);
      expect(bills).toEqual([]);
      const events = await baton.store.getEvents('shadow');
      const would = events.filter((e) => e.type === 'step.would_execute');
      expect(would).toMatchObject([
        {
          stepId: 'send',
          executor: 'fn',
          effect: 'mail',
          inputs: { effect: 'mail', idempotencyKey: 'shadow:send:mail' },
          result: { id: 0 },
        },
        { stepId: 'send', effect: 'archive' },
        { stepId: 'bill', executor: 'fn', result: 'not billed' },
      ]);
      expect(would[2]).not.toHaveProperty('effect');

      // For real: each effect happens once.
      expect(await baton.run(wf, {}, { runId: 'real' })).toMatchObject({ send: { messageId: 1 } });
    } finally {
      await baton.close();
    }
    expect(mail.received).toEqual(['real:send:mail: hello readers']);
    expect(existsSync(outbox)).toBe(true);
    expect(bills).toEqual(['real']);

    const diff = expectExit(await runBaton(['diff', 'shadow', 'real'], { home }), 1);
    expect(diff.stdout).toMatch(/^STEP\s+shadow \(shadow\)\s+real\s+RESULT$/m);
    expect(diff.stdout).toMatch(/^draft\s+succeeded\s+succeeded\s+same$/m);
    expect(diff.stdout).toMatch(/^send\s+.*differs.*\(shadow: effects not performed: mail, archive\)$/m);
    expect(diff.stdout).toMatch(/^bill\s+succeeded\s+succeeded\s+.*\(shadow: shadowResult stood in\)$/m);
    const json = await batonJson<{
      shadowA: boolean;
      shadowB: boolean;
      steps: { stepId: string; same: boolean; shadowA?: unknown; shadowB?: unknown }[];
    }>(['diff', 'shadow', 'real'], { home }, [1]);
    expect(json).toMatchObject({ shadowA: true, shadowB: false });
    expect(json.steps).toEqual([
      expect.objectContaining({ stepId: 'draft', same: true }),
      expect.objectContaining({
        stepId: 'send',
        same: false,
        shadowA: { result: false, effects: ['mail', 'archive'] },
      }),
      expect.objectContaining({ stepId: 'bill', same: false, shadowA: { result: true, effects: [] } }),
    ]);
    expect(json.steps.some((s) => s.shadowB !== undefined)).toBe(false);
  });
});
