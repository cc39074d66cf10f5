import { BatonError } from '../core/errors.js';
import { planHasCheckpoints } from '../core/workspace-checkpoint.js';
import { attemptLogFile, LogFollower, readLogTail } from '../runtime/attempt-logs.js';
import { attemptsWithSessions } from '../runtime/attempt-sessions.js';
import { toolCallCapabilities, waitCapabilities } from '../runtime/capability-urls.js';
import { listSchedules } from '../runtime/commands/schedule-commands.js';
import { readFileChanges } from '../runtime/file-changes.js';
import { lastOutputTimes } from '../runtime/last-output.js';
import { planSecrets } from '../runtime/plan-secrets.js';
import { keptOfRunHistory } from '../runtime/run-history.js';
import { everyWaitingToolCall, requireRun, requireStepOf, runChildren } from '../runtime/run-reads.js';
import type { RunDetail } from '../runtime/types.js';
import { artifactFile, sendDownload } from './artifact-download.js';
import type { ConsoleContext, Handler, Request } from './context.js';
import { consolePath, type SafeHtml } from './html.js';
import { errorPage } from './pages/error-page.js';
import { inboxPage } from './pages/inbox-page.js';
import { layout, type PageOptions } from './pages/layout.js';
import { runPage } from './pages/run-page.js';
import { runsPage, runsQueryOf } from './pages/runs-page.js';
import { schedulesPage } from './pages/schedules-page.js';
import { stepPage } from './pages/step-page.js';
import type { ToolCallItem, WaitingItem } from './pages/waiting-items.js';
import { workersPage } from './pages/workers-page.js';
import { sendHtml, sendJson, sendText } from './respond.js';
import { runEvents } from './run-events-route.js';
import { openEventStream, resumeAfter } from './sse.js';
import { timelineOf } from './timeline-data.js';

/**
 * The console's pages and streams (GET): each reads through the store behind the masking boundary
 * (`ctx.commands.store`) or a runtime read, and renders; an attempt's log is masked with its run's
 * secrets (runtime/plan-secrets.ts).
 */

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
  await page(ctx, req, { title: 'Runs', section: 'runs' }, undefined, async () => {
    const result = await ctx.commands.store.listRunPage(query);
    const labels = await ctx.commands.store.getRunLabels(result.runs.map((run) => run.id));
    return runsPage(result, number, req.url.searchParams, labels);
  });
};

const runDetail: Handler = async (ctx, req) => {
  const run = await requireRun(ctx.commands.store, req.params[0]!);
  await page(ctx, req, { title: `Run ${run.id}`, section: 'runs' }, run.id, async () =>
    runPage(run, ctx.session.csrfToken, ctx.commands.now(), await runChildren(ctx.commands.store, run)),
  );
};

const runTimeline: Handler = async (ctx, req) => {
  const run = await requireRun(ctx.commands.store, req.params[0]!);
  // The timeline keeps numbers, step ids and short labels of thousands of attempts and events:
  // read as stored, and what it keeps masked (runtime/run-history.ts).
  const now = ctx.commands.now();
  const timeline = await keptOfRunHistory(ctx.commands, run, (attempts, events) =>
    timelineOf(run, attempts, events, now),
  );
  sendJson(req.res, 200, timeline);
};

const stepDetail: Handler = async (ctx, req) => {
  const [runId, stepId] = req.params as [string, string];
  const run = await requireRun(ctx.commands.store, runId);
  requireStepOf(run, stepId);
  const state = run.steps.find((s) => s.stepId === stepId)!;
  const [attempts, results] = await Promise.all([
    attemptsWithSessions(ctx.commands.store, runId, stepId),
    ctx.commands.store.getStepResults(
      runId,
      run.steps.map((s) => s.stepId),
    ),
  ]);
  const wanted = req.url.searchParams.get('attempt');
  const shown = wanted !== null ? attemptNumber(wanted) : state.attempt;
  const live = state.status === 'running' && state.attempt === shown;
  const file = shown > 0 ? attemptLogFile(ctx.commands.home, run, stepId, shown, attempts) : null;
  const log =
    file === null
      ? null
      : live
        ? { attempt: shown, live, text: '', truncated: false }
        : { attempt: shown, live, ...(await readLogTail(file, planSecrets(ctx.commands, run.plan))) };
  const lastOutputAt =
    state.status === 'running' ? (await lastOutputTimes(ctx.commands.home, run)).get(stepId) : undefined;
  // A checkpointed step (checkpoint: workspace): the files it changed, with a bounded, masked diff.
  const files = planHasCheckpoints(run.plan)
    ? ((await readFileChanges(ctx.commands, { runId, stepId, maxBytes: 64 * 1024 })).steps.find(
        (changes) => changes.stepId === stepId,
      ) ?? null)
    : null;
  await page(ctx, req, { title: `${stepId} · ${run.id}`, section: 'runs' }, run.id, async () =>
    stepPage({
      run,
      stepId,
      attempts,
      results,
      log,
      csrf: ctx.session.csrfToken,
      now: ctx.commands.now(),
      ...(lastOutputAt === undefined ? {} : { lastOutputAt }),
      files,
    }),
  );
};

