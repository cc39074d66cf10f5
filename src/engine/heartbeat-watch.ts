/**
 * The heartbeat watch of a function step with `heartbeatTimeoutMs`: the function says it is alive
 * with `ctx.heartbeat()`; half the timeout without one, `onStalling` (a `step.stalling` event,
 * once per silence); the whole timeout without one, `onStalled` (the attempt is stopped, see
 * attempt-deadline.ts). One timer, re-armed when it fires rather than at each heartbeat: a function
 * may beat in a tight loop for the price of reading the clock.
 */
export class HeartbeatWatch {
  private lastBeat: number;
  private warned = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number,
    private readonly onStalling: (silentMs: number) => void,
    private readonly onStalled: () => void,
  ) {
    this.lastBeat = now();
    this.arm(Math.ceil(timeoutMs / 2));
  }

  beat(): void {
    this.lastBeat = this.now();
    this.warned = false;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(inMs: number): void {
    this.timer = setTimeout(() => this.check(), Math.max(1, inMs));
  }

  private check(): void {
    this.timer = undefined;
    const silent = this.now() - this.lastBeat;
    if (silent >= this.timeoutMs) {
      this.onStalled();
      return;
    }
    const half = Math.ceil(this.timeoutMs / 2);
    if (silent >= half && !this.warned) {
      this.warned = true;
      this.onStalling(silent);
    }
    // Next: the half of a silence begun since (not yet warned of), or the end of this one.
    this.arm(silent >= half ? this.timeoutMs - silent : half - silent);
  }
}
