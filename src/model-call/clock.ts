/** Time as the harness sees it: injectable so backoff and Retry-After are tested without sleeping. */
export interface HarnessClock {
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: HarnessClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/**
 * A clock whose sleeps are `scale` times shorter than asked, and whose `now` advances by the time
 * asked for: for benchmarks and tests that must honour long Retry-After values quickly.
 */
export function scaledClock(scale: number): HarnessClock & { slept: number[] } {
  let offset = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => Date.now() + offset,
    async sleep(ms, signal) {
      slept.push(ms);
      offset += ms - ms * scale;
      await systemClock.sleep(ms * scale, signal);
    },
  };
}
