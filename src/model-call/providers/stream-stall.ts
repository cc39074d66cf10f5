import { streamStallMessage } from '../../core/stall-message.js';
import { ModelCallError } from '../types.js';

/**
 * The silence watch of one streamed request (a model step's `stallTimeoutMs`): `signal` goes to
 * the SDK in place of the caller's (which it follows), every event received calls `seen()`, and
 * after `ms` without one the request is aborted; `failure()` then says so, as a timeout (transient:
 * the request is sent again within the call's retries), mid-stream when part of it had arrived.
 * One timer, re-armed when it fires rather than at each event.
 */
export class StreamStall {
  private readonly controller = new AbortController();
  private last = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private received = false;
  private unfollow: () => void = () => undefined;
  stalled = false;

  constructor(
    private readonly ms: number,
    outer: AbortSignal | undefined,
  ) {
    if (outer?.aborted) this.controller.abort(outer.reason);
    else if (outer) {
      const follow = () => this.controller.abort(outer.reason);
      outer.addEventListener('abort', follow, { once: true });
      this.unfollow = () => outer.removeEventListener('abort', follow);
    }
    this.arm(ms);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  seen(): void {
    this.last = Date.now();
    this.received = true;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.unfollow();
  }

  failure(cause: unknown): ModelCallError {
    return new ModelCallError(streamStallMessage(this.ms), {
      timedOut: true,
      midStream: this.received,
      cause,
    });
  }

  private arm(inMs: number): void {
    this.timer = setTimeout(
      () => {
        const silent = Date.now() - this.last;
        if (silent < this.ms) {
          this.arm(this.ms - silent);
          return;
        }
        this.stalled = true;
        this.controller.abort(new DOMException(streamStallMessage(this.ms), 'TimeoutError'));
      },
      Math.max(1, inMs),
    );
  }
}
