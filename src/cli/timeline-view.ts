import type { StoredEvent } from '../core/events.js';
import { clockTime, formatDuration, skipCause } from '../runtime/format.js';
import type { Painter } from './colour.js';
import { columnWidths, table } from './format.js';

export const TIMELINE_HEADER = ['TIME', '+ELAPSED', 'STEP', 'ATTEMPT', 'DURATION', 'EVENT'];

/** What an event's line is drawn in: done green, needs a human red, in motion yellow. */
const EVENT_PAINT: Partial<Record<StoredEvent['type'], Parameters<Painter>[0]>> = {
  'run.succeeded': 'green',
  'step.succeeded': 'green',
  'step.resolved': 'green',
  'step.failed': 'red',
  'step.blocked': 'red',
  'run.blocked': 'red',
  'run.failed': 'red',
  'run.cleanup_started': 'yellow',
  'budget.exceeded': 'red',
  'step.started': 'yellow',
  'step.retry_scheduled': 'yellow',
  'step.degraded': 'yellow',
  'step.fallback': 'yellow',
};

/**
 * The timeline's rows, one per event: time, elapsed since `first` (the run's first event), step,
 * attempt, duration and what happened. `starts` carries attempt starts from row to row. The
 * ATTEMPT column is always the step's attempt: a model call's requests inside an attempt
 * (`recovery.*` events number them from 1) show that attempt, and the request in their text.
 */
export class TimelineRows {
  private readonly starts = new Map<string, number>();
  /** Each step's attempt under way, from its last `step.started`. */
  private readonly attempts = new Map<string, number>();

  constructor(
    private readonly first: number,
    private readonly paint: Painter,
  ) {}

  row(event: StoredEvent): string[] {
    const { what, took } = describeEvent(event, this.starts);
    const stepId = 'stepId' in event ? (event.stepId ?? '') : '';
    if (event.type === 'step.started') this.attempts.set(event.stepId, event.attempt);
    const inAttempt = !event.type.startsWith('step.') && stepId !== '';
    const attempt = inAttempt
      ? String(this.attempts.get(stepId) ?? '')
      : 'attempt' in event
        ? String(event.attempt)
        : '';
    const text = inAttempt && 'attempt' in event ? `request ${event.attempt}: ${what}` : what;
    const colour = EVENT_PAINT[event.type];
    return [
      clockTime(event.at),
      formatDuration(event.at - this.first),
      stepId,
      attempt,
      took,
      colour ? this.paint(colour, text) : text,
    ];
  }
}

/** The whole timeline as one table. */
export function timelineTable(events: readonly StoredEvent[], paint: Painter): string {
  const rows = new TimelineRows(events[0]?.at ?? 0, paint);
  return table([TIMELINE_HEADER, ...events.map((event) => rows.row(event))]);
}

/**
 * Column widths for a timeline that grows (`timeline --watch`): wide enough for any time, elapsed
 * time, step id of the run and attempt number, so appended rows line up with the first ones.
 */
export function timelineWidths(stepIds: readonly string[]): number[] {
  return columnWidths([
    TIMELINE_HEADER,
    ...stepIds.map((id) => ['00:00:00', '59 m 59 s', id, '100', '59 m 59 s']),
  ]);
}

