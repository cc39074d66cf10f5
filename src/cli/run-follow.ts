import type { StoredEvent } from '../core/events.js';
import type { Plan, PlanStep } from '../core/plan/types.js';
import { fanOutLine, fanOutProgress } from '../runtime/fan-out-progress.js';
import { clockTime, skipCause } from '../runtime/format.js';
import type { Store } from '../runtime/types.js';
import { waitUrlLines } from '../runtime/wait-url-lines.js';
import { waitingLines } from './commands/check-waiting.js';
import type { LiveStepList } from './progress.js';

/** How often the run's new events are read while `baton run` drives it. */
const FOLLOW_MS = 250;

type WaitingEvent = Extract<StoredEvent, { type: 'step.waiting' }>;

interface FollowOptions {
  /** Where the WAITING lines (and, without a list, skip lines) go. */
  out: NodeJS.WritableStream;
  /** The live list of a terminal: set to each step's status in the store, WAITING lines under it. */
  list?: LiveStepList;
  home: string;
  env: NodeJS.ProcessEnv;
}

/**
 * What `baton run` shows of the run it drives besides its own attempts (progress.ts): from the
 * run's events as they are recorded, a WAITING line when a step starts waiting for a person or an
 * event, worded as `baton check` words it, with the commands that end it (and its capability URLs
 * under BATON_PUBLIC_URL), and why a step was skipped; a live list is set to every step's status
 * as the store has it (skipped, waiting, a fan-out's progress), so nothing stays `pending`.
 */
export class RunFollower {
  private afterSeq = 0;
  /** The waits still open, by step: the event that started each. */
  private readonly waits = new Map<string, WaitingEvent>();
  private readonly printed = new Set<number>();
  private readonly steps: Map<string, PlanStep>;
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly runId: string,
    private readonly plan: Plan,
    private readonly options: FollowOptions,
  ) {
    this.steps = new Map(plan.steps.map((step) => [step.id, step]));
  }

  start(): void {
    this.tick();
  }

  /** Stops reading, after the read under way (if any) and a last one: what the end of the run changed. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
    await this.poll(true).catch(() => undefined);
  }

  private readonly tick = (): void => {
    // A read that fails (the store busy) is tried again at the next tick.
    this.polling = this.poll()
      .catch(() => undefined)
      .finally(() => {
        if (this.stopped) return;
        this.timer = setTimeout(this.tick, FOLLOW_MS);
        this.timer.unref();
      });
  };

  /** Reads the run's new events and shows what they changed (`last`: also once stopped). */
  private async poll(last = false): Promise<void> {
    const events = await this.store.getEvents(this.runId, { afterSeq: this.afterSeq });
    if (events.length === 0) return;
    this.afterSeq = events.at(-1)!.seq;
    for (const event of events) this.take(event);
    const { list, out } = this.options;
    if (list) {
      const run = await this.store.getRun(this.runId);
      if (!run || (this.stopped && !last)) return;
      const notes = new Map(
        fanOutProgress(run.plan, run.steps).map((progress) => [
          progress.groupId,
          fanOutLine(progress).slice(progress.groupId.length + 1),
        ]),
      );
      list.show(
        run.steps,
        notes,
        [...this.waits.values()].flatMap((event) => this.waitingText(event)),
      );
      return;
    }
    for (const event of this.waits.values()) {
      if (this.printed.has(event.seq)) continue;
      this.printed.add(event.seq);
      out.write(
        this.waitingText(event)
          .map((line) => `${line}\n`)
          .join(''),
      );
    }
  }

  /** Keeps the open waits: a step's next event (approved, rejected, timed out, skipped...) ends its wait. */
  private take(event: StoredEvent): void {
    if (event.type === 'run.cancelled') this.waits.clear();
    if (!('stepId' in event) || event.stepId === undefined) return;
    if (event.type === 'step.waiting') this.waits.set(event.stepId, event);
    else this.waits.delete(event.stepId);
    if (event.type === 'step.skipped' && !this.options.list)
      this.options.out.write(`${clockTime(event.at)} ${event.stepId}: ${skipCause(event).text}\n`);
  }

  /** The WAITING line and commands `baton check` prints, then the wait's capability URLs, if any. */
  private waitingText(event: WaitingEvent): string[] {
    const waiting = {
      runId: this.runId,
      planName: this.plan.name,
      stepId: event.stepId,
      waitingFor: event.waitingFor,
      timeoutAt: event.timeoutAt,
      since: event.at,
    };
    const lines = waitingLines([{ waiting, step: this.steps.get(event.stepId) }], 1)
      .trimEnd()
      .split('\n');
    const wait = { runId: this.runId, stepId: event.stepId, waitSeq: event.seq };
    const urls = waitUrlLines(this.options.env, this.options.home, wait, event.for);
    return [...lines, ...urls.map((line) => `  ${line}`)];
  }
}
