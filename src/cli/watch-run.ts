import type { StoredEvent } from '../core/events.js';
import type { RunWithSteps, Store } from '../runtime/types.js';
import { painter, useColour } from './colour.js';
import { tableRow } from './format.js';
import { ganttChart } from './gantt.js';
import {
  addSkipReasons,
  flowWaits,
  requireRun,
  requireRunSteps,
  runExitCode,
  runSettled,
  runStatusLines,
} from './status-view.js';
import { TIMELINE_HEADER, TimelineRows, timelineWidths } from './timeline-view.js';
import { LiveView, watchUntil } from './watch.js';

/**
 * Without new events the view is still read again this often: flow waits depend on other runs, and
 * nothing else changes a run without an event.
 */
const QUIET_REFRESH_MS = 5_000;

/**
 * `baton status <run> --watch`: the run's status view, drawn again whenever its event log grows,
 * until the run settles; then the exit code `status <run>` gives. With `json`: one JSON line (the
 * same object as `status <run> --json`) each time it changes; `all`: every step listed (`--all`).
 */
export async function watchRunStatus(
  store: Store,
  runId: string,
  { json, all }: { json: boolean; all: boolean },
): Promise<number> {
  const paint = painter(!json && useColour(process.stdout));
  const view = new LiveView(process.stdout);
  let afterSeq = 0;
  let run: RunWithSteps | null = null;
  let readAt = 0;
  let lastJson = '';
  const skips = addSkipReasons([]);
  try {
    return await watchUntil(
      async () => {
        const events = await store.getEvents(runId, { afterSeq });
        const now = Date.now();
        if (run !== null && events.length === 0 && now - readAt < QUIET_REFRESH_MS) return null;
        afterSeq = events.at(-1)?.seq ?? afterSeq;
        addSkipReasons(events, skips);
        run = json ? await requireRun(store, runId) : await requireRunSteps(store, runId, all);
        readAt = now;
        const waits = await flowWaits(store, run, now);
        if (!json) view.show(runStatusLines(run, waits, paint, { now, skips }));
        else {
          const line = JSON.stringify({ ...run, flowWaits: waits });
          if (line !== lastJson) process.stdout.write(`${line}\n`);
          lastJson = line;
        }
        return runSettled(run) ? runExitCode(run) : null;
      },
      { onStop: () => view.close() },
    );
  } finally {
    view.close();
  }
}

/**
 * `baton timeline <run> --watch`: the timeline so far, then each transition as it is recorded,
 * until the run settles; then its Gantt chart and the exit code `status <run>` gives. With `json`:
 * one event per line, as `baton export` writes them.
 */
export async function watchTimeline(store: Store, runId: string, json: boolean): Promise<number> {
  const paint = painter(!json && useColour(process.stdout));
  let run = await requireRun(store, runId);
  const widths = timelineWidths(run.steps.map((step) => step.stepId));
  let rows: TimelineRows | null = null;
  let afterSeq = 0;
  const seen: StoredEvent[] = [];
  const printNew = async (): Promise<number> => {
    const events = await store.getEvents(runId, { afterSeq });
    seen.push(...events);
    for (const event of events) {
      rows ??= new TimelineRows(event.at, paint);
      process.stdout.write(`${json ? JSON.stringify(event) : tableRow(rows.row(event), widths)}\n`);
    }
    afterSeq = events.at(-1)?.seq ?? afterSeq;
    return events.length;
  };
  if (!json) process.stdout.write(`${tableRow(TIMELINE_HEADER, widths)}\n`);
  let first = true;
  return watchUntil(async () => {
    if ((await printNew()) === 0 && !first) return null;
    first = false;
    run = await requireRun(store, runId);
    if (!runSettled(run)) return null;
    // What was recorded between the read of the events and that of the run.
    await printNew();
    if (!json) {
      const chart = ganttChart(
        seen,
        run.steps.map((step) => step.stepId),
        Date.now(),
      );
      if (chart.length > 0) process.stdout.write(`\n${chart.join('\n')}\n`);
    }
    return runExitCode(run);
  });
}
