import { clockTime, formatDuration } from '../runtime/format.js';
import type { ClaimedStep, Completion } from '../runtime/types.js';
import { type Painter, painter, paintStatus, useColour } from './colour.js';
import { fitToWidth, padToWidth } from './text-width.js';

/** Plain progress lines (one per transition): good for logs, pipes and heartbeats. */
export class LineProgress {
  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly showRun: boolean,
  ) {}

  private prefix(runId: string, stepId: string): string {
    return `${clockTime(Date.now())} ${this.showRun ? `${runId} ` : ''}${stepId}`;
  }

  onClaim = (claim: ClaimedStep): void => {
    const what = claim.fallback ? 'started its fallback' : 'started';
    this.out.write(`${this.prefix(claim.runId, claim.stepId)}: ${what} (attempt ${claim.attempt})\n`);
  };

  onSettle = (completion: Completion, accepted: boolean): void => {
    const took = formatDuration(completion.endedAt - completion.startedAt);
    const outcome = completion.outcome;
    const what = !accepted
      ? 'result discarded (lease lost or run cancelled)'
      : outcome.ok
        ? outcome.degraded
          ? `degraded in ${took}: ${firstLine(outcome.degraded)}`
          : `succeeded in ${took}`
        : `failed in ${took} (${outcome.failureClass}): ${firstLine(outcome.message)}`;
    this.out.write(`${this.prefix(completion.runId, completion.stepId)}: ${what}\n`);
  };
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

const SYMBOL: Record<string, string> = {
  pending: '·',
  ready: '○',
  running: '▶',
  succeeded: '✔',
  retry_wait: '↻',
  blocked: '✖',
  skipped: '↷',
  degraded: '◐',
  cancelled: '⊘',
  failed: '✖',
};

/** A live list of a run's steps, redrawn in place on a TTY. */
export class LiveStepList {
  private readonly rows = new Map<string, { title: string; status: string; note: string }>();
  private drawn = 0;
  private readonly paint: Painter;

  constructor(
    private readonly out: NodeJS.WriteStream,
    steps: { id: string; title: string }[],
  ) {
    this.paint = painter(useColour(out));
    for (const step of steps) this.rows.set(step.id, { title: step.title, status: 'pending', note: '' });
    this.draw();
  }

  onClaim = (claim: ClaimedStep): void => {
    this.update(claim.stepId, 'running', `attempt ${claim.attempt}`);
  };

  onSettle = (completion: Completion, accepted: boolean): void => {
    const outcome = completion.outcome;
    if (!accepted) return;
    const took = formatDuration(completion.endedAt - completion.startedAt);
    if (outcome.ok) this.update(completion.stepId, outcome.degraded ? 'degraded' : 'succeeded', took);
    else this.update(completion.stepId, 'failed', `${outcome.failureClass}: ${firstLine(outcome.message)}`);
  };

  /** Final states from the store (retry_wait, blocked, skipped...) once the run settles. */
  settle(states: { stepId: string; status: string }[]): void {
    for (const state of states) {
      const row = this.rows.get(state.stepId);
      if (row && row.status !== state.status) this.update(state.stepId, state.status, row.note);
    }
  }

  private update(stepId: string, status: string, note: string): void {
    const row = this.rows.get(stepId);
    if (!row) return;
    row.status = status;
    row.note = note;
    this.draw();
  }

  private draw(): void {
    const width = Math.max(20, (this.out.columns || 100) - 1);
    const lines = [...this.rows.entries()].map(([id, row]) => {
      const status = padToWidth(paintStatus(this.paint, row.status), 10);
      return fitToWidth(`${SYMBOL[row.status] ?? '?'} ${padToWidth(id, 16)} ${status} ${row.note}`, width);
    });
    if (this.drawn > 0) this.out.write(`\x1b[${this.drawn}A`);
    for (const line of lines) this.out.write(`\x1b[2K${line}\n`);
    this.drawn = lines.length;
  }
}
