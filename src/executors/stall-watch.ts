import { latestChangeUnder } from './workspace-activity.js';

/** What a stall watch looks at and whom it tells (see RunProcessOptions.stallTimeoutMs). */
export interface StallWatchOptions {
  stallTimeoutMs: number;
  /** Called once the child has been silent for half the timeout (again after new output). */
  onStalling?: (silentMs: number) => void;
  /** A change of a file under this folder counts as output; `ignore`d paths under it do not. */
  watchFolder?: string;
  watchIgnore?: readonly string[];
  /** Whether the child still runs: a watch does nothing once it has exited or is being stopped. */
  running: () => boolean;
  /** Called once, when the child has been silent for the whole timeout. */
  onStalled: () => void;
  /** While true the child waits for someone else (a person's tool approval): its silence counts from after. */
  paused?: () => boolean;
}

/**
 * The stall watchdog of one process: when it last printed something new (`heard`), looked at every
 * second at most (a quarter of the timeout for a short one). A chunk equal to the one before it is
 * a notice repeated, not progress. A file changed under `watchFolder` counts as output too; it is
 * looked at only while the child is silent past half its timeout, at most every tenth of it, and
 * once more before the child is called stalled.
 */
export class StallWatch {
  private lastOutput = performance.now();
  private warned = false;
  private previous: Buffer | undefined;
  private lastScan = Number.NEGATIVE_INFINITY;
  private looking = false;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: StallWatchOptions) {
    const every = Math.max(10, Math.min(1000, Math.floor(options.stallTimeoutMs / 4)));
    this.timer = setInterval(() => this.tick(), every);
  }

  /** A chunk of the child's output. */
  heard(chunk: Buffer): void {
    if (this.previous?.equals(chunk)) return;
    this.previous = chunk;
    this.lastOutput = performance.now();
    this.warned = false;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    if (this.looking || !this.options.running()) return;
    this.looking = true;
    this.lookAtSilence()
      .catch(() => {
        // A failed look (or report) changes nothing of the watch.
      })
      .finally(() => {
        this.looking = false;
      });
  }

  private async lookAtSilence(): Promise<void> {
    if (this.options.paused?.()) {
      this.lastOutput = performance.now();
      this.warned = false;
      return;
    }
    const stallMs = this.options.stallTimeoutMs;
    let silent = performance.now() - this.lastOutput;
    if (silent < stallMs / 2) return;
    if (silent >= stallMs || performance.now() - this.lastScan >= Math.max(1000, stallMs / 10)) {
      await this.filesChanged();
      silent = performance.now() - this.lastOutput;
    }
    if (!this.options.running()) return;
    if (silent >= stallMs) {
      this.stop();
      this.options.onStalled();
    } else if (!this.warned && silent >= stallMs / 2) {
      this.warned = true;
      this.options.onStalling?.(Math.round(silent));
    }
  }

  private async filesChanged(): Promise<void> {
    if (this.options.watchFolder === undefined) return;
    this.lastScan = performance.now();
    const changedAt = await latestChangeUnder(this.options.watchFolder, this.options.watchIgnore);
    // mtime is wall clock: how long ago, on the monotonic clock of lastOutput.
    const at = performance.now() - (Date.now() - changedAt);
    if (at > this.lastOutput) {
      this.lastOutput = Math.min(at, performance.now());
      this.warned = false;
    }
  }
}
