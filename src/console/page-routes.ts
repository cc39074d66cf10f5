import { BatonError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { attemptLogFile, LogFollower, readLogTail } from '../runtime/attempt-logs.js';
import type { RunDetail } from '../store/store.js';
import { artifactFile, sendDownload } from './artifact-download.js';
import type { ConsoleContext, Handler, Request } from './context.js';
import { consolePath, type SafeHtml } from './html.js';
import { requireRun, requireStep } from './lookups.js';
import { errorPage } from './pages/error-page.js';
import { inboxPage } from './pages/inbox-page.js';
import { layout, type PageOptions } from './pages/layout.js';
import { runPage } from './pages/run-page.js';
import { runsPage, runsQueryOf } from './pages/runs-page.js';
import { stepPage } from './pages/step-page.js';
import type { WaitingItem } from './pages/waiting-items.js';
import { workersPage } from './pages/workers-page.js';
import { sendHtml, sendJson, sendText } from './respond.js';
import { openEventStream } from './sse.js';
import { timelineOf } from './timeline-data.js';
import { currentWait } from './wait-answers.js';

/** Blocked steps, waiting steps and proposals an inbox shows at most. */
const INBOX_MAX = 200;

function attemptNumber(text: string | null | undefined): number {
  if (text === null || text === undefined || !/^\d{1,9}$/.test(text) || Number(text) < 1)
    throw new BatonError(
      'INVALID_ARGUMENT',
      `attempt: expected an attempt number from 1, got "${text ?? ''}"`,
    );
  return Number(text);
}

/** The stream a page listens to, from where the page was drawn. */
async function liveUrl(ctx: ConsoleContext, runId?: string): Promise<string> {
  const after = await ctx.hub.position();
  return `/live?after=${after}${runId ? `&run=${encodeURIComponent(runId)}` : ''}`;
}

async function page(
  ctx: ConsoleContext,
  req: Request,
  options: Omit<PageOptions, 'live'>,
  runId: string | undefined,
  body: () => Promise<SafeHtml>,
) {
  const live = await liveUrl(ctx, runId);
  sendHtml(req.res, 200, layout({ ...options, live }, await body(), req.fragment));
}

const runsList: Handler = async (ctx, req) => {
  const { query, page: number } = runsQueryOf(req.url.searchParams);
  await page(ctx, req, { title: 'Runs', section: 'runs' }, undefined, async () =>
    runsPage(await ctx.store.listRunPage(query), number, req.url.searchParams),
  );
};

const runDetail: Handler = async (ctx, req) => {
  const run = await requireRun(ctx.store, req.params[0]!);
  await page(ctx, req, { title: `Run ${run.id}`, section: 'runs' }, run.id, async () =>
    runPage(run, ctx.session.csrfToken, ctx.now()),
  );
};

const runTimeline: Handler = async (ctx, req) => {
  const runId = req.params[0]!;
  const run = await requireRun(ctx.store, runId);
  // Masking thousands of attempts and events costs more than the rest of the answer: the timeline
  // keeps only numbers, step ids and short labels, and its labels are masked here instead.
  const [attempts, events] = await Promise.all([
    ctx.unmasked.getAttempts(runId),
    ctx.unmasked.getEvents(runId),
  ]);
  const timeline = timelineOf(run, attempts, events, ctx.now());
  const secrets = ctx.secretsOf(run.plan);
  for (const mark of timeline.marks) mark[3] = redactSecrets(mark[3], secrets);
  sendJson(req.res, 200, timeline);
};

const stepDetail: Handler = async (ctx, req) => {
  const [runId, stepId] = req.params as [string, string];
  const run = await requireRun(ctx.store, runId);
  requireStep(run, stepId);
  const state = run.steps.find((s) => s.stepId === stepId)!;
  const [attempts, results] = await Promise.all([
    ctx.store.getAttempts(runId, stepId),
    ctx.store.getStepResults(
      runId,
      run.steps.map((s) => s.stepId),
    ),
  ]);
  const wanted = req.url.searchParams.get('attempt');
  const shown = wanted !== null ? attemptNumber(wanted) : state.attempt;
  const live = state.status === 'running' && state.attempt === shown;
  const file = shown > 0 ? attemptLogFile(ctx.home, run, stepId, shown, attempts) : null;
  const log =
    file === null
      ? null
      : live
        ? { attempt: shown, live, text: '', truncated: false }
        : { attempt: shown, live, ...(await readLogTail(file, ctx.secretsOf(run.plan))) };
  await page(ctx, req, { title: `${stepId} · ${run.id}`, section: 'runs' }, run.id, async () =>
    stepPage({ run, stepId, attempts, results, log, csrf: ctx.session.csrfToken, now: ctx.now() }),
  );
};

/** `…/attempts/<n>/log`: the whole log as text (masked), never as HTML. */
const rawLog: Handler = async (ctx, req) => {
  const [runId, stepId, n] = req.params as [string, string, string];
  const run = await requireRun(ctx.store, runId);
  requireStep(run, stepId);
  const attempt = attemptNumber(n);
  const file = attemptLogFile(ctx.home, run, stepId, attempt, await ctx.store.getAttempts(runId, stepId));
  if (file === null)
    throw new BatonError('STEP_NOT_FOUND', `step ${stepId} has no log of attempt ${attempt}`);
  const { text } = await readLogTail(file, ctx.secretsOf(run.plan), Number.MAX_SAFE_INTEGER);
  sendText(req.res, 200, text);
};

/** `…/attempts/<n>/log/live`: the log as it grows (SSE), until the attempt has ended and all was read. */
const liveLog: Handler = async (ctx, req) => {
  const [runId, stepId, n] = req.params as [string, string, string];
  const run = await requireRun(ctx.store, runId);
  requireStep(run, stepId);
  const attempt = attemptNumber(n);
  const file = attemptLogFile(ctx.home, run, stepId, attempt, await ctx.store.getAttempts(runId, stepId));
  const stream = openEventStream(req.request, req.res);
  if (file === null) {
    stream.send(null, { event: 'end' });
    stream.end();
    return;
  }
  const follower = new LogFollower(file, ctx.secretsOf(run.plan));
  let gone = false;
  void stream.closed.then(() => {
    gone = true;
  });
  while (!gone) {
    const text = await follower.read();
    if (text !== '') stream.send(text);
    const now = await ctx.store.getRun(runId);
    const state = now?.steps.find((s) => s.stepId === stepId);
    const running = state?.status === 'running' && state.attempt === attempt;
    if (!running && (await follower.atEnd())) {
      const rest = await follower.read(true);
      if (rest !== '') stream.send(rest);
      stream.send(null, { event: 'end' });
      stream.end();
      return;
    }
    await new Promise((done) => setTimeout(done, ctx.logPollMs));
  }
};

const artifact: Handler = async (ctx, req) => {
  const [runId, stepId] = req.params as [string, string];
  const run = await requireRun(ctx.store, runId);
  requireStep(run, stepId);
  const number = attemptNumber(req.url.searchParams.get('attempt'));
  const path = req.url.searchParams.get('path') ?? '';
  const attempt = (await ctx.store.getAttempts(runId, stepId)).find((a) => a.attempt === number);
  if (!attempt) throw new BatonError('STEP_NOT_FOUND', `step ${stepId} has no attempt ${number}`);
  const found = await artifactFile(run.workspace, attempt, path);
  if ('status' in found) {
    const back = { href: consolePath('runs', runId, 'steps', stepId), label: `back to ${stepId}` };
    sendHtml(
      req.res,
      found.status,
      layout({ title: 'Refused', section: 'runs' }, errorPage(found.status, found.message, back), false),
    );
    return;
  }
  sendDownload(req.res, found.file, found.size);
};

/** The waiting steps with their capability URLs (the current wait's, so a used one is never shown). */
async function waitingItems(ctx: ConsoleContext): Promise<WaitingItem[]> {
  const { steps } = await ctx.store.listWaitingSteps(INBOX_MAX);
  const runs = new Map<string, Promise<RunDetail | null>>();
  const items = await Promise.all(
    steps.map(async (step) => {
      if (!runs.has(step.runId)) runs.set(step.runId, ctx.unmasked.getRun(step.runId));
      const run = await runs.get(step.runId)!;
      const wait = run ? await currentWait(ctx.unmasked, run, step.stepId) : null;
      if (!wait) return null;
      const urls = ctx.waitUrls({ runId: step.runId, stepId: step.stepId, waitSeq: wait.waitSeq }, wait.kind);
      return { step, kind: wait.kind, urls };
    }),
  );
  return items.filter((item): item is WaitingItem => item !== null);
}

const inbox: Handler = async (ctx, req) => {
  await page(ctx, req, { title: 'Blockers', section: 'inbox' }, undefined, async () => {
    const [blocked, budget, proposed, waiting] = await Promise.all([
      ctx.store.listBlockedSteps(INBOX_MAX),
      ctx.store.listRunPage({ status: 'blocked', limit: INBOX_MAX }),
      ctx.store.listRunPage({ status: 'awaiting_approval', limit: INBOX_MAX }),
      waitingItems(ctx),
    ]);
    const details = await Promise.all(proposed.runs.map((run) => ctx.store.getRun(run.id)));
    return inboxPage({
      blocked,
      budgetBlocked: budget.runs.filter((run) => run.blockedReason?.startsWith('budget:')),
      proposed: details.filter((run): run is RunDetail => run !== null),
      waiting,
      csrf: ctx.session.csrfToken,
    });
  });
};

const workers: Handler = async (ctx, req) => {
  await page(ctx, req, { title: 'Flow & workers', section: 'workers' }, undefined, async () => {
    const now = ctx.now();
    const [limits, leases] = await Promise.all([ctx.store.listFlowLimits(now), ctx.store.listLeases()]);
    return workersPage(limits, leases, now);
  });
};

/** `/live?after=<seq>[&run=<id>]`: a notice per new event (of the run, or of every run). */
const live: Handler = async (ctx, req) => {
  // A stream the browser opens again says what it had last (Last-Event-ID): it misses nothing.
  const seqOf = (text: string | string[] | null | undefined) =>
    typeof text === 'string' && /^\d{1,15}$/.test(text) ? Number(text) : null;
  const given = [seqOf(req.url.searchParams.get('after')), seqOf(req.request.headers['last-event-id'])];
  const known = given.filter((seq): seq is number => seq !== null);
  const after = known.length === 0 ? null : Math.max(...known);
  const runId = req.url.searchParams.get('run');
  const stream = openEventStream(req.request, req.res);
  const unsubscribe = await ctx.hub.subscribe(runId, after, (notice) =>
    stream.send(notice, { id: notice.seq }),
  );
  await stream.closed;
  unsubscribe();
};

/** GET routes: a pattern of path segments (`*` one segment) and its handler. */
export const PAGE_ROUTES: [string, Handler][] = [
  ['', runsList],
  ['inbox', inbox],
  ['workers', workers],
  ['live', live],
  ['runs/*', runDetail],
  ['runs/*/timeline.json', runTimeline],
  ['runs/*/steps/*', stepDetail],
  ['runs/*/steps/*/artifact', artifact],
  ['runs/*/steps/*/attempts/*/log', rawLog],
  ['runs/*/steps/*/attempts/*/log/live', liveLog],
];
