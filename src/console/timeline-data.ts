import type { StoredEvent } from '../core/events.js';
import { FINAL_RUN_STATUSES } from '../core/run-state.js';
import { skipCause } from '../runtime/format.js';
import type { AttemptRecord, RunDetail } from '../runtime/types.js';

/** How an attempt (or a wait) is drawn. */
type SpanKind = 'running' | 'succeeded' | 'failed' | 'interrupted' | 'discarded' | 'wait';
/** What a point on the timeline is (`skipped`: by the plan, e.g. its `when`; a person's skip is `human`). */
type MarkKind = 'recovery' | 'fallback' | 'budget' | 'blocked' | 'human' | 'skipped' | 'run';

/**
 * A run's timeline as the console's script draws it: compact tuples (a run with thousands of
 * attempts stays small), times in ms from the run's creation.
 */
interface TimelineData {
  start: number;
  /** Offset of the timeline's right end: now for a run still going, else its last moment. */
  end: number;
  steps: string[];
  /** [step index, start, duration, kind, attempt, 1 when it ran the step's fallback else 0] */
  spans: [number, number, number, SpanKind, number, 0 | 1][];
  /** [step index (-1: the run itself), at, kind, label] */
  marks: [number, number, MarkKind, string][];
}

/** Cut for mark labels: the timeline shows what happened, the step page the whole message. */
const LABEL_MAX = 80;

/** The timeline of a run from its attempts and its event log (pure: `now` is given). */
export function timelineOf(
  run: Pick<RunDetail, 'createdAt' | 'finishedAt' | 'status' | 'steps'>,
  attempts: readonly AttemptRecord[],
  events: readonly StoredEvent[],
  now: number,
): TimelineData {
  const start = run.createdAt;
  const index = new Map(run.steps.map((step, i) => [step.stepId, i]));
  const rowOf = (stepId: string | undefined) => (stepId === undefined ? -1 : (index.get(stepId) ?? -1));
  const at = (time: number) => Math.max(0, time - start);
  const fallbackFrom = new Map<string, number>();
  for (const event of events) {
    if (event.type === 'step.fallback' && !fallbackFrom.has(event.stepId))
      fallbackFrom.set(event.stepId, event.at);
    if (event.type === 'step.retry_requested') fallbackFrom.delete(event.stepId);
  }
  let last = start;
  const spans: TimelineData['spans'] = [];
  for (const attempt of attempts) {
    if (attempt.startedAt === null) continue;
    const ended = attempt.endedAt ?? attempt.startedAt;
    last = Math.max(last, ended);
    const from = fallbackFrom.get(attempt.stepId);
    spans.push([
      rowOf(attempt.stepId),
      at(attempt.startedAt),
      Math.max(0, ended - attempt.startedAt),
      attempt.outcome,
      attempt.attempt,
      from !== undefined && attempt.startedAt >= from ? 1 : 0,
    ]);
  }
  for (const step of run.steps) {
    if (step.status !== 'running' || step.startedAt === null) continue;
    spans.push([
      rowOf(step.stepId),
      at(step.startedAt),
      Math.max(0, now - step.startedAt),
      'running',
      step.attempt,
      step.onFallback ? 1 : 0,
    ]);
  }
  const marks: TimelineData['marks'] = [];
  const mark = (stepId: string | undefined, time: number, kind: MarkKind, label: string) =>
    marks.push([
      rowOf(stepId),
      at(time),
      kind,
      label.length > LABEL_MAX ? `${label.slice(0, LABEL_MAX - 1)}…` : label,
    ]);
  for (const event of events) {
    last = Math.max(last, event.at);
    switch (event.type) {
      case 'step.retry_scheduled':
        spans.push([
          rowOf(event.stepId),
          at(event.at),
          Math.max(0, event.dueAt - event.at),
          'wait',
          event.nextAttempt,
          0,
        ]);
        break;
      case 'step.fallback':
        mark(event.stepId, event.at, 'fallback', `fallback: ${event.reason}`);
        break;
      case 'step.degraded':
        mark(event.stepId, event.at, 'fallback', `degraded: ${event.reason}`);
        break;
      case 'budget.exceeded':
        mark(event.stepId, event.at, 'budget', `budget ${event.limit}: ${event.value} of ${event.max}`);
        break;
      case 'step.blocked':
        mark(event.stepId, event.at, 'blocked', `blocked (${event.failureClass})`);
        break;
      case 'run.blocked':
        mark(undefined, event.at, 'blocked', 'run blocked');
        break;
      case 'run.rerun_requested':
        mark(
          event.stepId,
          event.at,
          'human',
          `rerun asked by ${event.by}${event.only ? ' (only)' : ''}${event.kept ? `, keeping ${event.kept.join(', ')}` : ''}`,
        );
        break;
      case 'step.skipped': {
        const cause = skipCause(event);
        mark(event.stepId, event.at, cause.by === 'person' ? 'human' : 'skipped', cause.text);
        break;
      }
      case 'step.retry_requested':
      case 'step.resolved':
        mark(event.stepId, event.at, 'human', event.type.slice('step.'.length).replace('_', ' '));
        break;
      case 'run.approved':
      case 'run.resumed':
      case 'run.cancelled':
      case 'run.rejected':
      case 'run.succeeded':
      case 'run.failed':
      case 'run.cleanup_started':
        mark(undefined, event.at, 'run', event.type.slice('run.'.length));
        break;
      case 'tool.failed':
        mark(event.stepId, event.at, 'recovery', `tool ${event.tool} failed (${event.code})`);
        break;
      default:
        if (event.type.startsWith('recovery.') && event.type !== 'recovery.finished') {
          const detail = event as { stepId?: string; reason?: string; status?: number };
          const why = [detail.reason, detail.status].filter((part) => part !== undefined).join(' ');
          mark(
            detail.stepId,
            event.at,
            'recovery',
            `${event.type.slice('recovery.'.length)}${why ? `: ${why}` : ''}`,
          );
        }
    }
  }
  const going = !FINAL_RUN_STATUSES.has(run.status);
  const end = going ? Math.max(now, last) : Math.max(run.finishedAt ?? last, last);
  return { start, end: at(end), steps: run.steps.map((s) => s.stepId), spans, marks };
}