function describeEvent(event: StoredEvent, starts: Map<string, number>): { what: string; took: string } {
  switch (event.type) {
    case 'step.started':
      starts.set(`${event.stepId}:${event.attempt}`, event.at);
      return { what: `started by ${event.owner}`, took: '' };
    case 'step.succeeded':
      return {
        what: `succeeded: ${event.summary.split('\n')[0]!.slice(0, 80)}`,
        took: formatDuration(event.durationMs),
      };
    case 'step.failed':
      return {
        what: `failed (${event.failureClass}): ${event.message.split('\n')[0]!.slice(0, 100)}`,
        took: formatDuration(event.durationMs),
      };
    case 'step.retry_scheduled':
      return { what: `retry ${event.nextAttempt} due in ${formatDuration(event.delayMs)}`, took: '' };
    case 'step.blocked':
      return {
        what: `blocked (${event.failureClass}): ${event.reason.split('\n')[0]!.slice(0, 100)}`,
        took: '',
      };
    case 'step.skipped':
      return { what: skipCause(event).text.slice(0, 109), took: '' };
    case 'step.expanded':
      return { what: `fan-out: expanded into ${event.items} items`, took: '' };
    case 'run.blocked':
      return { what: `run blocked: ${event.reason.split('\n')[0]!.slice(0, 100)}`, took: '' };
    case 'run.created':
      return { what: `run created: ${event.planName}, ${event.steps} steps`, took: '' };
    case 'budget.exceeded':
      return { what: `budget ${event.limit} exceeded (${event.value} of ${event.max})`, took: '' };
    case 'run.resumed':
      return { what: `run resumed: ${event.reason}`, took: '' };
    case 'run.rerun_requested':
      return { what: rerunText(event), took: '' };
    case 'recovery.finished':
      return {
        what: `model call ${event.outcome} after ${event.requests} request(s) (${event.model})`,
        took: '',
      };
    case 'recovery.retried':
      return {
        what: `model ${event.reason ?? 'failure'}${event.status ? ` ${event.status}` : ''}: retry in ${formatDuration(event.waitMs ?? 0)}`,
        took: '',
      };
    case 'recovery.compacted':
      return { what: `context compacted: ~${event.tokensBefore} → ~${event.tokensAfter} tokens`, took: '' };
    case 'recovery.output_reduced':
    case 'recovery.reissued':
      return {
        what: `${event.type.slice('recovery.'.length).replace('_', ' ')}: max output ${event.maxOutputBefore} → ${event.maxOutputAfter}`,
        took: '',
      };
    case 'recovery.fell_back':
      return { what: `fell back from ${event.model} to ${event.toModel}`, took: '' };
    case 'recovery.gave_up':
      return {
        what: `model call gave up (${event.reason ?? event.failureClass}): ${event.message ?? ''}`,
        took: '',
      };
    case 'step.session':
      return {
        what: event.resumed
          ? `resumed the agent's session (${event.sessionId})`
          : `agent session ${event.sessionId}${event.reason ? `, not resumed: ${event.reason}` : ''}`,
        took: '',
      };
    case 'step.checkpoint':
      return { what: `workspace recorded ${event.phase} the attempt (${event.tree.slice(0, 12)})`, took: '' };
    case 'run.files_restored':
      return {
        what: `workspace put back as before ${event.stepId} (${event.cause}, asked by ${event.by})`,
        took: '',
      };
    case 'step.tool_approval_requested':
      return {
        what: `waiting for tool approval: ${event.tool} ${event.summary.slice(0, 60)} (call ${event.callId})`,
        took: '',
      };
    case 'step.tool_approval_decided':
      return {
        what: `tool call ${event.callId} (${event.tool}) ${event.decision === 'allow' ? 'allowed' : 'denied'} by ${event.by}${event.comment ? `: ${event.comment.slice(0, 60)}` : ''}`,
        took: '',
      };
    case 'tool.failed':
      return { what: `tool ${event.tool} failed (${event.code})`, took: '' };
    default:
      return { what: event.type.replace('.', ' '), took: '' };
  }
}

/** A rerun as the timeline says it: who asked, from where, how many steps (and which kept an older result). */
export function rerunText(event: Extract<StoredEvent, { type: 'run.rerun_requested' }>): string {
  const scope = event.only ? 'only' : `${event.steps} step(s)`;
  const effects = event.redoEffects ? ', effects redone' : '';
  const stale = event.stale ? `; resting on an older result: ${event.stale.join(', ').slice(0, 100)}` : '';
  const kept = event.kept ? `; kept: ${event.kept.join(', ').slice(0, 100)}` : '';
  return `rerun from ${event.stepId} (${scope}${effects}) asked by ${event.by}${kept}${stale}`;
}
