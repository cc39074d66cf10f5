import { STOP_SIGNAL_EXIT, watchStopSignals } from './stop-signal.js';
import { fitToWidth } from './text-width.js';

/** How often a watch (`status --watch`, `timeline --watch`, `logs -f`) reads the store. */
const WATCH_POLL_MS = 300;

/**
 * Calls `tick` every `pollMs` until it returns an exit code. Ctrl-C (SIGINT) or SIGTERM ends the
 * watch at once with 130 or 143, after `onStop` (which restores the terminal).
 */
export async function watchUntil(
  tick: () => Promise<number | null>,
  options: { pollMs?: number; onStop?: () => void } = {},
): Promise<number> {
  const signals = watchStopSignals();
  let timer: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      const code = await tick();
      if (code !== null) return code;
      const pause = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), options.pollMs ?? WATCH_POLL_MS);
      });
      const signal = await Promise.race([pause, signals.received]);
      clearTimeout(timer);
      if (signal) {
        options.onStop?.();
        return STOP_SIGNAL_EXIT[signal];
      }
    }
  } finally {
    clearTimeout(timer);
    signals.remove();
  }
}

/**
 * A view that changes: on a TTY redrawn in place (the cursor hidden meanwhile, each line cut to the
 * terminal's width so none wraps); elsewhere (a pipe, a file) printed again whole, after a blank
 * line, each time it differs from the last one printed, with no cursor codes.
 */
export class LiveView {
  private readonly inPlace: boolean;
  private drawn = 0;
  private last: string | null = null;

  constructor(private readonly out: NodeJS.WriteStream) {
    this.inPlace = out.isTTY === true;
  }

  show(lines: readonly string[]): void {
    const text = lines.join('\n');
    if (text === this.last) return;
    if (!this.inPlace) {
      this.out.write(`${this.last === null ? '' : '\n'}${text}\n`);
      this.last = text;
      return;
    }
    this.last = text;
    const width = Math.max(20, (this.out.columns || 100) - 1);
    // Up to the first line drawn, clear from there down, draw again.
    const up = this.drawn > 0 ? `\x1b[${this.drawn}F\x1b[0J` : '\x1b[?25l';
    this.out.write(`${up}${lines.map((line) => fitToWidth(line, width)).join('\n')}\n`);
    this.drawn = lines.length;
  }

  /** Shows the cursor again (a no-op off a TTY); call it however the watch ends. */
  close(): void {
    if (this.inPlace && this.drawn > 0) this.out.write('\x1b[?25h');
    this.drawn = 0;
  }
}
