/** The signals that stop a foreground command, and the exit codes a shell gives them (128 + number). */
export const STOP_SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

export type StopSignal = keyof typeof STOP_SIGNAL_EXIT;

interface StopSignalWatch {
  /** Resolves with the first SIGINT or SIGTERM received; never rejects. */
  received: Promise<StopSignal>;
  /** Removes the handlers (a later signal has its default effect again). */
  remove(): void;
}

/**
 * Catches SIGINT and SIGTERM (so the process is not killed by them) and reports the first one.
 * Later signals are caught too, until `remove()`: the caller decides how to stop.
 */
export function watchStopSignals(): StopSignalWatch {
  let report: (signal: StopSignal) => void = () => {};
  const received = new Promise<StopSignal>((resolve) => {
    report = resolve;
  });
  const onInt = () => report('SIGINT');
  const onTerm = () => report('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    received,
    remove: () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}
