import { clockTime, formatDuration } from '../runtime/format.js';
import type { ClaimedStep, Completion } from '../runtime/types.js';
import { type Painter, painter, paintStatus, useColour } from './colour.js';
import { displayWidth, fitToWidth, padToWidth } from './text-width.js';

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
  waiting: '⏸',
  blocked: '✖',
  skipped: '↷',
  degraded: '◐',
  cancelled: '⊘',
  failed: '✖',
};

/**
 * A live list of a run's steps, redrawn in place on a TTY, with lines under it (a waiting step's
 * WAITING lines). Claims and settles of this process come as they happen; `show` sets every step
 * to its status in the store (skipped, waiting, a fan-out's progress: what no attempt reports).
 */
export class LiveStepList {
  private readonly rows = new Map<string, { title: string; status: string; note: string }>();
  private footer: readonly string[] = [];
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
  settle(states: readonly { stepId: string; status: string }[]): void {
    this.show(states, new Map(), this.footer);
  }

  /**
   * Each listed step's status as the store has it (a `notes` entry replaces its note, e.g. a
   * fan-out's `3/5 done`), and the lines under the list; drawn again only when something changed.
   */
  show(
    states: readonly { stepId: string; status: string }[],
    notes: ReadonlyMap<string, string>,
    footer: readonly string[],
  ): void {
    let changed = footer.join('\n') !== this.footer.join('\n');
    this.footer = footer;
    for (const state of states) {
      const row = this.rows.get(state.stepId);
      if (!row) continue;
      const note = notes.get(state.stepId) ?? row.note;
      if (row.status === state.status && row.note === note) continue;
      row.status = state.status;
      row.note = note;
      changed = true;
    }
    if (changed) this.draw();
  }

  private update(stepId: string, status: string, note: string): void {
    const row = this.rows.get(stepId);
    if (!row) return;
    row.status = status;
    row.note = note;
    this.draw();
  }

  private draw(): void {
    const columns = Math.max(20, this.out.columns || 100);
    const lines = [...this.rows.entries()].map(([id, row]) => {
      const status = padToWidth(paintStatus(this.paint, row.status), 10);
      return fitToWidth(
        `${SYMBOL[row.status] ?? '?'} ${padToWidth(id, 16)} ${status} ${row.note}`,
        columns - 1,
      );
    });
    // WAITING lines keep their width (a capability URL cut short is no URL): one may wrap.
    lines.push(...this.footer);
    // Back to the top of what was drawn, and clear from there down.
    if (this.drawn > 0) this.out.write(`\x1b[${this.drawn}A\r\x1b[J`);
    this.out.write(lines.map((line) => `${line}\n`).join(''));
    this.drawn = lines.reduce((rows, line) => rows + Math.max(1, Math.ceil(displayWidth(line) / columns)), 0);
  }
}