/** The log an `…/attempts/<n>/log` address names (null: the attempt has none), and its run's secrets. */
async function attemptLogOf(ctx: ConsoleContext, req: Request) {
  const [runId, stepId, n] = req.params as [string, string, string];
  const run = await requireRun(ctx.commands.store, runId);
  requireStepOf(run, stepId);
  const attempt = attemptNumber(n);
  const attempts = await ctx.commands.store.getAttempts(runId, stepId);
  const file = attemptLogFile(ctx.commands.home, run, stepId, attempt, attempts);
  return { runId, stepId, attempt, file, secrets: planSecrets(ctx.commands, run.plan) };
}

/** `…/attempts/<n>/log`: the whole log as text (masked), never as HTML. */
const rawLog: Handler = async (ctx, req) => {
  const { stepId, attempt, file, secrets } = await attemptLogOf(ctx, req);
  if (file === null)
    throw new BatonError('STEP_NOT_FOUND', `step ${stepId} has no log of attempt ${attempt}`);
  const { text } = await readLogTail(file, secrets, Number.MAX_SAFE_INTEGER);
  sendText(req.res, 200, text);
};

/** `…/attempts/<n>/log/live`: the log as it grows (SSE), until the attempt has ended and all was read. */
const liveLog: Handler = async (ctx, req) => {
  const { runId, stepId, attempt, file, secrets } = await attemptLogOf(ctx, req);
  const stream = openEventStream(req.request, req.res);
  if (file === null) {
    stream.send(null, { event: 'end' });
    stream.end();
    return;
  }
  const follower = new LogFollower(file, secrets);
  let gone = false;
  void stream.closed.then(() => {
    gone = true;
  });
  while (!gone) {
    const text = await follower.read();
    if (text !== '') stream.send(text);
    const now = await ctx.commands.store.getRun(runId);
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
  const run = await requireRun(ctx.commands.store, runId);
  requireStepOf(run, stepId);
  const number = attemptNumber(req.url.searchParams.get('attempt'));
  const path = req.url.searchParams.get('path') ?? '';
  const attempt = (await ctx.commands.store.getAttempts(runId, stepId)).find((a) => a.attempt === number);
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
  const { steps } = await ctx.commands.store.listWaitingSteps(INBOX_MAX);
  const waits = await waitCapabilities(ctx.commands, ctx.publicUrl(), steps);
  return steps.flatMap((step, i) => {
    const wait = waits[i];
    return wait ? [{ step, kind: wait.kind, urls: wait.urls }] : [];
  });
}

/** The tool calls running agents wait on a person for, with their capability URLs. */
async function toolCallItems(ctx: ConsoleContext): Promise<ToolCallItem[]> {
  const calls = await everyWaitingToolCall(ctx.commands.store, INBOX_MAX);
  const urls = toolCallCapabilities(ctx.commands, ctx.publicUrl(), calls);
  return calls.map((call, i) => ({ call, urls: urls[i]! }));
}

const inbox: Handler = async (ctx, req) => {
  await page(ctx, req, { title: 'Blockers', section: 'inbox' }, undefined, async () => {
    const [blocked, budget, proposed, waiting, toolCalls] = await Promise.all([
      ctx.commands.store.listBlockedSteps(INBOX_MAX),
      ctx.commands.store.listRunPage({ status: 'blocked', limit: INBOX_MAX }),
      ctx.commands.store.listRunPage({ status: 'awaiting_approval', limit: INBOX_MAX }),
      waitingItems(ctx),
      toolCallItems(ctx),
    ]);
    const details = await Promise.all(proposed.runs.map((run) => ctx.commands.store.getRun(run.id)));
    return inboxPage({
      blocked,
      budgetBlocked: budget.runs.filter((run) => run.blockedReason?.startsWith('budget:')),
      proposed: details.filter((run): run is RunDetail => run !== null),
      waiting,
      toolCalls,
      csrf: ctx.session.csrfToken,
    });
  });
};

const workers: Handler = async (ctx, req) => {
  await page(ctx, req, { title: 'Flow & workers', section: 'workers' }, undefined, async () => {
    const now = ctx.commands.now();
    const [limits, leases] = await Promise.all([
      ctx.commands.store.listFlowLimits(now),
      ctx.commands.store.listLeases(),
    ]);
    return workersPage(limits, leases, now);
  });
};

/** Slots of its history each schedule shows. */
const SLOTS_SHOWN = 10;

const schedules: Handler = async (ctx, req) => {
  await page(ctx, req, { title: 'Schedules', section: 'schedules' }, undefined, async () => {
    const views = await listSchedules(ctx.commands);
    const withSlots = await Promise.all(
      views.map(async (view) => ({
        view,
        slots: await ctx.commands.store.listScheduleSlots(view.name, SLOTS_SHOWN),
      })),
    );
    return schedulesPage(withSlots, ctx.session.csrfToken);
  });
};

/** `/live?after=<seq>[&run=<id>]`: a notice per new event (of the run, or of every run). */
const live: Handler = async (ctx, req) => {
  // A stream the browser opens again says what it had last (Last-Event-ID): it misses nothing.
  const after = resumeAfter(req.request, req.url);
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
  ['schedules', schedules],
  ['workers', workers],
  ['live', live],
  ['api/runs/*/events', runEvents],
  ['runs/*', runDetail],
  ['runs/*/timeline.json', runTimeline],
  ['runs/*/steps/*', stepDetail],
  ['runs/*/steps/*/artifact', artifact],
  ['runs/*/steps/*/attempts/*/log', rawLog],
  ['runs/*/steps/*/attempts/*/log/live', liveLog],
];
