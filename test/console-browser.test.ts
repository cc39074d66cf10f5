import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { agentCommand, removeTempDirs, runBaton, tempDir, writePlan } from './helpers/cli.js';
import { startTestConsole, TEST_TOKEN } from './helpers/console.js';

/**
 * The console in a real browser: Debian's Chromium driven by playwright-core (never a downloaded
 * browser), over a SQLite store that the real `baton` CLI drives in child processes.
 */
const CHROMIUM = '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
// Outside CI a machine without Chromium skips (say so); in CI the launch fails the file.
const skip = missing && process.env.CI !== 'true';
if (skip)
  process.stderr.write(
    `console-browser.test.ts: skipped: ${CHROMIUM} is not installed (apt install chromium)\n`,
  );

/** Text that would run as script if any page put it into markup unescaped. */
const XSS = [
  '<script>alert("xss-script")</script>',
  '<img src=x onerror=alert("xss-img")>',
  '"><svg onload=alert("xss-svg")>',
  "'><iframe src=javascript:alert('xss-frame')></iframe>",
  '</pre><b onmouseover=alert("xss-b")>hover</b>',
];

describe.skipIf(skip)('console in a browser (sqlite)', () => {
  let dir: string;
  let home: string;
  let store: SqliteStore;
  let console: RunningConsole;
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];

  const baton = async (...args: string[]) => {
    const result = await runBaton(args, { home, cwd: dir });
    if (result.code !== 0 && result.code !== 1)
      throw new Error(`baton ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result;
  };
  /** A plan in its own folder (its default workspace). */
  const plan = (name: string, content: object) => {
    const folder = join(dir, name);
    mkdirSync(folder, { recursive: true });
    return writePlan(folder, content, { format: 'json' });
  };
  const open = async (path: string) => {
    await page.goto(`${console.origin}${path}`);
  };

  beforeAll(async () => {
    dir = tempDir('baton-console-browser-');
    home = join(dir, 'home');
    mkdirSync(home);
    store = SqliteStore.open(join(home, 'baton.db'));
    console = await startTestConsole(store, home);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    // Signing in: the printed address puts the token into the cookie.
    await open(`/?token=${TEST_TOKEN}`);
    expect(new URL(page.url()).search).toBe('');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await console?.close();
    await store?.close();
    removeTempDirs();
  });

  it('updates a run page live while the run progresses, without reloading it', async () => {
    const file = plan('live', {
      name: 'live',
      defaults: { agent: { command: agentCommand('agent-succeed') } },
      steps: [
        { id: 'fetch', instruction: 'fetch the data' },
        { id: 'report', instruction: 'write the report', dependsOn: ['fetch'] },
      ],
    });
    await baton('run', file, '--detach', '--id', 'live-1');
    await open('/runs/live-1');
    expect(await page.textContent('h1 .status')).toBe('running');
    await page.evaluate(() => {
      (window as unknown as { sameDocument: boolean }).sameDocument = true;
    });
    await baton('check');
    await page.waitForFunction(
      () => document.querySelector('h1 .status')?.textContent === 'succeeded',
      null,
      {
        timeout: 20_000,
      },
    );
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(
      true,
    );
    expect(Number(await page.getAttribute('html', 'data-refreshes'))).toBeGreaterThan(0);
    await page.waitForSelector('#timeline[data-drawn="2"] svg.gantt rect.k-succeeded');
    expect(await page.locator('svg.graph a.node.status-succeeded').count()).toBe(2);
  });

  it('retries a blocked step from the inbox: a new attempt runs and succeeds', async () => {
    const file = plan('flaky', {
      name: 'flaky',
      defaults: { agent: { command: agentCommand('agent-flaky') }, retry: { maxAttempts: 1 } },
      steps: [{ id: 'deploy', instruction: 'deploy it' }],
    });
    await baton('run', file, '--detach', '--id', 'flaky-1');
    await baton('check');
    await open('/inbox');
    const item = page.locator('.inbox-item[data-run="flaky-1"][data-step="deploy"]');
    expect(await item.locator('.next').textContent()).toContain('retry');
    await item.locator('button[data-action="retry"]').click();
    await page.waitForURL(`${console.origin}/inbox`);
    expect(await page.locator('.inbox-item[data-run="flaky-1"]').count()).toBe(0);
    await baton('check');
    await open('/runs/flaky-1/steps/deploy');
    expect(await page.textContent('h1 .status')).toBe('succeeded');
    expect(await page.textContent('section.attempt[data-attempt="2"] h3')).toContain('succeeded');
    expect(await page.textContent('section.attempt[data-attempt="1"] h3')).toContain('failed');
  });

  it('reruns from a step, marks what rests on an older result, and forks from a step into a new run', async () => {
    const file = plan('chain', {
      name: 'chain',
      defaults: { agent: { command: agentCommand('agent-succeed') } },
      steps: [
        { id: 'fetch', instruction: 'fetch' },
        { id: 'analyze', instruction: 'analyze', dependsOn: ['fetch'] },
        { id: 'report', instruction: 'report', dependsOn: ['analyze'] },
      ],
    });
    await baton('run', file, '--id', 'chain-1');
    await open('/runs/chain-1');
    const row = (id: string) => page.locator(`#steps tr[data-step="${id}"]`);
    await row('analyze').locator('button[data-action="rerun from here"]').click();
    await page.waitForURL(`${console.origin}/runs/chain-1`);
    expect(await row('analyze').locator('.status').textContent()).toBe('ready');
    expect(await row('report').locator('.status').textContent()).toBe('pending');
    expect(await row('fetch').locator('.status').textContent()).toBe('succeeded');
    await baton('check');
    await open('/runs/chain-1');
    expect(await row('report').locator('td').nth(3).textContent()).toBe('2');
    // Only this step: the one after it is then marked as resting on an older result.
    const only = row('analyze').locator('form:has(button[data-action="rerun from here"])');
    await only.locator('input[name="only"]').check();
    await only.locator('button[data-action="rerun from here"]').click();
    await page.waitForURL(`${console.origin}/runs/chain-1`);
    await baton('check');
    await open('/runs/chain-1');
    expect(await row('report').locator('.stale').count()).toBe(1);
    expect(await row('analyze').locator('.stale').count()).toBe(0);
    await row('report').locator('button[data-action="fork from here"]').click();
    await page.waitForURL(/\/runs\/chain-1-fork-[a-z0-9]+$/);
    expect(await page.textContent('.forked-from')).toBe('forked from run chain-1 at step report');
    expect(await row('fetch').locator('.status').textContent()).toBe('succeeded');
    expect(await row('report').locator('.status').textContent()).toBe('ready');
  });

  it('approves a waiting step from the inbox with a comment: the step after it runs', async () => {
    const file = plan('gated', {
      name: 'gated',
      defaults: { agent: { command: agentCommand('agent-succeed') } },
      steps: [
        { id: 'gate', wait: { for: 'approval', prompt: 'Ship release 1.2?' } },
        { id: 'ship', instruction: 'ship it', dependsOn: ['gate'] },
      ],
    });
    await baton('run', file, '--detach', '--id', 'gated-1');
    await baton('check');
    await open('/inbox');
    const item = page.locator('#waiting .inbox-item[data-run="gated-1"][data-step="gate"]');
    expect(await item.locator('.prompt').textContent()).toBe('Ship release 1.2?');
    expect(await item.locator('code.capability-url').count()).toBe(2);
    const approve = item.locator('form:has(button[data-action="approve"])');
    await approve.locator('input[name="comment"]').fill('checked the changelog');
    await approve.locator('button[data-action="approve"]').click();
    await page.waitForURL(`${console.origin}/inbox`);
    expect(await page.locator('.inbox-item[data-run="gated-1"]').count()).toBe(0);
    await baton('check');
    await open('/runs/gated-1/steps/ship');
    expect(await page.textContent('h1 .status')).toBe('succeeded');
    const approved = (await store.getEvents('gated-1')).find((e) => e.type === 'step.approved');
    expect(approved).toMatchObject({ comment: 'checked the changelog' });
  });

  it('approves a proposed plan from the inbox with the delay question answered: it starts', async () => {
    const file = plan('proposal', {
      name: 'proposal',
      description: 'two steps to approve',
      defaults: { agent: { command: agentCommand('agent-succeed') } },
      steps: [
        { id: 'first', instruction: 'one' },
        { id: 'second', instruction: 'two', dependsOn: ['first'] },
      ],
    });
    await baton('propose', file, '--id', 'prop-1');
    await open('/inbox');
    const item = page.locator('.inbox-item.proposal[data-run="prop-1"]');
    expect(await item.locator('.proposal-steps li').count()).toBe(2);
    await item.locator('input[name="delay"]').fill('1s');
    await item.locator('button[data-action="approve"]').click();
    await page.waitForURL(`${console.origin}/inbox`);
    expect(await page.locator('.inbox-item[data-run="prop-1"]').count()).toBe(0);
    const events = await store.getEvents('prop-1');
    expect(events.find((e) => e.type === 'run.approved')).toMatchObject({ delayMs: 1000 });
    await open('/runs/prop-1');
    expect(await page.textContent('h1 .status')).toBe('running');
    await baton('check');
    expect((await store.getRun('prop-1'))?.steps[0]?.status).toBe('succeeded');
  });

  it('renders XSS payloads in every user-controlled field as inert text', async () => {
    const [p0, p1, p2, p3, p4] = XSS as [string, string, string, string, string];
    const file = plan('xss', {
      name: 'xss',
      description: p0,
      inputs: { topic: { default: p1 } },
      steps: [
        {
          id: 'echo',
          title: p2,
          instruction: `${p3} {{inputs.topic}}`,
          agent: { command: agentCommand('agent-succeed') },
        },
        {
          id: 'fail',
          title: p4,
          dependsOn: ['echo'],
          instruction: p0,
          retry: { maxAttempts: 1 },
          agent: { command: agentCommand('agent-fail-echo'), env: { set: { FAIL_MESSAGE: XSS.join(' ') } } },
        },
      ],
    });
    await baton('run', file, '--detach', '--id', 'xss-1');
    await baton('check');
    // What each page shows of the run: titles, description, inputs, prompts, outputs, logs, errors.
    const expected: [string, string[]][] = [
      ['/runs/xss-1', [p0, p1, p2, p4]],
      ['/runs/xss-1/steps/echo', [p2, `${p3} ${p1}`, `ok: ${p3} ${p1}`]],
      ['/runs/xss-1/steps/fail', [p4, p0, XSS.join(' ')]],
      ['/inbox', [XSS.join(' ')]],
      ['/?q=xss', ['xss-1']],
    ];
    for (const [path, texts] of expected) {
      await open(path);
      if (path === '/runs/xss-1') await page.waitForSelector('#timeline[data-drawn] svg.gantt');
      const shown = await page.evaluate(() => document.body.innerText);
      for (const text of texts) expect(shown, `${path} shows ${text}`).toContain(text);
      const injected = await page.evaluate(
        () =>
          document.querySelectorAll(
            'script:not([src="/assets/console.js"]), iframe, img, [onerror], [onload], [onmouseover]',
          ).length,
      );
      expect(injected, path).toBe(0);
    }
    expect(dialogs).toEqual([]);
  });

  it('saves screenshots of the runs list, a run page and the inbox, with their key elements', async () => {
    const shots = join(dir, 'screenshots');
    mkdirSync(shots);
    const pages: [string, string, string[]][] = [
      [
        'runs.png',
        '/',
        ['#run-counts .chip[data-status="succeeded"]', 'table#runs tbody tr[data-run="live-1"]', '.pager'],
      ],
      [
        'run.png',
        '/runs/live-1',
        ['svg.graph a.node[data-step="report"]', '#timeline svg.gantt rect.span', '#totals', '#inputs'],
      ],
      [
        'inbox.png',
        '/inbox',
        ['#blocked .inbox-item button[data-action="retry"]', '#blocked .inbox-item .next'],
      ],
    ];
    for (const [name, path, selectors] of pages) {
      await open(path);
      if (path.startsWith('/runs/')) await page.waitForSelector('#timeline[data-drawn] svg.gantt');
      for (const selector of selectors)
        expect(await page.locator(selector).first().isVisible(), `${path} ${selector}`).toBe(true);
      const file = join(shots, name);
      await page.screenshot({ path: file, fullPage: true });
      expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG');
      expect(statSync(file).size).toBeGreaterThan(5000);
    }
    expect(dialogs).toEqual([]);
  });
});
