import type { StoredEvent } from './events.js';
import type { HookTrigger } from './plan/types.js';
import type { RunStatus } from './run-state.js';

/**
 * What a hook tells a person, whatever service shows it: a title, a short text, the run's page in
 * the console and what they can do about it (capability URLs, else the exact commands). Built from
 * the masked payload and the URLs only, so it holds nothing the payload does not; the services'
 * renderings (`hook-format-*.ts`) are drawn from it.
 */

/** What a link does: open a page, or act once on a step (its capability URL, POSTed). */
export type NotificationActionKind = 'open' | 'approve' | 'reject' | 'retry' | 'skip';

export interface NotificationAction {
  kind: NotificationActionKind;
  /** A button's text, e.g. `Approve gate`. */
  label: string;
  url: string;
  /**
   * POST: a capability URL; a POST with an empty body acts, a GET (a chat button opening a browser)
   * shows a page that asks before acting. GET: a page to open.
   */
  method: 'GET' | 'POST';
  stepId?: string;
}

/** good: finished; attention: a person is needed; bad: something failed or stopped. */
export type NotificationTone = 'good' | 'attention' | 'bad';

export interface Notification {
  title: string;
  text: string;
  tone: NotificationTone;
  /** The run's page in the console (`<public url>/runs/<run>`), or null without a public address. */
  consoleUrl: string | null;
  /** The capability URLs and the console link, in the order to show them. */
  actions: NotificationAction[];
  /** What to type instead, where no URL does it (no public address, `baton resume`). */
  commands: string[];
}

/** A blocked step's answers: its capability URLs under the public address, else the commands. */
export interface BlockedStepAnswer {
  stepId: string;
  reason: string | null;
  urls?: { retry: string; skip: string };
  commands?: string[];
}

/**
 * A waiting step's answers, or a held tool call's (`for: 'tool'`), as `waiting-hook-payload.ts`
 * puts them in the payload.
 */
export interface WaitingStepAnswer {
  stepId: string;
  for: 'approval' | 'event' | 'tool';
  prompt?: string;
  eventName?: string;
  /** A held tool call: the tool and what it would do (its command or path). */
  tool?: string;
  summary?: string;
  urls?: Partial<Record<'approve' | 'reject' | 'event', string>>;
  commands?: string[];
}

export interface NotificationFacts {
  trigger: HookTrigger;
  runId: string;
  planName: string;
  runStatus: RunStatus;
  blockedReason: string | null;
  /** Masked. */
  event: StoredEvent;
  publicUrl: string | null;
  waiting?: WaitingStepAnswer;
  blocked?: readonly BlockedStepAnswer[];
}

/** Longest text a notification carries (chat services cut at 2,000 to 4,000 characters). */
const MAX_TEXT = 1500;
/** Longest reason shown per blocked step. */
const MAX_REASON = 300;

export function notificationOf(facts: NotificationFacts): Notification {
  const { runId, planName } = facts;
  const consoleUrl = facts.publicUrl === null ? null : `${facts.publicUrl}/runs/${encodeURIComponent(runId)}`;
  const said = describe(facts);
  const actions = [...said.actions];
  if (consoleUrl !== null)
    actions.push({ kind: 'open', label: 'Open in Baton', url: consoleUrl, method: 'GET' });
  return {
    title: `${said.title}: ${planName}`,
    text: clip(said.lines.join('\n'), MAX_TEXT),
    tone: said.tone,
    consoleUrl,
    actions,
    commands: said.commands,
  };
}

interface Said {
  title: string;
  tone: NotificationTone;
  lines: string[];
  actions: NotificationAction[];
  commands: string[];
}

