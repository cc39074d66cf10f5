import type { StoredEvent } from '../core/events.js';
import { formatDuration } from '../runtime/format.js';
import { displayWidth, padToWidth } from './text-width.js';

/** One attempt of a step on the time line. */
interface Bar {
  start: number;
  end: number;
  ok: boolean;
}

const WIDTH = 48;

/**
 * A compact text Gantt chart of a run from its events: one line per step, `█` where an attempt
 * succeeded, `▒` where one failed, `░` while one is still running; the scale is the run's span.
 */
export function ganttChart(
  events: readonly StoredEvent[],
  stepOrder: readonly string[],
  now: number,
): string[] {
  if (events.length === 0) return [];
  const first = events[0]!.at;
  const open = new Map<string, number>();
  const bars = new Map<string, Bar[]>();
  let last = first;
  for (const event of events) {
    last = Math.max(last, event.at);
    if (event.type === 'step.started') open.set(event.stepId, event.at);
    const ended =
      event.type === 'step.succeeded' || event.type === 'step.degraded' || event.type === 'step.failed'
        ? event.stepId
        : null;
    if (ended !== null && open.has(ended)) {
      const list = bars.get(ended) ?? [];
      list.push({ start: open.get(ended)!, end: event.at, ok: event.type !== 'step.failed' });
      bars.set(ended, list);
      open.delete(ended);
    }
  }
  for (const [stepId, start] of open) {
    const list = bars.get(stepId) ?? [];
    list.push({ start, end: now, ok: false });
    bars.set(stepId, list);
    last = Math.max(last, now);
  }
  const span = Math.max(1, last - first);
  const column = (t: number) => Math.min(WIDTH - 1, Math.floor(((t - first) / span) * WIDTH));
  const nameWidth = Math.max(4, ...stepOrder.map(displayWidth));
  const lines: string[] = [];
  for (const stepId of stepOrder) {
    const row = Array.from({ length: WIDTH }, () => ' ');
    const stepBars = bars.get(stepId) ?? [];
    for (const bar of stepBars) {
      const running = open.has(stepId) && bar.end === now;
      const mark = running ? '░' : bar.ok ? '█' : '▒';
      for (let c = column(bar.start); c <= column(bar.end); c++) row[c] = mark;
    }
    const attempts = stepBars.length;
    lines.push(
      `${padToWidth(stepId, nameWidth)} |${row.join('')}| ${attempts === 1 ? '1 attempt' : `${attempts} attempts`}`,
    );
  }
  const scale = `${' '.repeat(nameWidth)}  0${' '.repeat(WIDTH - 1 - formatDuration(span).length)}${formatDuration(span)}`;
  lines.push(scale);
  return lines;
}