function describe(facts: NotificationFacts): Said {
  const { runId, event } = facts;
  switch (event.type) {
    case 'step.waiting':
    case 'step.tool_approval_requested':
      return waitingSaid(runId, facts.waiting);
    case 'run.succeeded':
      return {
        title: 'Succeeded',
        tone: 'good',
        lines: [`Run ${runId} finished.`],
        actions: [],
        commands: [],
      };
    case 'run.cancelled':
      return {
        title: 'Cancelled',
        tone: 'bad',
        lines: [
          `Run ${runId} was cancelled: no step of it starts again, and its running agents were stopped.`,
        ],
        actions: [],
        commands: [],
      };
    case 'run.failed':
      return {
        title: 'Failed',
        tone: 'bad',
        lines: [
          `Run ${runId} gave up (onFailure: compensate): ${clip(event.reason, MAX_REASON)}. Its completed steps were compensated and its finally steps ran.`,
        ],
        actions: [],
        commands: [],
      };
    case 'step.failed': {
      // The failure left the step blocked: its answers come with it (hook-message lists it).
      const blockedNow = facts.blocked?.filter((step) => step.stepId === event.stepId) ?? [];
      const answers = blockedNow.length > 0 ? blockedSaid({ ...facts, blocked: blockedNow }, '') : null;
      return {
        title: `Attempt failed at ${event.stepId}`,
        tone: 'bad',
        lines: [
          `Attempt ${event.attempt} of step ${event.stepId} in run ${runId} failed (${event.failureClass}): ${clip(event.message, MAX_REASON)}`,
          answers
            ? `Step ${event.stepId} is blocked: retry it once the cause is fixed, or skip it.`
            : 'Baton tries it again while tries remain; a blocked step is announced on its own.',
        ],
        actions: answers?.actions ?? [],
        commands: answers?.commands ?? [],
      };
    }
    case 'budget.exceeded': {
      const where = event.stepId === undefined ? 'its' : `step ${event.stepId}'s`;
      const said = blockedSaid(facts, 'Over budget');
      const runStopped =
        facts.runStatus === 'blocked' && (facts.blockedReason?.startsWith('budget:') ?? false);
      return {
        ...said,
        lines: [
          `Run ${runId} reached ${where} ${event.limit} budget (${event.value} of ${event.max}).`,
          ...said.lines.slice(1),
        ],
        commands: runStopped ? [`baton resume ${runId}`, ...said.commands] : said.commands,
      };
    }
    default:
      return blockedSaid(facts, 'Blocked');
  }
}

function waitingSaid(runId: string, waiting: WaitingStepAnswer | undefined): Said {
  if (!waiting)
    return { title: 'Waiting', tone: 'attention', lines: [`Run ${runId} waits.`], actions: [], commands: [] };
  const { stepId } = waiting;
  const actions: NotificationAction[] = [];
  if (waiting.urls?.approve)
    actions.push({
      kind: 'approve',
      label: `Approve ${stepId}`,
      url: waiting.urls.approve,
      method: 'POST',
      stepId,
    });
  if (waiting.urls?.reject)
    actions.push({
      kind: 'reject',
      label: `Reject ${stepId}`,
      url: waiting.urls.reject,
      method: 'POST',
      stepId,
    });
  const lines =
    waiting.for === 'tool'
      ? [
          `The agent of step ${stepId} in run ${runId} wants to use ${waiting.tool ?? 'a tool'}:`,
          waiting.summary ?? '',
          'It waits in its session for your answer; unanswered, the call is denied at its timeout.',
        ]
      : waiting.for === 'approval'
        ? [`Run ${runId} waits for approval at step ${stepId}:`, waiting.prompt ?? '']
        : [
            `Run ${runId} waits for event ${waiting.eventName ?? ''} at step ${stepId}.`,
            ...(waiting.urls?.event
              ? [`POST the event's JSON payload to its URL: ${waiting.urls.event}`]
              : []),
          ];
  const titles = {
    tool: `Tool approval needed at ${stepId}`,
    approval: `Approval needed at ${stepId}`,
    event: `Waiting for an event at ${stepId}`,
  };
  return {
    title: titles[waiting.for],
    tone: 'attention',
    lines,
    actions,
    commands: waiting.commands ?? [],
  };
}

function blockedSaid(facts: NotificationFacts, title: string): Said {
  const steps = facts.blocked ?? [];
  const reason = facts.event.type === 'run.blocked' ? facts.event.reason : facts.blockedReason;
  const lines = [`Run ${facts.runId} is blocked${reason ? `: ${clip(reason, MAX_REASON)}` : '.'}`];
  const actions: NotificationAction[] = [];
  const commands: string[] = [];
  for (const step of steps) {
    lines.push(`• ${step.stepId}${step.reason ? `: ${clip(step.reason, MAX_REASON)}` : ''}`);
    if (step.urls) {
      const { stepId } = step;
      actions.push({ kind: 'retry', label: `Retry ${stepId}`, url: step.urls.retry, method: 'POST', stepId });
      actions.push({ kind: 'skip', label: `Skip ${stepId}`, url: step.urls.skip, method: 'POST', stepId });
    }
    commands.push(...(step.commands ?? []));
  }
  return { title, tone: 'bad', lines, actions, commands };
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
